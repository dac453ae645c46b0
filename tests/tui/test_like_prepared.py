"""The reader builds the like: model in the background once the index is ready, so the first
`m` or `like:#tag` costs what the next ones do."""

from __future__ import annotations

from pathlib import Path

from abstract_reader.search import similar

from .conftest import make_app, settle


async def test_the_like_model_is_built_once_the_index_is_ready(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        index = app.session.index
        assert index is not None
        model = similar._BUILT.get(index)
        assert model is not None  # built before any like: query
        assert similar.for_index(index) is model  # and the search uses that one
        assert model.doc_offsets[-1] == model.doc_terms.size > 0
