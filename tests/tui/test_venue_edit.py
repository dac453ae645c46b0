"""The venue can be set by hand in the metadata editor `e` (QA s17 #4): the list, the paper
view and ``venue:`` follow it; clearing the field brings the dump's venue back."""

from __future__ import annotations

from pathlib import Path

from abstract_reader.tui.screens.editors import MetadataEditor
from abstract_reader.tui.widgets.paper_list import PaperList

from .conftest import list_lines, make_app, settle, type_filter, until, view_text

WIDE = (140, 40)


async def test_the_editor_sets_and_clears_the_venue(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        paper_id = app.query_one(PaperList).current_id
        assert paper_id is not None
        await pilot.press("e")
        assert isinstance(app.screen, MetadataEditor)
        # title, authors, URL, DOI, year, then the venue
        await pilot.press("tab", "tab", "tab", "tab", "tab", *"ICML", "enter")
        await until(pilot, lambda: not isinstance(app.screen, MetadataEditor))
        await settle(app, pilot)
        assert "ICML 2026" in list_lines(app)[0]
        assert "ICML 2026" in view_text(app)
        await type_filter(app, pilot, "venue:icml")
        assert [app.query_one(PaperList).source.paper_id(0)] == [paper_id]
        assert len(app.query_one(PaperList).source) == 1
        await pilot.press("escape")  # back to the list, the filter kept
        await pilot.press("e")
        assert isinstance(app.screen, MetadataEditor)
        await pilot.press("tab", "tab", "tab", "tab", "tab")
        assert app.screen.query_one("#meta-venue").value == "ICML"  # type: ignore[attr-defined]
        await pilot.press("ctrl+u", "enter")
        await until(pilot, lambda: not isinstance(app.screen, MetadataEditor))
        await settle(app, pilot)
        assert len(app.query_one(PaperList).source) == 0  # venue:icml finds it no more
        await pilot.press("escape")  # the filter cleared: the dump's venue shows again
        await settle(app, pilot)
        assert "NeurIPS 2026" in view_text(app) and "ICML" not in view_text(app)
