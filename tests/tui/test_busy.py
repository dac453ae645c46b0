"""The reader while another program holds the library's write lock."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from abstract_reader.tui.widgets.paper_list import PaperList

from .conftest import make_app, settle, until

WIDE = (140, 40)


async def test_a_bookmark_made_while_another_program_writes_is_kept_after_a_short_wait(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The reader writes on its UI thread: it must not hang for the library's long wait
    (30 s, for the CLI) — it gives up after a moment, says so, and tries once more."""
    monkeypatch.delenv("ABSTRACT_READER_BUSY_TIMEOUT", raising=False)
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        paper_id = app.query_one(PaperList).current_id
        other = sqlite3.connect(tmp_path / "lib.sqlite3", isolation_level=None)
        try:
            other.execute("BEGIN IMMEDIATE")  # another program, mid-write
            await pilot.press("b")
            messages = [n.message for n in app._notifications]
            assert any(
                "gave up after 2.5 s and changed nothing. Trying again in 2 s." in m
                for m in messages
            ), messages
            assert paper_id not in app.library.snapshot.bookmarks
        finally:
            other.execute("ROLLBACK")
            other.close()
        await until(pilot, lambda: paper_id in app.library.snapshot.bookmarks)
        assert app.query_one(PaperList).source.row(0).bookmarked
