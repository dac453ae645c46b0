"""What the reader's command sets for its process while it runs, and gives back after."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest

from abstract_reader.tui import app as app_module
from abstract_reader.tui.app import ReaderApp


def test_the_collector_runs_less_often_while_the_reader_runs_and_as_before_after(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A frame's short-lived objects no longer set off a young collection about twice per
    key typed; the process's settings are given back when the reader ends."""
    monkeypatch.setenv("ABSTRACT_READER_CONFIG", str(tmp_path / "config.toml"))
    before = gc.get_threshold()
    seen: list[tuple[int, ...]] = []

    def run(self: ReaderApp) -> int:
        seen.append(gc.get_threshold())
        return 0

    monkeypatch.setattr(ReaderApp, "run", run)
    assert app_module.run(None, str(tmp_path / "lib.sqlite3")) == 0
    assert seen and seen[0][0] >= app_module.GC_YOUNG_THRESHOLD > before[0]
    assert seen[0][1:] == before[1:]
    assert gc.get_threshold() == before
