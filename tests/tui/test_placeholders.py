"""A placeholder is never cut by its input's edge: a narrow terminal gets a shorter wording
(the filter's, the tag editor's; the metadata editor's title hint, shown whole below)."""

from __future__ import annotations

from pathlib import Path

import pytest
from rich.cells import cell_len
from textual.widgets import Input, Static

from .conftest import make_app, settle, until


def _fits(field: Input) -> bool:
    return 0 < cell_len(field.placeholder) <= field.content_region.width


@pytest.mark.parametrize("size", [(70, 24), (80, 24), (120, 40)])
async def test_the_filter_and_tag_editor_placeholders_fit(
    tmp_path: Path, size: tuple[int, int]
) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=size) as pilot:
        await settle(app, pilot)
        field = app.query_one("#filter", Input)
        assert _fits(field), field.placeholder
        assert field.placeholder.startswith("/ to filter") and "? for help" in field.placeholder
        if size[0] >= 120:  # room for every kind of term
            assert "is:unread" in field.placeholder
        await pilot.press("t")
        await until(pilot, lambda: bool(app.screen.query("#tag-input")))
        await pilot.pause()
        tag_field = app.screen.query_one("#tag-input", Input)
        assert _fits(tag_field), tag_field.placeholder
        assert tag_field.placeholder.startswith("new tag — Tab completes, Enter adds")
        await pilot.press(*"graphs", "enter")  # it still works as before
        await pilot.pause()
        await pilot.press("enter")  # Enter on empty saves
        await until(pilot, lambda: not app.screen.query("#tag-input"))
        paper = app.main.current_paper()
        assert paper is not None and "graphs" in app.library.snapshot.tags.get(paper.id, [])
        # and the placeholder follows the width when the terminal is resized
        await pilot.resize_terminal(70, 24)
        await pilot.pause()
        assert _fits(field)


@pytest.mark.parametrize("size", [(70, 24), (120, 40)])
async def test_the_title_hint_fits_and_a_long_one_shows_whole_below_the_field(
    tmp_path: Path, size: tuple[int, int]
) -> None:
    """The title from the abstract is the title field's hint; where it does not fit, it is
    never cut ("…"): it shows whole below the field, and the field's hint says so."""
    app = make_app(tmp_path)
    async with app.run_test(size=size) as pilot:
        await settle(app, pilot)
        paper = app.main.current_paper()
        assert paper is not None
        title = app.session.title_of(paper)
        assert 60 < len(title) < 74  # longer than the field at 70 columns, not at 120
        await pilot.press("e")
        await until(pilot, lambda: bool(app.screen.query("#meta-title")))
        await pilot.pause()
        field = app.screen.query_one("#meta-title", Input)
        below = app.screen.query_one("#meta-title-hint", Static)
        assert _fits(field), field.placeholder
        assert "…" not in field.placeholder
        if size[0] == 70:
            assert field.placeholder == "empty: the abstract's title (below)"
            assert below.display and below.region.height >= 2  # wrapped, not cut
            assert str(below.render()).split() == title.split()
        else:
            assert field.placeholder == title and not below.display
        await pilot.press(*"Real", "enter")  # the field works as before
        await until(pilot, lambda: not app.screen.query("#meta-title"))
        assert app.library.snapshot.metadata[paper.id].title == "Real"
