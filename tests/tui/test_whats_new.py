"""What's new in the reader: `is:new` across two sessions of the app on one library."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from abstract_reader import seen
from abstract_reader.corpus import Corpus, load_corpus
from abstract_reader.library import Library
from abstract_reader.search import SearchIndex
from abstract_reader.tui.widgets.paper_list import PaperList

from ..conftest import SEEDS, write_dump
from .conftest import listed, make_app, settle, type_filter, until, view_text

WIDE = (140, 40)


async def test_is_new_in_the_reader_across_two_sessions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dumps = tmp_path / "dumps"
    dumps.mkdir()
    write_dump(dumps / "icml.txt", "Old paper about graphs.", "Shared paper on kernels.")
    clock = [datetime(2026, 1, 1, 9, tzinfo=UTC)]
    monkeypatch.setattr(seen, "now", lambda: clock[0])

    app = make_app(tmp_path, [dumps])
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        await type_filter(app, pilot, "is:new")
        assert listed(app) == []  # the first session: nothing is new yet

    # a day later, a new dump sits next to the old one
    clock[0] += timedelta(days=1)
    write_dump(dumps / "neurips.txt", "Brand new paper on robots.", "Shared paper on kernels.")
    app = make_app(tmp_path, [dumps])
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        await type_filter(app, pilot, "is:new")
        await until(pilot, lambda: len(listed(app)) == 1)
        assert listed(app)[0].startswith("Brand new paper")
        status = str(app.query_one("#status").render())
        assert "1 of 3" in status

    # what the CLI answers for the same library agrees (`list -q is:new`)
    library = Library(tmp_path / "lib.sqlite3")
    corpus = load_corpus([dumps])
    result = SearchIndex(corpus).search("is:new", seen.WithNew(library, corpus))
    assert [h.paper.abstract for h in result] == ["Brand new paper on robots."]
    library.close()


async def test_help_wraps_with_a_hanging_indent_at_70x24(tmp_path: Path) -> None:
    from abstract_reader.tui.commands import help_rows
    from abstract_reader.tui.screens.help import KEY_COLUMN, HelpScreen

    app = make_app(tmp_path)
    async with app.run_test(size=(70, 24)) as pilot:
        await settle(app, pilot)
        await pilot.press("question_mark")
        await until(pilot, lambda: isinstance(app.screen, HelpScreen))
        await pilot.pause()
        help_text = app.screen.query_one("#help-text")
        width = help_text.content_region.width
        assert 40 < width <= 70
        lines = [help_text.render_line(y).text.rstrip() for y in range(help_text.size.height)]
        headers = {section for section, _ in help_rows()} | {"The filter's query language"}
        indent = " " * (2 + KEY_COLUMN + 1)
        wrapped = 0
        for before, line in itertools.pairwise(lines):
            if not line or line in headers or line.endswith("closes this screen."):
                continue
            assert line.startswith("  "), line  # never continued at column 0
            if before.startswith("  ") and not line.startswith("  " + " " * 3):
                continue  # a new row (its key at column 2)
            wrapped += 1
        assert wrapped > 0  # some descriptions needed two lines at 70 columns
        # a continuation sits under the description column
        longest = max((what for _, rows in help_rows() for _, what in rows), key=len)
        first_words = longest.split()[0]
        at = next(i for i, line in enumerate(lines) if first_words in line and "  " in line)
        assert lines[at + 1].startswith(indent) and lines[at + 1][len(indent)] != " "


async def test_match_metadata_key_writes_real_metadata_undoably(
    tmp_path: Path, seeds: Corpus
) -> None:
    import json

    # the abstracts as another source gives them: a sentence added in the camera-ready (an
    # identical abstract would load as the record's paper itself, with its metadata)
    chosen = [p for p in seeds.papers if p.title_derived][:3]
    added = " Code and data are available at https://github.com/anonymous/release."
    records = [
        {
            "id": f"rec{n}",
            "type": "paper-conference",
            "title": f"Real Title {n}",
            "author": [{"given": "Ada", "family": "Lovelace"}],
            "issued": {"date-parts": [[2026]]},
            "abstract": paper.abstract + added,
        }
        for n, paper in enumerate(chosen)
    ]
    meta = tmp_path / "refs.json"
    meta.write_text(json.dumps(records), encoding="utf-8")
    app = make_app(tmp_path, [SEEDS, meta])
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        await pilot.press("M")
        await settle(app, pilot)
        await until(pilot, lambda: len(app.library.snapshot.metadata) == 3)

        def toasts() -> str:
            return " ".join(n.message for n in app._notifications)

        await until(pilot, lambda: "matched (" in toasts())
        assert "3 matched (3 written)" in toasts() and "unmatched" in toasts()
        assert {m.title for m in app.library.snapshot.metadata.values()} == {
            "Real Title 0",
            "Real Title 1",
            "Real Title 2",
        }
        assert "Real Title 0" in listed(app)
        # the view says where the metadata came from
        app.query_one(PaperList).move(seeds.papers.index(chosen[0]), by_user=True)
        await until(pilot, lambda: "Real Title 0" in view_text(app))
        assert "metadata: csl-json record rec0" in view_text(app)
        assert "(matched, score" in view_text(app)
        await pilot.press("u")  # one change undone, like any other
        await settle(app, pilot)
        await until(pilot, lambda: len(app.library.snapshot.metadata) == 2)


async def test_match_metadata_key_writes_a_record_loaded_with_the_dumps(
    tmp_path: Path, seeds: Corpus
) -> None:
    """A BibTeX record with a bundled paper's very abstract, loaded beside the dumps, titles
    that paper in memory; M writes it to the library as `match` does (QA: "0 matched (0
    written)", and the title was gone when the reader opened without the file)."""
    paper = next(p for p in seeds.papers if "Embodied Agents System" in p.abstract)
    bib = tmp_path / "m.bib"
    bib.write_text(
        "@inproceedings{eas2026,\n  title = {Resilience of Embodied Agents},\n"
        "  author = {Lovelace, Ada and Turing, Alan},\n  year = {2026},\n"
        f"  abstract = {{{paper.abstract}}}\n}}\n",
        encoding="utf-8",
    )
    app = make_app(tmp_path, [SEEDS, bib])
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        assert "Resilience of Embodied Agents" in listed(app)  # (from the file, in memory)
        assert app.library.snapshot.metadata == {}
        await pilot.press("M")

        def toasts() -> str:
            return " ".join(str(n.message) for n in app._notifications)

        await until(pilot, lambda: "matched (" in toasts())
        assert "1 matched (1 written)" in toasts()
        stored = app.library.snapshot.metadata[paper.id]
        assert stored.title == "Resilience of Embodied Agents"
        assert stored.authors == ("Ada Lovelace", "Alan Turing")
    again = make_app(tmp_path, [SEEDS])  # next time, without the file: the title is kept
    async with again.run_test(size=WIDE) as pilot:
        await settle(again, pilot)
        assert "Resilience of Embodied Agents" in listed(again)


async def test_metadata_editor_offers_candidates_to_accept(tmp_path: Path, seeds: Corpus) -> None:
    import json

    from textual.widgets import Static

    from abstract_reader.tui.screens.editors import MetadataEditor

    paper = next(p for p in seeds.papers if p.title_derived)
    added = " Code and data are available at https://github.com/anonymous/release."
    records = [
        {
            "id": "rec-good",
            "title": "The Real Title",
            "author": [{"given": "Ada", "family": "Lovelace"}],
            "issued": {"date-parts": [[2025]]},
            "DOI": "10.5555/good",
            "abstract": paper.abstract + added,
        }
    ]
    meta = tmp_path / "refs.json"
    meta.write_text(json.dumps(records), encoding="utf-8")
    app = make_app(tmp_path, [SEEDS, meta])
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        app.query_one(PaperList).move(seeds.papers.index(paper), by_user=True)
        await pilot.pause()
        await pilot.press("e")
        await until(pilot, lambda: isinstance(app.screen, MetadataEditor))
        box = app.screen.query_one("#meta-candidates", Static)
        await until(pilot, lambda: "The Real Title" in str(box.render()))
        shown = str(box.render())
        assert "csl-json:rec-good" in shown and "ctrl+y" in shown
        score = float(shown.split("The Real Title", maxsplit=1)[0].rsplit(maxsplit=1)[-1])
        assert score >= 90
        await pilot.press("ctrl+y")  # fills the fields
        await pilot.pause()
        assert app.screen.query_one("#meta-title").value == "The Real Title"
        await pilot.press("ctrl+s")  # saving writes as usual
        await until(pilot, lambda: paper.id in app.library.snapshot.metadata)
        stored = app.library.snapshot.metadata[paper.id]
        assert stored.title == "The Real Title" and stored.authors == ("Ada Lovelace",)
        # the record names no venue: its year is not put beside the dump's NeurIPS (which
        # would cite "NeurIPS 2025" for a NeurIPS 2026 paper); the paper keeps its own
        assert stored.year is None and stored.doi == "10.5555/good"


async def test_match_metadata_key_with_no_dump_loaded_says_how_to_load_one(
    tmp_path: Path, seeds: Corpus
) -> None:
    """Only metadata files loaded (`abstract-reader mine.bib`): M said "0 matched (0
    written), 0 ambiguous, 0 unmatched" with no hint that the dumps must be loaded too."""
    paper = seeds.papers[0]
    bib = tmp_path / "m.bib"
    bib.write_text(
        "@article{x2026,\n  title = {A Title},\n  year = {2026},\n"
        f"  abstract = {{{paper.abstract} More.}}\n}}\n",
        encoding="utf-8",
    )
    app = make_app(tmp_path, [bib])
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        await pilot.press("M")

        def toasts() -> str:
            return " ".join(str(n.message) for n in app._notifications)

        await until(pilot, lambda: "No dump is loaded" in toasts())
        assert "abstract-reader --bundled" in toasts() and "matched (" not in toasts()
        assert app.library.snapshot.metadata == {}
