"""The "recently tagged or bookmarked" order follows other writers: a paper tagged or
bookmarked by another process moves to the top while the reader runs, the cursor kept on its
paper."""

from __future__ import annotations

from pathlib import Path

from abstract_reader.library import Library
from abstract_reader.tui.app import ReaderApp
from abstract_reader.tui.widgets.paper_list import PaperList

from ..conftest import cli
from .conftest import make_app, settle, until

WIDE = (140, 40)


def _rows(app: ReaderApp) -> list[str]:
    source = app.query_one(PaperList).source
    return [source.row(i).paper_id for i in range(len(source))]


def _status(app: ReaderApp) -> str:
    return str(app.main.query_one("#status").render())


async def test_a_paper_tagged_elsewhere_moves_to_the_top(tmp_path: Path) -> None:
    db = tmp_path / "lib.sqlite3"
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        dump_order = [p.id for p in app.session.corpus.papers]
        await pilot.press("s", "s", "s")  # title, year, recent (no query: no dump-order step)
        await settle(app, pilot)
        assert "sorted by recently tagged or bookmarked" in _status(app)
        assert _rows(app) == dump_order  # nothing tagged or bookmarked yet
        await pilot.press("j", "j", "j")
        kept = app.query_one(PaperList).current_id
        assert kept == dump_order[3]

        tagged = dump_order[30]
        with Library(db) as other:  # another process's store on the same file
            other.add_tags([tagged], ["from elsewhere"])
        await until(pilot, lambda: _rows(app)[0] == tagged)
        assert _rows(app)[1:] == [pid for pid in dump_order if pid != tagged]
        assert app.query_one(PaperList).current_id == kept
        assert app.query_one(PaperList).cursor == 4  # its paper, one row lower now

        bookmarked = dump_order[50]
        result = cli("bookmark", bookmarked, db=db)  # the command line, meanwhile
        assert result.returncode == 0, result.stderr
        await until(pilot, lambda: _rows(app)[:2] == [bookmarked, tagged])
        assert app.query_one(PaperList).current_id == kept

        with Library(db) as other:  # the tag goes: the paper goes back to its place
            other.remove_tags([tagged], ["from elsewhere"])
        await until(pilot, lambda: _rows(app)[1] != tagged)
        assert _rows(app) == [bookmarked] + [pid for pid in dump_order if pid != bookmarked]
        assert app.query_one(PaperList).current_id == kept


async def test_the_order_saved_under_its_old_name_still_applies(tmp_path: Path) -> None:
    """A library written before `recent` existed says `sort = bookmarked`: the reader starts
    in the recent order, not in relevance."""
    db = tmp_path / "lib.sqlite3"
    with Library(db) as lib:
        lib.set_setting("sort", "bookmarked")
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        bookmarked = app.session.corpus.papers[40].id
        assert cli("bookmark", bookmarked, db=db).returncode == 0
        await until(pilot, lambda: _rows(app)[0] == bookmarked)
        assert "sorted by recently tagged or bookmarked" in _status(app)
