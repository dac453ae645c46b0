"""The status line keeps what matters visible at any width: progress first, then the count,
the query's state and the order; long parts are shortened (ending in "…" when a text is
cut), what still does not fit is dropped from the least important end, and the cut shows
"…" (never a part cut mid-word without it); the first frames agree with each other."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest
from rich.cells import cell_len

from abstract_reader.corpus import Corpus, CorpusBuilder
from abstract_reader.library import Library
from abstract_reader.search import postings
from abstract_reader.session import dump_set_key, save_place
from abstract_reader.status import forms_of
from abstract_reader.tui.app import ReaderApp
from abstract_reader.tui.widgets.paper_list import PaperList
from abstract_reader.tui.widgets.status_line import StatusLine, fit_status

from ..conftest import write_dump
from .conftest import make_app, pause_index_build, settle, type_filter, until

SIZES = [(70, 24), (120, 40)]


def shown(app: ReaderApp) -> str:
    return str(app.query_one("#status").render())


def assert_fits(app: ReaderApp) -> None:
    """On one line, each part whole or in one of its shorter forms, in order; a cut ends
    in " · …"."""
    status = app.query_one("#status", StatusLine)
    text = shown(app)
    assert cell_len(text) <= status.size.width
    pieces = text.split(" · ")
    if pieces[-1] == "…":
        pieces.pop()
    else:
        assert len(pieces) == len(status.parts)
    for piece, part in zip(pieces, status.parts, strict=False):
        assert piece in forms_of(part)


@pytest.mark.parametrize("size", SIZES)
async def test_indexing_progress_shows_first_and_the_line_is_cut_between_parts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, size: tuple[int, int]
) -> None:
    with Library(tmp_path / "lib.sqlite3") as lib:  # a long line: a sort, a filter, @unknown
        lib.set_setting("sort", "recent")
        save_place(lib, dump_set_key(None), "graph @nosuchsearch robust", None)
    go_on = pause_index_build(monkeypatch)
    app = make_app(tmp_path)  # the 55 bundled abstracts
    async with app.run_test(size=size) as pilot:
        try:
            await until(pilot, lambda: "indexing 20 / 55…" in shown(app), timeout=60)
            text = shown(app)
            assert text.startswith("indexing 20 / 55… (filter waits) · 55 papers")
            assert "the filter applies" not in text
            assert_fits(app)
            if size[0] == 70:
                assert text.endswith(" · …")  # the rest did not fit: said, not cut mid-word
            else:  # the order stays, shortened
                assert "no saved search @nosuchsearch · by recently tagged/bookmarked" in text
        finally:
            go_on.set()
        await settle(app, pilot)
        await until(pilot, lambda: app.session.index is not None)
        text = shown(app)
        assert "indexing" not in text
        assert text.startswith("0 of 55")  # the unknown saved search matches nothing
        assert_fits(app)
        if size[0] == 120:
            assert "no saved search @nosuchsearch" in text
            assert "sorted by recently tagged or bookmarked" in text


async def test_loading_progress_is_first_and_knows_the_file_total_from_the_first_frame(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The file number and the paper count agree: while the second dump's rows come in,
    the line names the second file (not "1/2 files" with more than one file's papers)."""
    monkeypatch.setattr("abstract_reader.tui.screens.main.SYNC_LOAD_BYTES", 0)
    dumps = [
        write_dump(tmp_path / f"d{i}.txt", *[f"Abstract {i}-{n} on graphs." for n in range(50)])
        for i in range(2)
    ]
    go_on = threading.Event()
    real = CorpusBuilder.add_file_in_batches

    def add_file_in_batches(builder: CorpusBuilder, path: Path, *args: Any, **kwargs: Any) -> Any:
        for n, rows in enumerate(real(builder, path, batch=20)):
            yield rows
            if path.name == "d1.txt" and n == 0:  # the second file waits after 20 rows
                go_on.wait(timeout=60)

    monkeypatch.setattr(CorpusBuilder, "add_file_in_batches", add_file_in_batches)
    seen: list[tuple[str, ...]] = []
    real_show = StatusLine.show

    def show(status: StatusLine, parts: Any) -> None:
        seen.append(tuple(parts))
        real_show(status, parts)

    monkeypatch.setattr(StatusLine, "show", show)
    app = make_app(tmp_path, dumps)
    async with app.run_test(size=(70, 24)) as pilot:
        try:
            await until(pilot, lambda: "70 papers" in shown(app))
            assert shown(app).startswith("loading file 2/2… · 70 papers")
            assert_fits(app)
        finally:
            go_on.set()
        await settle(app, pilot)
        assert shown(app).startswith("100 papers")
    loading = [parts[0] for parts in seen if parts[0].startswith("loading")]
    assert loading[0] == "loading file 1/2…"  # the total is known before the first file
    assert all(part.startswith(("loading file ", "loading 2/2 files")) for part in loading)
    assert seen[0][:2] == ("loading file 1/2…", "0 papers")
    for parts in seen:  # never more papers than the files named hold
        if parts[0].startswith("loading file 1/2"):
            assert parts[1] in ("0 papers", "20 papers", "40 papers", "50 papers")


def test_fit_status_drops_whole_parts_from_the_end() -> None:
    parts = ["loading 3/20 files…", "9,899 papers", "9,899 unread", "0 bookmarked"]
    assert fit_status(parts, 200) == " · ".join(parts)
    assert fit_status(parts, 50) == "loading 3/20 files… · 9,899 papers · …"
    assert fit_status(parts, 10) == "loading…"  # not even the first part: cut, with "…"
    assert fit_status(["ignored: 論文論文"], 12) == "ignored:…"  # wide characters count twice


WIDTHS = [(120, 40), (100, 30), (80, 24), (70, 24)]


def _order_shown(text: str, forms: tuple[str, ...]) -> bool:
    return any(form in text.split(" · ") for form in forms)


#: How the line begins once `m` ranked the list ("like" alone on the narrowest lines).
RANKED = ("54 of 55 · ranked like ", "54 of 55 · like ")


@pytest.mark.parametrize("size", WIDTHS)
async def test_a_narrow_line_shortens_the_order_instead_of_dropping_it(
    tmp_path: Path, seeds: Corpus, size: tuple[int, int]
) -> None:
    """What order the list is in stays on the line at every width, shortened: a year
    order behind an unknown saved search, and `m`'s "ranked like <paper>"."""
    spike = seeds.resolve("91429572")
    app = make_app(tmp_path)
    async with app.run_test(size=size) as pilot:
        await settle(app, pilot)
        while app.session.sort != "year":
            await pilot.press("s")
        await type_filter(app, pilot, "graph @nosuchsearch")
        await pilot.press("escape")
        await settle(app, pilot)
        text = shown(app)
        assert text.startswith("0 of 55 · no saved search @nosuchsearch · ")
        year = ("sorted by year, newest first", "by year, newest first", "newest first")
        assert _order_shown(text, year), text
        assert_fits(app)
        # `m` on a paper: the list is ranked like it, and the line says so at every width
        await type_filter(app, pilot, "")
        await pilot.press("ctrl+u", "escape")
        await settle(app, pilot)
        paper_list = app.query_one(PaperList)
        position = app.session.position_of(spike.id)
        assert position is not None
        paper_list.move(position, by_user=True)
        await pilot.press("m")
        await settle(app, pilot)
        await until(pilot, lambda: shown(app).startswith(RANKED))
        text = shown(app)
        title_start = spike.title.split()[0].rstrip(":")
        assert f"like {title_start}" in text, text  # the paper named, maybe cut…
        assert_fits(app)
        if size[0] >= 100:  # … and the words that drove the ranking
            assert app.session.result is not None
            assert f"({', '.join(app.session.result.like_words[:3])})" in text


@pytest.mark.parametrize("size", SIZES)
async def test_ranked_like_keeps_the_counts_and_its_words_and_cuts_the_title(
    tmp_path: Path, size: tuple[int, int]
) -> None:
    """`m` at 70 columns: the line kept "ranked like <title>" whole and dropped the words
    that drove the ranking and the library's counts ("54 of 55 · ranked like <title> · …").
    The counts and the words stay; the title is cut at a word, with "…". At 120 the line
    has room for three of the words and the counts."""
    app = make_app(tmp_path)
    async with app.run_test(size=size) as pilot:
        await settle(app, pilot)
        await pilot.press("g", "m")  # the first paper, whose title is long
        await settle(app, pilot)
        await until(pilot, lambda: shown(app).startswith(RANKED))
        text = shown(app)
        assert text.endswith(" · 55 unread · 0 bookmarked"), text
        result = app.session.result
        assert result is not None and result.like_words
        ranked = text.split(" · ")[1]
        first_word = result.ranked_like.split()[2]  # "ranked like <title>"
        # ("like" alone, as in the query, where "ranked like" leaves no room for the counts)
        assert ranked.removeprefix("ranked ").startswith(f"like {first_word}"), text
        if size[0] == 70:  # one word, and the title cut
            assert ranked.endswith(f"… ({result.like_words[0]})"), text
        else:
            assert ranked.endswith(f" ({', '.join(result.like_words[:3])})"), text
        assert_fits(app)


async def test_indexing_says_no_0_of_n_before_its_first_step(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A build with a helper process reports "0 done" while the helper takes its first
    chunks: the line says "indexing…" until papers are done, then the fraction."""
    monkeypatch.setattr(postings, "PARALLEL_MIN_DOCS", 1)  # the helper, as at 100k
    go_on = pause_index_build(monkeypatch, at=(0, 20))
    app = make_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        try:
            await until(pilot, lambda: app.main.index_progress == (0, 55), timeout=60)
            await pilot.pause()
            assert shown(app).startswith("indexing… · 55 papers")
            assert "0 / 55" not in shown(app)
            go_on.set()
            await until(pilot, lambda: "indexing" not in shown(app), timeout=60)
        finally:
            go_on.set()
        await settle(app, pilot)


@pytest.mark.parametrize("size", [(80, 24), (70, 24), (120, 40)])
async def test_a_phrase_checked_in_the_best_papers_only_says_it_is_a_partial_answer(
    tmp_path: Path, size: tuple[int, int]
) -> None:
    """2,600 papers have "of" and "the"; the reader checks the phrase in the 2,000 best of
    them: the line says how many are shown and that the check was partial, not "N of M"."""
    abstracts = [f"Item {n}: of the set, number {n}." for n in range(2_500)]
    abstracts += [f"Item {n}: of course the set, number {n}." for n in range(2_500, 2_600)]
    dump = write_dump(tmp_path / "d.txt", *abstracts)
    app = make_app(tmp_path, [dump])
    async with app.run_test(size=size) as pilot:
        await settle(app, pilot)
        await until(pilot, lambda: app.session.index is not None, timeout=60)
        await type_filter(app, pilot, '"of the"')
        await until(pilot, lambda: "shown" in shown(app), timeout=30)
        text = shown(app)
        count = len(app.session.result or [])
        assert 0 < count <= 2_000
        assert text.startswith(f"{count:,} shown · phrase checked in ")
        assert "2,000" in text and "2,600" in text
        assert "of 2,600 · " not in text.split("phrase")[0]  # not the "N of M" of an answer
        if size[0] >= 80:  # the whole sentence
            assert "phrase checked in the 2,000 best of 2,600 with these words" in text
        else:
            assert "phrase checked in the 2,000 best of 2,600" in text
        assert_fits(app)


def test_fit_status_shortens_facts_before_dropping_them_and_details_give_way() -> None:
    from abstract_reader.status import StatusPart, detail

    parts = [
        StatusPart("99,003 of 99,004"),
        StatusPart("sorted by year, newest first", ["by year, newest first", "newest first"]),
        StatusPart("ranked like A long title of a paper", ["ranked like A long…"]),
        detail("99,004 unread"),
        detail("0 bookmarked"),
    ]
    wide = fit_status(parts, 200)
    assert wide == " · ".join(parts)
    # the facts whole; the details as far as they fit
    assert fit_status(parts, 100) == (
        "99,003 of 99,004 · sorted by year, newest first · ranked like A long title of a paper · …"
    )
    # facts shortened, the first ones longest; details gone
    assert fit_status(parts, 70) == (
        "99,003 of 99,004 · by year, newest first · ranked like A long… · …"
    )
    assert fit_status(parts, 60) == "99,003 of 99,004 · newest first · ranked like A long… · …"
    # a fact that does not fit even shortened goes, with what follows it
    assert fit_status(parts, 40) == "99,003 of 99,004 · newest first · …"


async def test_one_paper_is_counted_in_the_singular(tmp_path: Path) -> None:
    dump = write_dump(tmp_path / "one.txt", "The only abstract of this dump, about robust means.")
    app = make_app(tmp_path, [dump])
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        assert shown(app).startswith("1 paper ·"), shown(app)
