"""While the index is built, the status line says how far it got ("indexing 20 / 55…")."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from abstract_reader.search import postings

from .conftest import make_app, settle, until


async def test_the_status_line_shows_indexing_as_a_fraction(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(postings, "CHUNK_DOCS", 10)
    go_on = threading.Event()
    real_add = postings._Builder.add

    def add(builder: postings._Builder, doc0: int, answer: postings._Answer) -> None:
        if builder.papers == 20 and not go_on.is_set():  # the build pauses at 20 papers
            go_on.wait(timeout=60)
        real_add(builder, doc0, answer)

    monkeypatch.setattr(postings._Builder, "add", add)
    app = make_app(tmp_path)  # the 55 bundled abstracts
    async with app.run_test(size=(140, 40)) as pilot:

        def status() -> str:
            return str(app.query_one("#status").render())

        try:
            await until(pilot, lambda: "indexing 20 / 55…" in status(), timeout=60)
        finally:
            go_on.set()
        await settle(app, pilot)
        await until(pilot, lambda: app.session.index is not None)
        assert "indexing" not in status()
