"""The reader builds the like: model in the background once the index is ready, so the first
`m` or `like:#tag` costs what the next ones do."""

from __future__ import annotations

from pathlib import Path

import pytest

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


async def test_background_work_waits_while_a_query_is_typed_not_after(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The like model's build waits while keys are typed into the filter (the searches of
    those keys come first), and goes on as soon as the filter is left: an `m` pressed right
    after finds it nearer done."""
    from abstract_reader.tui.screens import main

    monkeypatch.setattr(main, "KEYS_QUIET_S", 3600.0)  # every key counts as just typed
    app = make_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        screen = app.main
        await pilot.press("slash", "r", "o")
        assert screen.keys_arriving()
        await pilot.press("enter")  # the list has the focus: the query is typed
        await settle(app, pilot)
        assert not screen.keys_arriving()
        await pilot.press("j", "k")  # keys in the list run no search
        assert not screen.keys_arriving()
        await pilot.press("slash", "b")
        assert screen.keys_arriving()
