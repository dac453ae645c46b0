"""Jump to a paper by id in the reader's filter: `id:PREFIX` and a pasted id."""

from __future__ import annotations

from pathlib import Path

from textual import events
from textual.widgets import Input

from abstract_reader.corpus import Corpus

from .conftest import current_title, listed, make_app, settle, type_filter, until

WIDE = (140, 40)


async def test_id_prefix_typed_in_the_filter_shows_that_paper(
    tmp_path: Path, seeds: Corpus
) -> None:
    paper = seeds.papers[40]
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        await type_filter(app, pilot, f"id:{paper.id[:8]}")
        assert listed(app) == [paper.title]
        await pilot.press("enter")
        assert current_title(app) == paper.title
        # an unknown id: nothing listed, and the status says why
        await pilot.press("slash", "ctrl+u", *"id:ffff0000")
        await settle(app, pilot)
        assert listed(app) == []
        status = str(app.query_one("#status").render())
        assert "id:ffff0000 matches no paper" in status


async def test_a_pasted_id_puts_its_paper_first(tmp_path: Path, seeds: Corpus) -> None:
    paper = seeds.papers[50]
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        await pilot.press("slash")
        filter_input = app.query_one("#filter", Input)
        await until(pilot, lambda: filter_input.has_focus)
        filter_input.post_message(events.Paste(paper.id[:12]))
        await settle(app, pilot)
        await until(pilot, lambda: filter_input.value == paper.id[:12])
        await settle(app, pilot)
        assert listed(app)[0] == paper.title
