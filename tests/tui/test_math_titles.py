"""A title with math (`meta --title 'Q&A for $k$-input gates'`) is drawn rendered in the list,
as the paper view, text and Markdown citations give it — not as raw ``$k$`` (QA s17 #14);
the library keeps the title as typed."""

from __future__ import annotations

from pathlib import Path

from abstract_reader.corpus import load_corpus
from abstract_reader.library import Library, Metadata
from abstract_reader.tui.widgets.paper_list import PaperList

from ..conftest import write_dump
from .conftest import list_lines, make_app, settle, type_filter, view_text

WIDE = (140, 40)
STORED = r"Q&A at 100% for $k$-input gates in $O(\sqrt{n})$ time"
SHOWN = "Q&A at 100% for k-input gates in O(√n) time"


async def test_the_list_draws_a_title_s_math_rendered(tmp_path: Path) -> None:
    dump = write_dump(
        tmp_path / "d.txt",
        "We study threshold gates with many inputs and their circuit complexity.",
        "Graph networks pass messages between nodes.",
    )
    paper_id = load_corpus([dump]).papers[0].id
    Library(tmp_path / "lib.sqlite3").set_metadata(paper_id, Metadata(title=STORED))
    app = make_app(tmp_path, [dump])
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        rows = [line for line in list_lines(app) if line.strip()]
        assert any(SHOWN in row for row in rows), rows
        assert not any("$" in row for row in rows)
        await type_filter(app, pilot, "gates")
        row = app.query_one(PaperList).source.row(0)
        assert row.title == SHOWN
        assert [row.title[s:e] for s, e in row.spans] == ["gates"]  # the match, marked
        view = view_text(app)
        assert SHOWN in view and "$k$" not in view
        assert app.library.snapshot.metadata[paper_id].title == STORED  # stored as typed
