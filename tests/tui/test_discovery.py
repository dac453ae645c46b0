"""The reader's discovery keys: `m` = more like this."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Input

from abstract_reader.corpus import Corpus
from abstract_reader.tui.screens.pickers import TagList
from abstract_reader.tui.widgets.paper_list import PaperList

from .conftest import listed, make_app, settle, until

WIDE = (140, 40)


async def test_m_ranks_every_paper_like_the_current_one(tmp_path: Path, seeds: Corpus) -> None:
    spike = seeds.resolve("91429572")  # Spike-SFT; its judged neighbour is ±I-LIF (SNNs)
    neighbour = seeds.resolve("fa348708")
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        paper_list = app.query_one(PaperList)
        paper_list.move(seeds.papers.index(spike), by_user=True)
        await pilot.pause()
        await pilot.press("m")
        await settle(app, pilot)
        await until(pilot, lambda: len(listed(app)) == 54)
        assert app.query_one("#filter", Input).value == f"like:{spike.id[:12]}"
        titles = listed(app)
        assert spike.title not in titles  # the paper itself is left out
        assert titles[0] == neighbour.title
        status = str(app.query_one("#status").render())
        assert "54 of 55" in status and f"ranked like {spike.title[:20]}" in status
        assert "spiking" in status  # the words that drove the ranking
        # and again from the neighbour: the filter follows
        paper_list.move(0, by_user=True)
        await pilot.pause()
        await pilot.press("m")
        await settle(app, pilot)
        await until(pilot, lambda: spike.title in listed(app)[:1])


async def test_m_ranks_by_likeness_whatever_the_order_was(tmp_path: Path, seeds: Corpus) -> None:
    """A year order (kept from the last session, say) gives way to relevance for `m`: the
    judged neighbour is first, the status says the order, and the order is remembered."""
    spike = seeds.resolve("91429572")
    neighbour = seeds.resolve("fa348708")
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        while app.session.sort != "year":
            await pilot.press("s")
        await settle(app, pilot)
        paper_list = app.query_one(PaperList)
        position = app.session.position_of(spike.id)
        assert position is not None
        paper_list.move(position, by_user=True)
        await pilot.pause()
        await pilot.press("m")
        await settle(app, pilot)
        await until(pilot, lambda: len(listed(app)) == 54)
        assert listed(app)[0] == neighbour.title
        assert app.session.sort == "relevance"
        assert app.library.setting("sort") == "relevance"


async def test_m_on_the_tag_list_ranks_every_paper_like_the_tags_papers(
    tmp_path: Path, seeds: Corpus
) -> None:
    spike = seeds.resolve("91429572")
    neighbour = seeds.resolve("fa348708")
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        app.library.add_tags([spike.id], ["spiking nets"])  # a tag with a space: quoted
        await pilot.press("T")
        await until(pilot, lambda: isinstance(app.screen, TagList))
        await pilot.press("m")
        await settle(app, pilot)
        assert not isinstance(app.screen, TagList)
        assert app.query_one("#filter", Input).value == 'like:#"spiking nets"'
        await until(pilot, lambda: len(listed(app)) == 54)
        titles = listed(app)
        assert spike.title not in titles  # the tag's papers are left out
        assert titles[0] == neighbour.title
        status = str(app.query_one("#status").render())
        assert "54 of 55" in status and "ranked like #spiking nets" in status
