"""While the index is built, the status line says how far it got ("indexing 20 / 55…")."""

from __future__ import annotations

from pathlib import Path

import pytest

from .conftest import make_app, pause_index_build, settle, until


async def test_the_status_line_shows_indexing_as_a_fraction(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    go_on = pause_index_build(monkeypatch)  # the build pauses at 20 papers
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
