"""Start-up: the first frame the reader paints already shows the current paper's abstract."""

from __future__ import annotations

from pathlib import Path

import pytest

from abstract_reader.tui.screens.main import MainScreen
from abstract_reader.tui.widgets.paper_list import PaperList
from abstract_reader.tui.widgets.paper_view import PaperDetails, PaperView

from .conftest import make_app, settle, until

WIDE = (140, 40)


async def test_the_first_frame_shows_the_current_papers_abstract(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shown: list[PaperDetails | None] = []
    original = MainScreen.first_frame

    def first_frame(self: MainScreen) -> None:  # called when the first frame is painted
        shown.append(self.query_one(PaperView).details)
        original(self)

    monkeypatch.setattr(MainScreen, "first_frame", first_frame)
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await until(pilot, lambda: bool(shown))
        details = shown[0]
        assert details is not None  # not "Loading…": the paper, with the rows
        assert details.paper_id == app.query_one(PaperList).current_id
        paper = app.main.current_paper()
        assert paper is not None
        assert details.body.text.split()[:3] == paper.abstract.split()[:3]
        await settle(app, pilot)
