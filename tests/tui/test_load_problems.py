"""The load problems in the reader (`L`, and "Load problems" in the palette): every problem
loading the dumps and metadata files, in a dialog that scrolls with the keyboard. The load
notice and the status line name its key (the key in effect); with no problem the command
says so. File names and problem texts are untrusted: shown escaped, never as markup."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from textual.notifications import Notification

from abstract_reader.corpus import MAX_RECORD_PROBLEMS
from abstract_reader.tui.app import ReaderApp
from abstract_reader.tui.screens.main import MainScreen
from abstract_reader.tui.screens.problems import LoadProblems, ProblemsView

from ..conftest import SEEDS
from .conftest import config_file, config_warnings, make_app, run_palette_command, settle, until
from .test_dialogs_small import screen_text

WIDE = (120, 40)
SMALL = (70, 24)
#: a file name that is markup and holds an escape byte (an empty file: a load error)
HOSTILE = "evil[bold]x\x1b[31mred.txt"
BAD_RECORDS = 30  # (the reader keeps MAX_RECORD_PROBLEMS of them, one line counts the rest)
MISSING = 30  # paths that are not there: more problems than a screen holds


def _notices(app: ReaderApp) -> list[Notification]:
    return [n for n in app._notifications if isinstance(n, Notification)]


def _status(app: ReaderApp) -> str:
    return str(app.query_one("#status").render())


def _shown(app: ReaderApp) -> str:
    """The terminal's text, line by line (as drawn)."""
    return "\n".join(screen_text(app))


def _problems_text(app: ReaderApp) -> str:
    """The dialog's whole text (scrolled or not), its lines joined as one line of words."""
    return " ".join(app.screen.query_one(ProblemsView).text.split())


def _bad_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The seeds, a dump with bytes that are not UTF-8 (a warning), an arXiv JSON Lines file
    with malformed records (warnings), an empty file named with markup and an escape byte,
    and paths that are not there (errors); named from ``tmp_path`` (the current folder:
    short names, whole on a line at 70 columns)."""
    monkeypatch.chdir(tmp_path)
    folder = Path("dumps")
    folder.mkdir()
    for seed in sorted(SEEDS.glob("*.txt")):
        (folder / seed.name).write_bytes(seed.read_bytes())
    (folder / "latin.txt").write_bytes(b"Un r\xe9sum\xe9 about robust estimators of the mean.\n")
    try:
        (folder / HOSTILE).write_bytes(b"")
    except OSError:
        pytest.skip("this file system refuses the name")
    records = Path("records.jsonl")
    good = {"id": "2601.00001", "title": "Elsewhere", "abstract": "A paper on other things."}
    lines = [json.dumps(good), *(f"{{oops {n}" for n in range(BAD_RECORDS))]
    records.write_text("\n".join(lines) + "\n", encoding="utf-8")
    missing = [Path("gone") / f"{n:02}.txt" for n in range(MISSING)]
    return [folder, records, *missing]


async def test_every_load_problem_is_listed_errors_first_and_the_keys_scroll_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = make_app(tmp_path, _bad_files(tmp_path, monkeypatch))
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        # the notice and the status name the key that lists them
        await until(pilot, lambda: any("loaded" in n.title for n in _notices(app)))
        [notice] = [n for n in _notices(app) if "loaded" in n.title]
        assert notice.message.splitlines()[-1] == (
            "L lists them; the load errors are printed again when you quit."
        )
        assert f"⚠ {MISSING + 1} load errors (L lists them)" in _status(app)

        await pilot.press("L")
        await until(pilot, lambda: isinstance(app.screen, LoadProblems))
        text = _problems_text(app)
        # the counts, then the errors (every one), then the warnings
        assert f"{MISSING + 1} load errors · 5 files loaded, 2 with warnings" in text
        errors_at = text.index(f"Errors: {MISSING + 1} paths not loaded")
        warnings_at = text.index(f"Warnings: {BAD_RECORDS + 1} problems in 2 files loaded")
        assert errors_at < warnings_at
        for n in range(MISSING):
            gone = text.index(f"gone/{n:02}.txt: no such file")
            assert errors_at < gone < warnings_at
        # the hostile name: escaped as on stderr, its [bold] text, not markup
        escaped = "evil[bold]x\\x1b[31mred.txt: empty file"
        assert errors_at < text.index(escaped) < warnings_at
        assert warnings_at < text.index("latin.txt: invalid UTF-8 on line 1")
        assert text.count("not valid JSON") == MAX_RECORD_PROBLEMS
        skipped = f"records.jsonl: … and {BAD_RECORDS - MAX_RECORD_PROBLEMS} more malformed"
        assert warnings_at < text.index(skipped)
        assert "\x1b" not in text
        # the notice (the first of them) goes: the dialog lists them all
        await until(pilot, lambda: not any("loaded" in n.title for n in _notices(app)))

        # scrolled with the keys, from the top
        box = app.screen.query_one(ProblemsView)
        await until(pilot, lambda: box.max_scroll_y > 0)
        assert box.scroll_y == 0
        await pilot.press("j", "j", "j")
        await until(pilot, lambda: box.scroll_y == 3)
        await pilot.press("k")
        await until(pilot, lambda: box.scroll_y == 2)
        await pilot.press("down")
        await until(pilot, lambda: box.scroll_y == 3)
        await pilot.press("pagedown")
        await until(pilot, lambda: box.scroll_y > 3 + 10)
        await pilot.press("G")
        await until(pilot, lambda: box.scroll_y == box.max_scroll_y)
        assert "Esc or q closes this list." in _shown(app)
        await pilot.press("pageup", "up")
        await until(pilot, lambda: box.scroll_y < box.max_scroll_y - 10)
        assert "\x1b" not in _shown(app)
        await pilot.press("escape")
        await until(pilot, lambda: isinstance(app.screen, MainScreen))

        # q closes it too (not the reader), and the palette opens it
        await run_palette_command(app, pilot, "Load problems")
        await until(pilot, lambda: isinstance(app.screen, LoadProblems))
        await pilot.press("q")
        await until(pilot, lambda: isinstance(app.screen, MainScreen))
        assert app.is_running


async def test_a_hostile_file_name_is_shown_as_text_at_70x24(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On the terminal: `[bold]` as its characters, the escape byte as `\\x1b`."""
    app = make_app(tmp_path, _bad_files(tmp_path, monkeypatch))
    async with app.run_test(size=SMALL) as pilot:
        await settle(app, pilot)
        await pilot.press("L")
        await until(pilot, lambda: isinstance(app.screen, LoadProblems))
        box = app.screen.query_one(ProblemsView)
        await until(pilot, lambda: "evil[bold]x\\x1b[31mred.txt" in _problems_text(app))
        for _ in range(200):  # scrolled down to it, a line at a time
            if "evil[bold]x\\x1b[31mred.txt" in _shown(app) or box.scroll_y == box.max_scroll_y:
                break
            await pilot.press("j")
            await pilot.pause()
        assert "evil[bold]x\\x1b[31mred.txt: empty file" in _shown(app)
        assert "\x1b" not in _shown(app)
        await pilot.press("G")  # the end, its last line whole in the box
        await until(pilot, lambda: box.scroll_y == box.max_scroll_y)
        await until(pilot, lambda: "Esc or q closes this list." in _shown(app))


async def test_with_no_load_problem_the_command_says_so(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        assert "load error" not in _status(app) and "warnings" not in _status(app)
        await pilot.press("L")
        await until(pilot, lambda: any(n.title == "Load problems" for n in _notices(app)))
        [said] = [n for n in _notices(app) if n.title == "Load problems"]
        assert said.message.startswith("No load problems: 3 files loaded")
        assert isinstance(app.screen, MainScreen)
        app.clear_notifications()
        await run_palette_command(app, pilot, "Load problems")
        await until(pilot, lambda: any(n.title == "Load problems" for n in _notices(app)))
        assert not isinstance(app.screen, LoadProblems)


async def test_the_notice_and_the_status_name_the_key_in_effect(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`load_problems = "W"`: the notice and the status say W, W lists them, L does not.
    A dump that loaded with a warning (no error) is in the status too."""
    config_file(tmp_path, monkeypatch, '[keys]\nload_problems = "W"\n')
    latin = tmp_path / "latin.txt"
    latin.write_bytes(b"Un r\xe9sum\xe9 about robust estimators of the mean.\n")
    app = make_app(tmp_path, [latin], config=None)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        assert config_warnings(app) == []
        await until(pilot, lambda: any("loaded" in n.title for n in _notices(app)))
        [notice] = [n for n in _notices(app) if "loaded" in n.title]
        assert notice.message.splitlines()[-1] == "W lists them."
        assert "1 file with load warnings (W lists them)" in _status(app)
        await pilot.press("L")
        await pilot.pause()
        assert isinstance(app.screen, MainScreen)
        await pilot.press("W")
        await until(pilot, lambda: isinstance(app.screen, LoadProblems))
        assert "Warnings: 1 problem in 1 file loaded" in _problems_text(app)
        assert "Errors" not in _problems_text(app)
        await pilot.press("escape")
        await until(pilot, lambda: isinstance(app.screen, MainScreen))


pytestmark = pytest.mark.skipif(os.name != "posix", reason="file names with an escape byte")
