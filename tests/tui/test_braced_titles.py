"""A title saved with BibTeX's case-protection braces (`meta --title 'A Dataset for {GAN}
Background'`) is shown without them in the list and the paper view; the library keeps them."""

from __future__ import annotations

from pathlib import Path

from abstract_reader.corpus import load_corpus
from abstract_reader.library import Library, Metadata
from abstract_reader.tui.widgets.paper_list import PaperList

from ..conftest import write_dump
from .conftest import list_lines, make_app, settle, type_filter, view_text

WIDE = (140, 40)
STORED = "Sparkle: A Dataset for {GAN} Background"
SHOWN = "Sparkle: A Dataset for GAN Background"


async def test_list_and_view_show_a_braced_title_without_braces(tmp_path: Path) -> None:
    dump = write_dump(
        tmp_path / "d.txt",
        "We release a dataset of generated backgrounds for robust segmentation.",
        "Graph networks pass messages between nodes.",
    )
    paper_id = load_corpus([dump]).papers[0].id
    Library(tmp_path / "lib.sqlite3").set_metadata(paper_id, Metadata(title=STORED))
    app = make_app(tmp_path, [dump])
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        await type_filter(app, pilot, "gan")
        rows = [line for line in list_lines(app) if line.strip()]
        assert len(rows) == 1 and SHOWN in rows[0] and "{" not in rows[0]
        row = app.query_one(PaperList).source.row(0)
        assert [row.title[s:e] for s, e in row.spans] == ["GAN"]  # the match, marked
        view = view_text(app)
        assert SHOWN in view and "{GAN}" not in view
        assert app.library.snapshot.metadata[paper_id].title == STORED  # stored as typed
