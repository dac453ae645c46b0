"""The config file's problems at start-up: one notice however many (a dozen toasts covered
the whole list), and a remap onto a binding's own default key warns of nothing and takes the
key from nobody (`quit = "q"` said "triage_leave loses it", and q quit out of triage)."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.notifications import Notification

from abstract_reader.tui.app import ReaderApp
from abstract_reader.tui.screens.triage import TriageScreen

from .conftest import config_file, make_app, settle, until

WIDE = (120, 40)

BAD = "".join(f"setting_{n} = {n}\n" for n in range(10)) + 'theme = "nordd"\nlist_width = 5\n'


def _config_notices(app: ReaderApp) -> list[Notification]:
    return [n for n in app._notifications if isinstance(n, Notification) and n.title == "Config"]


async def test_a_dozen_config_problems_are_one_notice_naming_the_first_and_config_show(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = config_file(tmp_path, monkeypatch, BAD)
    app = make_app(tmp_path, config=None)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        notices = _config_notices(app)
        assert len(notices) == 1, [n.message for n in notices]
        first, hint = notices[0].message.split("\n")
        assert first.startswith(
            f"12 problems in the config file — first: {config}: line 1: setting_0: unknown"
        )
        assert hint == "abstract-reader config --show lists them all."


async def test_one_config_problem_is_said_as_it_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = config_file(tmp_path, monkeypatch, "list_width = 5\n")
    app = make_app(tmp_path, config=None)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        assert [n.message for n in _config_notices(app)] == [
            f'{config}: line 1: list_width: expected columns (20-400) or a share such as "45%"'
            " (10-90%), got 5; the default applies"
        ]


async def test_quit_remapped_to_its_own_q_warns_nothing_and_q_still_leaves_triage(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config_file(tmp_path, monkeypatch, '[keys]\nquit = "q"\n')
    app = make_app(tmp_path, config=None)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        assert _config_notices(app) == []
        await pilot.press("exclamation_mark")
        await until(pilot, lambda: isinstance(app.screen, TriageScreen))
        await pilot.press("q")  # leaves triage (triage_leave kept its q), not the reader
        await until(pilot, lambda: not isinstance(app.screen, TriageScreen))
        assert app.is_running and app.return_code is None
