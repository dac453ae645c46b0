"""The reader's filter on years and on tags as a user meets them: a year set elsewhere (the
CLI's ``meta --year``) changes what ``year:`` shows while the reader is open, a reversed year
range is the same years (nothing ignored), and the tag list's Enter fills the filter with a
query that finds a tag with a ``"`` or an ``@`` in it."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Input

from abstract_reader.corpus import Corpus
from abstract_reader.library import Library, Metadata
from abstract_reader.tui.screens.pickers import TagList

from .conftest import list_lines, listed, make_app, settle, type_filter, until

WIDE = (140, 40)


def _status(app: object) -> str:
    return str(app.main.query_one("#status").render())  # type: ignore[attr-defined]


async def test_a_year_set_elsewhere_moves_the_paper_between_year_filters(
    tmp_path: Path,
) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        paper = app.session.corpus.papers[7]
        await type_filter(app, pilot, "year:2025")
        assert listed(app) == []
        with Library(tmp_path / "lib.sqlite3") as cli:  # `abstract-reader meta ID --year 2025`
            cli.set_metadata(paper.id, Metadata(year=2025))
        await until(pilot, lambda: listed(app) == [paper.title])
        assert "NeurIPS 2025" in list_lines(app)[0]
        await pilot.press("ctrl+u", *"year:2026")
        await settle(app, pilot)
        assert len(listed(app)) == 54 and paper.title not in listed(app)
        with Library(tmp_path / "lib.sqlite3") as cli:  # `meta ID --clear`
            cli.set_metadata(paper.id, Metadata())
        await until(pilot, lambda: len(listed(app)) == 55)


async def test_a_year_set_before_the_reader_opens_is_filtered_on(
    tmp_path: Path, seeds: Corpus
) -> None:
    # (The year was set on the open reader's library behind its back, and found only if
    # the library's 1 s poll came before the search: typed quickly, it did not.)
    paper = seeds.papers[3]
    with Library(tmp_path / "lib.sqlite3") as cli:  # `abstract-reader meta ID --year 2024`
        cli.set_metadata(paper.id, Metadata(year=2024))
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        await type_filter(app, pilot, "year:2024")
        assert listed(app) == [paper.title]


async def test_a_reversed_year_range_shows_those_years_and_ignores_nothing(
    tmp_path: Path,
) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        await type_filter(app, pilot, "year:2026-2024")
        assert len(listed(app)) == 55
        assert "ignored" not in _status(app)
        await pilot.press("ctrl+u", *"year:2025-2020")
        await settle(app, pilot)
        assert listed(app) == [] and "ignored" not in _status(app)


@pytest.mark.parametrize(
    ("tag", "query"),
    [
        ('a"b', '#a"b'),
        ('say "hi" now', '#"say \\"hi\\" now"'),
        ('"x', '#"\\"x"'),
        # an @ inside a tag is no saved search (QA: "0 of 55 · no saved search @click")
        ("[@click=app.quit]imp[/]", "#[@click=app.quit]imp[/]"),
        ("see @1 [b]", '#"see @1 [b]"'),
    ],
)
async def test_the_tag_list_filters_to_a_tag_with_a_quote_or_an_at(
    tmp_path: Path, tag: str, query: str
) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        paper = app.session.corpus.papers[9]
        app.library.add_tags([paper.id], [tag])
        await pilot.press("T")
        assert isinstance(app.screen, TagList)
        await pilot.press("enter")
        await settle(app, pilot)
        assert app.query_one("#filter", Input).value == query
        assert listed(app) == [paper.title]
        assert "ignored" not in _status(app) and "saved search" not in _status(app)
        assert _status(app).startswith("1 of 55")


async def test_a_tag_no_paper_has_is_said_in_the_status_line(tmp_path: Path) -> None:
    """QA (s17, 13): ``#readng`` showed 0 of 55 with no hint; ``like:#nosuch`` showed all
    55, "ranked like #nosuch (none)"."""
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        paper = app.session.corpus.papers[2]
        with Library(tmp_path / "lib.sqlite3") as cli:  # `abstract-reader tag ID reading`
            cli.add_tags([paper.id], ["reading"])
        await settle(app, pilot)
        await type_filter(app, pilot, "#reading")
        await until(pilot, lambda: listed(app) == [paper.title])
        assert "tagged" not in _status(app)
        await pilot.press("ctrl+u", *"#readng")
        await settle(app, pilot)
        assert listed(app) == []
        assert "no paper is tagged #readng (did you mean #reading?)" in _status(app)
        await pilot.press("ctrl+u", *"like:#nosuch")
        await settle(app, pilot)
        assert listed(app) == []  # no paper, rather than every paper ranked by nothing
        status = _status(app)
        assert "0 of 55" in status and "no paper is tagged #nosuch (tags: #reading)" in status
        assert "ranked like" not in status
