"""OSC 8 hyperlinks in the paper view: the metadata's URL, DOI and arXiv page and the URLs in
abstracts are links; a hostile URL is no link and puts no control byte on the terminal."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from textual.geometry import Region

from abstract_reader.library import Metadata
from abstract_reader.text import render, sanitise
from abstract_reader.tui.app import ReaderApp
from abstract_reader.tui.widgets.paper_list import PaperList
from abstract_reader.tui.widgets.paper_view import PaperDetails, PaperView

from .conftest import make_app, settle, type_filter, until, view_text

WIDE = (120, 40)


def _links(app: ReaderApp, part: str) -> set[str]:
    """The link targets in the lines the view draws (padding included), of its header or
    its body: the text's line of a cell is in its style's offset, as the mouse reads it."""
    view = app.query_one(PaperView)
    header_lines = range(1, 2 + view.header.plain.count("\n"))  # after the blank first line
    strips = view.render_lines(Region(0, 0, *view.outer_size))
    links = set()
    for strip in strips:
        for seg in strip:
            if seg.style and seg.style.link:
                in_header = seg.style.meta["offset"][1] in header_lines
                if in_header == (part == "header"):
                    links.add(seg.style.link)
    return links


def _terminal_output(app: ReaderApp) -> str:
    """What Textual writes to the terminal for the whole screen."""
    return app.screen._compositor.render_full_update().render_segments(app.console)


#: An OSC 8 link the view may write: its target printable ASCII, ended by ST (ESC \\).
_OSC8 = re.compile(r"\x1b\]8;id=[0-9a-zA-Z-]*;(?:https?://[!-~]+?)?\x1b\\")


def _assert_nothing_but_sgr(output: str, *, links: bool = False) -> None:
    """Every escape sequence is CSI (colours, cursor moves) or, with ``links``, an OSC 8 link
    to a printable-ASCII http(s) target; no other OSC (52, 0 …), no BEL, no C1 control."""
    assert "\x07" not in output
    assert not any(0x80 <= ord(ch) < 0xA0 for ch in output)
    if links:
        output = _OSC8.sub("", output.replace("\x1b]8;;\x1b\\", ""))
    assert re.findall(r"\x1b[^\[]", output) == []


async def test_metadata_links_are_osc8_hyperlinks(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        paper_id = app.query_one(PaperList).current_id or ""
        app.library.set_metadata(
            paper_id,
            Metadata(url="https://openreview.net/forum?id=Ab-1_x", doi="10.1234/abc"),
        )
        await until(pilot, lambda: "openreview" in view_text(app))
        await pilot.pause()
        assert _links(app, "header") == {
            "https://openreview.net/forum?id=Ab-1_x",
            "https://doi.org/10.1234/abc",
        }
        output = _terminal_output(app)
        assert re.search(r"\x1b\]8;id=[^;]*;https://openreview\.net/forum\?id=Ab-1_x\x1b\\", output)
        assert "\x1b]8;;\x1b\\" in output  # and the link ends


async def test_urls_in_the_abstract_are_links(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        await type_filter(app, pilot, "VeriStressGT")
        await pilot.press("enter")
        await settle(app, pilot)
        assert "github.com/NeurIPSAnon12345" in view_text(app)
        # the sentence's full stop is not part of the link
        assert _links(app, "body") == {"https://github.com/NeurIPSAnon12345/VeriStressGT.git"}


@pytest.mark.parametrize(
    "url",
    [
        "javascript:alert(1)",
        "https://evil.example/\x1b]52;c;SGVsbG8=\x07",
        "https://evil.example/\x1b]8;;https://other.example\x1b\\x",
        "https://evil.example/\x9c\x1b]0;title\x07",
        "https://evil.example/a b",
    ],
)
async def test_a_hostile_url_is_no_link_and_no_control_byte(tmp_path: Path, url: str) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        # through the library (which sanitises what it stores) …
        paper_id = app.query_one(PaperList).current_id or ""
        app.library.set_metadata(paper_id, Metadata(url=url))
        await until(pilot, lambda: "not a link" in view_text(app))
        await pilot.pause()
        assert _links(app, "header") == set()
        _assert_nothing_but_sgr(_terminal_output(app))
        # … and straight into the view, raw, as another caller might
        view = app.query_one(PaperView)
        details = PaperDetails(
            paper_id="0" * 16,
            title="t",
            title_derived=False,
            venue="v",
            sources=(),
            tags=(),
            bookmarked=False,
            read=False,
            marked=False,
            body=render(sanitise(f"See {url} for more.")),  # as the corpus stores it
            url=url,
        )
        view.show(details)
        await pilot.pause()
        assert "not a link" in view_text(app)
        assert _links(app, "header") == set()
        body_links = _links(app, "body")  # "https://evil.example/a" of "…/a b" is one
        assert all(re.fullmatch(r"https?://[!-~]+", link) for link in body_links)
        _assert_nothing_but_sgr(_terminal_output(app), links=True)
