"""Keys typed faster than the reader handles them: each goes where the key before sent it.

A terminal delivers a quick burst ("⏎ j j") as keys queued at once; Pilot's `press` waits
for each key to be handled, so these tests post the burst the way the terminal driver does.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypeVar

from textual import events
from textual.pilot import Pilot
from textual.widget import Widget
from textual.widgets import Input

from abstract_reader.tui.app import ReaderApp
from abstract_reader.tui.screens.editors import NoteEditor, TagEditor
from abstract_reader.tui.widgets.paper_list import PaperList
from abstract_reader.tui.widgets.paper_view import PaperView

from .conftest import listed, make_app, settle, until

WIDE = (140, 40)
_W = TypeVar("_W", bound=Widget)


def burst(app: ReaderApp, *keys: str) -> None:
    """Queue keys as the terminal driver does: all at once, none handled yet."""
    for key in keys:
        character = key if len(key) == 1 else None  # (named keys: none printable)
        app.post_message(events.Key(key, {"enter": "\r", "escape": "\x1b"}.get(key, character)))


async def test_enter_then_j_j_in_one_burst_moves_in_the_filtered_list(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        await pilot.press("slash", "r", "o", "b", "u", "s", "t")
        await settle(app, pilot)
        shown = listed(app)
        assert len(shown) > 3
        burst(app, "enter", "j", "j")
        await settle(app, pilot)
        assert app.query_one("#filter", Input).value == "robust"
        assert listed(app) == shown
        assert app.query_one(PaperList).has_focus
        assert app.query_one(PaperList).cursor == 2


async def test_escape_then_j_in_one_burst_moves_in_the_list(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        await pilot.press("slash", "n", "e", "t")
        await settle(app, pilot)
        burst(app, "escape", "j")
        await settle(app, pilot)
        assert app.query_one("#filter", Input).value == "net"
        assert app.query_one(PaperList).cursor == 1


async def test_editing_keys_in_a_burst_edit_where_they_were_typed(tmp_path: Path) -> None:
    """⌫, ←, ctrl+u … are the input's bindings, which Textual ran only once the key had gone
    up to the app — after the letters queued behind it: "abc⌫d" showed "abc"."""
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        await pilot.press("slash")
        await settle(app, pilot)
        field = app.query_one("#filter", Input)
        for keys, expected in [
            (("a", "b", "c", "backspace", "d"), "abd"),
            (("a", "b", "c", "left", "X"), "abXc"),
            (("g", "r", "a", "p", "h", "ctrl+u", "n", "e", "t"), "net"),
            (("n", "e", "t", "home", "delete", "g", "ctrl+e", "s"), "gets"),
            (("o", "n", "e", " ", "t", "w", "o", "ctrl+w", "x"), "one x"),
            (("a", "b", "c", "left", "left", "ctrl+k", "z"), "az"),
        ]:
            field.value = ""
            await settle(app, pilot)
            burst(app, *keys)
            await settle(app, pilot)
            assert field.value == expected, keys
        # and the filter searched what it shows
        burst(app, "ctrl+u", *"robust", "backspace", "t")
        await settle(app, pilot)
        assert field.value == "robust"
        assert listed(app) and field.has_focus


async def test_editing_keys_in_a_burst_in_the_tag_and_note_editors(tmp_path: Path) -> None:
    """Every text field of the reader takes its editing keys in the order typed: the tag
    editor's input and the note editor's text area, saved as typed."""
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        paper_id = app.query_one(PaperList).current_id
        await pilot.press("t")
        assert isinstance(app.screen, TagEditor)
        burst(app, *"theorx", "backspace", "y", "left", "left", "r", "enter")
        await settle(app, pilot)
        assert app.screen.tags == ["theorry"]
        await pilot.press("enter")  # empty input: save
        await settle(app, pilot)
        assert app.library.snapshot.tags[paper_id] == ["theorry"]
        await pilot.press("o")
        assert isinstance(app.screen, NoteEditor)
        burst(app, *"lemmq", "backspace", "a", "home", *"see ", "end", "ctrl+w", *"proof")
        await settle(app, pilot)
        await pilot.press("ctrl+s")
        await settle(app, pilot)
        assert app.library.snapshot.notes[paper_id] == "see proof"


async def test_keys_typed_right_after_the_key_that_moves_the_focus_go_where_it_moved(
    tmp_path: Path,
) -> None:
    """`r` in the tag list, then the new name and Enter, in one burst: the name went to the
    list (its letters did nothing, Enter filtered to the old tag) — the list's and the
    dialog's bindings ran only after the keys queued behind `r` had reached the list (found
    in tmux). Keys after the key that opens a dialog go to the dialog; a space after the
    Enter that opens a paper pages it (it marked a row of the list)."""
    from abstract_reader.tui.screens.pickers import TagList

    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        app.library.add_tags([app.session.corpus.papers[0].id], ["old-name"])
        await pilot.press("T")
        await until(pilot, lambda: isinstance(app.screen, TagList))
        burst(app, "r", "ctrl+u", *"new-name", "enter")
        await until(pilot, lambda: not isinstance(app.screen, TagList))
        await settle(app, pilot)
        assert app.library.tag_counts() == [("new-name", 1)]
        assert app.query_one("#filter", Input).value == ""  # (no filter to the old tag)
        assert app.query_one(PaperList).has_focus
        burst(app, "t", *"fresh", "enter", "enter")  # the tag editor opens on a new screen
        await settle(app, pilot)
        assert set(app.library.snapshot.tags[app.session.corpus.papers[0].id]) == {
            "new-name",
            "fresh",
        }
        burst(app, "enter", "space")  # the paper opened, then paged: no row marked
        await settle(app, pilot)
        assert app.query_one(PaperView).has_focus
        assert not app.session.marks


async def test_scrolling_keys_in_a_burst_each_scroll(tmp_path: Path) -> None:
    """A held j (or j j j typed quickly) in the help or the full-screen paper: each key
    scrolls a line and each space a page, from where the keys before it left the text.
    Textual's scroll waits for the next frame and starts from the target as it is then, so
    three keys in one burst scrolled one line."""
    from abstract_reader.tui.screens.help import HelpBox

    app = make_app(tmp_path)
    async with app.run_test(size=(60, 14)) as pilot:
        await settle(app, pilot)
        await pilot.press("question_mark")
        box = await _scrolling(app, pilot, HelpBox)
        burst(app, "j", "j", "j")
        await until(pilot, lambda: box.scroll_y == 3)
        burst(app, "k", "k")
        await until(pilot, lambda: box.scroll_y == 1)
        page = box.scrollable_content_region.height
        burst(app, "space", "space")
        await until(pilot, lambda: box.scroll_y == 1 + 2 * page)
        await pilot.press("escape")
        await pilot.press("enter")  # the paper, full screen: its abstract is longer than it
        view = await _scrolling(app, pilot, PaperView)
        burst(app, "j", "j", "j")
        await until(pilot, lambda: view.scroll_y == 3)


async def _scrolling(app: ReaderApp, pilot: Pilot[Any], kind: type[_W]) -> _W:
    """The screen's ``kind`` once it is laid out with more lines than it shows."""
    await until(pilot, lambda: bool(app.screen.query(kind)))
    widget = app.screen.query_one(kind)
    await until(pilot, lambda: widget.max_scroll_y > 10)
    assert widget.scroll_y == 0
    return widget
