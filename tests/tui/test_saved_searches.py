"""Saved searches in the reader: S names the filter, @ lists them (run, delete), @name in the
filter; shared with the CLI (`abstract-reader searches`, `-q @name`) while both run."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import Input, OptionList, Static

from abstract_reader.library import Library
from abstract_reader.tui.app import ReaderApp
from abstract_reader.tui.screens.main import MainScreen
from abstract_reader.tui.screens.searches import SavedSearches, SaveSearchDialog

from .conftest import listed, make_app, settle, until

WIDE = (120, 40)
SMALL = (70, 24)


def cli(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The CLI in its own process, on the reader's library."""
    env = {**os.environ, "ABSTRACT_READER_CACHE": str(tmp_path / "cli-cache")}
    return subprocess.run(
        [sys.executable, "-m", "abstract_reader", *args, "--db", str(tmp_path / "lib.sqlite3")],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )


def message(app: ReaderApp, selector: str) -> str:
    return str(app.screen.query_one(selector, Static).render())


def picker_lines(app: ReaderApp) -> list[str]:
    options = app.screen.query_one("#saved-list", OptionList)
    return [str(options.get_option_at_index(i).prompt) for i in range(options.option_count)]


#: Keys as a terminal names them (Pilot would send "@" as a key named "@"; a terminal sends
#: "at", which Textual does not recognise as text by itself).
_KEY_NAMES = {" ": "space", "#": "number_sign", "|": "vertical_line", "@": "at"}


async def press_text(pilot: Pilot[Any], text: str) -> None:
    await pilot.press(*[_KEY_NAMES.get(c, c) for c in text])


async def type_filter(app: ReaderApp, pilot: Pilot[Any], text: str) -> None:
    await pilot.press("slash")
    await press_text(pilot, text)
    await settle(app, pilot)


async def save_filter_as(app: ReaderApp, pilot: Pilot[Any], name: str) -> None:
    await pilot.press("S")
    await until(pilot, lambda: isinstance(app.screen, SaveSearchDialog))
    await press_text(pilot, name)
    await pilot.press("enter")


@pytest.mark.parametrize("size", [WIDE, SMALL])
async def test_S_names_the_filter_and_the_cli_lists_it_and_runs_it(
    tmp_path: Path, size: tuple[int, int]
) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=size) as pilot:
        await settle(app, pilot)
        await type_filter(app, pilot, "robust")
        await pilot.press("enter")
        robust = listed(app)
        assert 0 < len(robust) < 55
        await save_filter_as(app, pilot, "rob")
        await until(pilot, lambda: isinstance(app.screen, MainScreen))
        assert app.library.setting("search:rob") == "robust"
        done = cli(tmp_path, "searches")
        assert done.returncode == 0 and done.stdout.split() == ["@rob", "robust"]
        listing = cli(tmp_path, "list", "-q", "@rob")
        assert listing.returncode == 0
        assert len(listing.stdout.splitlines()) == len(robust)


async def test_saving_over_a_name_asks_first_and_esc_keeps_the_stored_one(
    tmp_path: Path,
) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        assert cli(tmp_path, "searches", "--add", "rob", "graph").returncode == 0
        await type_filter(app, pilot, "robust")
        await pilot.press("enter")
        await save_filter_as(app, pilot, "rob")
        await pilot.pause()
        assert isinstance(app.screen, SaveSearchDialog)  # asked, not replaced
        assert "@rob is saved as “graph”" in message(app, "#save-search-message")
        await pilot.press("escape")  # keeps the stored one, the dialog stays
        await pilot.pause()
        assert isinstance(app.screen, SaveSearchDialog)
        assert app.library.setting("search:rob") == "graph"
        await pilot.press("enter")  # asks again
        await pilot.pause()
        assert isinstance(app.screen, SaveSearchDialog)
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, MainScreen))
        assert cli(tmp_path, "searches").stdout.split() == ["@rob", "robust"]
        # the same query under the same name: nothing to ask
        await save_filter_as(app, pilot, "rob")
        await until(pilot, lambda: isinstance(app.screen, MainScreen))
        # kept: "Esc to cancel", as it says — one Esc, not a second question
        assert cli(tmp_path, "searches", "--add", "rob", "graph", "--force").returncode == 0
        await save_filter_as(app, pilot, "rob")
        await until(pilot, lambda: "@rob is saved as" in message(app, "#save-search-message"))
        await pilot.press("escape")
        await until(pilot, lambda: "Esc to cancel" in message(app, "#save-search-message"))
        await pilot.press("escape")
        await until(pilot, lambda: isinstance(app.screen, MainScreen))
        assert app.library.setting("search:rob") == "graph"


async def test_esc_cancels_the_name_prompt_asking_first_when_a_name_is_typed(
    tmp_path: Path,
) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        await type_filter(app, pilot, "robust")
        await pilot.press("enter")
        await pilot.press("S")
        await until(pilot, lambda: isinstance(app.screen, SaveSearchDialog))
        await pilot.press("escape")  # nothing typed: gone at once
        await until(pilot, lambda: isinstance(app.screen, MainScreen))
        await pilot.press("S")
        await until(pilot, lambda: isinstance(app.screen, SaveSearchDialog))
        await press_text(pilot, "rob")
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, SaveSearchDialog)
        assert "Esc again drops them" in message(app, "#save-search-message")
        await pilot.press("escape")
        await until(pilot, lambda: isinstance(app.screen, MainScreen))
        assert app.library.setting("search:rob") is None
        # a bad name is said, not saved
        await pilot.press("S")
        await until(pilot, lambda: isinstance(app.screen, SaveSearchDialog))
        await press_text(pilot, "my list")
        await pilot.press("enter")
        await pilot.pause()
        assert "letters, digits" in message(app, "#save-search-message")
        # an empty filter has nothing to save
        await pilot.press("escape", "escape")
        await until(pilot, lambda: isinstance(app.screen, MainScreen))
        await pilot.press("escape")  # clears the filter
        await settle(app, pilot)
        await pilot.press("S")
        await pilot.pause()
        assert isinstance(app.screen, MainScreen)


@pytest.mark.parametrize("size", [WIDE, SMALL])
async def test_at_lists_searches_saved_elsewhere_filters_them_and_enter_runs_one(
    tmp_path: Path, size: tuple[int, int]
) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=size) as pilot:
        await settle(app, pilot)
        await type_filter(app, pilot, "graph | gnn")
        graphs = listed(app)
        await pilot.press("escape", "escape")  # leave the filter, clear it
        await settle(app, pilot)
        assert len(listed(app)) == 55
        # saved by another process while the reader runs
        assert cli(tmp_path, "searches", "--add", "graphs", "graph | gnn").returncode == 0
        assert cli(tmp_path, "searches", "--add", "reading", "robust is:unread").returncode == 0
        await pilot.press("at")
        await until(pilot, lambda: isinstance(app.screen, SavedSearches))
        await until(pilot, lambda: len(picker_lines(app)) == 2)
        lines = picker_lines(app)
        assert lines[0].startswith("@graphs") and "graph | gnn" in lines[0]
        assert lines[1].startswith("@reading") and "robust is:unread" in lines[1]
        # one saved while the list is open shows up in it
        assert cli(tmp_path, "searches", "--add", "new", "is:new").returncode == 0
        await until(pilot, lambda: len(picker_lines(app)) == 3)
        await press_text(pilot, "grh")  # fuzzy: g…r…h in "graphs"
        await until(pilot, lambda: len(picker_lines(app)) == 1)
        assert picker_lines(app)[0].startswith("@graphs")
        await pilot.press("enter")
        await settle(app, pilot)
        assert isinstance(app.screen, MainScreen)
        assert app.query_one("#filter", Input).value == "graph | gnn"
        assert listed(app) == graphs
        # ↓ moves through the list, Enter runs the highlighted one
        await pilot.press("at")
        await until(pilot, lambda: isinstance(app.screen, SavedSearches))
        await pilot.press("down", "down", "enter")
        await settle(app, pilot)
        assert app.query_one("#filter", Input).value == "robust is:unread"


async def test_ctrl_d_deletes_a_saved_search_after_asking(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        cli(tmp_path, "searches", "--add", "graphs", "graph")
        cli(tmp_path, "searches", "--add", "reading", "robust")
        await pilot.press("at")
        await until(pilot, lambda: isinstance(app.screen, SavedSearches))
        await until(pilot, lambda: len(picker_lines(app)) == 2)
        await pilot.press("down", "ctrl+d")
        await pilot.pause()
        assert "Delete @reading?" in message(app, "#saved-message")
        await pilot.press("escape")  # takes the question back; the list stays
        await pilot.pause()
        assert isinstance(app.screen, SavedSearches)
        await pilot.press("ctrl+d", "ctrl+d")
        await until(pilot, lambda: isinstance(app.screen, MainScreen))
        assert cli(tmp_path, "searches").stdout.split() == ["@graphs", "graph"]
        await pilot.press("at")
        await until(pilot, lambda: isinstance(app.screen, SavedSearches))
        await pilot.press("escape")  # nothing pending: closes
        await until(pilot, lambda: isinstance(app.screen, MainScreen))
        assert app.query_one("#filter", Input).value == ""


async def test_at_name_in_the_filter_runs_the_saved_query_and_follows_its_changes(
    tmp_path: Path,
) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        await type_filter(app, pilot, "graph")
        graph = listed(app)
        await pilot.press("escape", "escape")
        await type_filter(app, pilot, "robust")
        robust = listed(app)
        await pilot.press("escape", "escape")
        await settle(app, pilot)
        with Library(tmp_path / "lib.sqlite3") as other:  # another process's connection
            other.set_setting("search:mine", "graph")
        await type_filter(app, pilot, "@mine")
        await until(pilot, lambda: listed(app) == graph)
        await pilot.press("enter")
        # another program changes the saved query: the filter follows at the next poll
        assert cli(tmp_path, "searches", "--add", "mine", "robust", "--force").returncode == 0
        await until(pilot, lambda: listed(app) == robust)
        status = str(app.query_one("#status").render())
        assert f"{len(robust)} of 55" in status
        # a known name with other words: both apply
        await pilot.press("escape")  # the list has focus: clears the filter
        await type_filter(app, pilot, "robust learning")
        both = listed(app)
        assert 0 < len(both) < len(robust)
        await pilot.press("enter", "escape")
        await type_filter(app, pilot, "@mine learning")
        await until(pilot, lambda: listed(app) == both)
        assert f"{len(both)} of 55" in str(app.query_one("#status").render())
        # an unknown name matches nothing (as the CLI refuses it), and the status says why
        await pilot.press("enter", "escape")
        await type_filter(app, pilot, "@nope graph")
        await until(pilot, lambda: listed(app) == [])
        status = str(app.query_one("#status").render())
        assert "0 of 55" in status and "no saved search @nope" in status
        await pilot.press("enter", "escape")
        await type_filter(app, pilot, "@nope")  # alone: nothing either, not every paper
        await until(pilot, lambda: listed(app) == [])
        status = str(app.query_one("#status").render())
        assert "0 of 55" in status and "no saved search @nope" in status


async def test_a_saved_search_using_another_runs_and_a_loop_is_refused_or_said(
    tmp_path: Path,
) -> None:
    """QA (s17, 2): ``@rob is:unread`` saved with S as @nested, then ``@nested`` showed 0 of
    55 with no message; a loop was accepted."""
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        await type_filter(app, pilot, "robust")
        await pilot.press("enter")
        await save_filter_as(app, pilot, "rob")
        await until(pilot, lambda: isinstance(app.screen, MainScreen))
        await pilot.press("escape")
        await type_filter(app, pilot, "robust is:unread")
        wanted = listed(app)
        assert wanted
        await pilot.press("enter", "escape")
        await type_filter(app, pilot, "@rob is:unread")
        await until(pilot, lambda: listed(app) == wanted)
        await pilot.press("enter")
        await save_filter_as(app, pilot, "nested")
        await until(pilot, lambda: isinstance(app.screen, MainScreen))
        assert app.library.setting("search:nested") == "@rob is:unread"
        await pilot.press("escape")
        await type_filter(app, pilot, "@nested")
        await until(pilot, lambda: listed(app) == wanted)
        assert f"{len(wanted)} of 55" in str(app.query_one("#status").render())
        # saving @nested graph as @rob would make a loop: the dialog says so, saves nothing
        await pilot.press("space")
        await press_text(pilot, "graph")
        await settle(app, pilot)
        await pilot.press("enter")
        await save_filter_as(app, pilot, "rob")
        await pilot.pause()
        assert isinstance(app.screen, SaveSearchDialog)
        assert "@rob → @nested → @rob" in message(app, "#save-search-message")
        await pilot.press("enter")  # not a question: Enter again does not save it either
        await pilot.pause()
        assert isinstance(app.screen, SaveSearchDialog)
        assert app.library.setting("search:rob") == "robust"
        await pilot.press("ctrl+u")
        await press_text(pilot, "me")  # (@nested graph as @me is fine)
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, MainScreen))
        assert app.library.setting("search:me") == "@nested graph"
        await pilot.press("escape")
        await type_filter(app, pilot, "@nested")
        await until(pilot, lambda: listed(app) == wanted)
        # a loop made by another program: the status names it, the list shows nothing
        with Library(tmp_path / "lib.sqlite3") as other:
            other.set_setting("search:rob", "@nested")
        await until(pilot, lambda: "loop" in str(app.query_one("#status").render()))
        assert listed(app) == []
        status = str(app.query_one("#status").render())
        assert "0 of 55" in status and "loop" in status and "@nested → @rob → @nested" in status
        # and the list of saved searches marks the ones that match nothing
        await pilot.press("enter", "at")
        await until(pilot, lambda: isinstance(app.screen, SavedSearches))
        await until(pilot, lambda: len(picker_lines(app)) == 3)
        lines = picker_lines(app)
        assert all("matches nothing" in line for line in lines), lines
