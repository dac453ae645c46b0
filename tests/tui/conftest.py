"""Helpers for driving the real reader with Pilot."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from abstract_reader.config import Config
from abstract_reader.tui.app import ReaderApp
from abstract_reader.tui.widgets.paper_list import PaperList
from abstract_reader.tui.widgets.paper_view import PaperView


def make_app(tmp_path: Path, paths: list[Any] | None = None, **kwargs: Any) -> ReaderApp:
    kwargs.setdefault("read_delay", 3600.0)  # no auto-read unless a test asks for it
    kwargs.setdefault("config", Config())  # the defaults, whatever the user's config file says
    return ReaderApp(paths, tmp_path / "lib.sqlite3", cache_dir=tmp_path / "cache", **kwargs)


def config_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str) -> Path:
    """A config file holding ``text``, the one the reader reads (``ABSTRACT_READER_CONFIG``)."""
    config = tmp_path / "config.toml"
    config.write_text(text, encoding="utf-8")
    monkeypatch.setenv("ABSTRACT_READER_CONFIG", str(config))
    return config


def config_warnings(app: ReaderApp) -> list[str]:
    """The problems the reader found in its config file (one notice shows them: the first,
    and how many; `config --show` lists them all)."""
    return list(app.config_warnings)


async def settle(app: ReaderApp, pilot: Pilot[Any]) -> None:
    """Wait for loading, indexing and searching workers, then for the screen to update."""
    for _ in range(3):
        await app.workers.wait_for_complete()
        await pilot.pause()


async def until(pilot: Pilot[Any], condition: Callable[[], bool], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached in time")
        await pilot.pause(0.02)


async def run_palette_command(app: ReaderApp, pilot: Pilot[Any], search: str) -> None:
    """ctrl+p, type ``search``, wait for the matching commands, Enter: as a user would."""
    from textual.command import CommandList, CommandPalette

    await pilot.press("ctrl+p")
    await until(pilot, lambda: isinstance(app.screen, CommandPalette))
    await pilot.press(*search)
    await until(pilot, lambda: app.screen.query_one(CommandList).option_count > 0)
    await pilot.press("enter")


async def type_filter(app: ReaderApp, pilot: Pilot[Any], text: str) -> None:
    await pilot.press("slash")
    await pilot.press(*[{" ": "space"}.get(ch, ch) for ch in text])
    await settle(app, pilot)


def listed(app: ReaderApp) -> list[str]:
    """Titles in the list, in order (what the rows show)."""
    paper_list = app.query_one(PaperList)
    return [paper_list.source.row(i).title for i in range(len(paper_list.source))]


def list_lines(app: ReaderApp) -> list[str]:
    """The text of the list's rows on screen."""
    paper_list = app.query_one(PaperList)
    height = paper_list.scrollable_content_region.height
    return [paper_list.render_line(y).text for y in range(height)]


def view_text(app: ReaderApp) -> str:
    view = app.query_one(PaperView)
    return f"{view.header.plain}\n{view.body.plain}"


def current_title(app: ReaderApp) -> str:
    paper = app.main.current_paper()
    assert paper is not None
    return app.session.title_of(paper)


__all__ = ["asyncio"]


def pause_index_build(
    monkeypatch: pytest.MonkeyPatch, at: tuple[int, ...] = (20,)
) -> threading.Event:
    """The index is built 10 papers at a time and waits (≤ 60 s) when it has ``at`` papers
    done, until the returned event is set: what the screen shows meanwhile can be asserted."""
    from abstract_reader.search import postings

    monkeypatch.setattr(postings, "CHUNK_DOCS", 10)
    go_on = threading.Event()
    real_add = postings._Builder.add

    def add(builder: postings._Builder, doc0: int, answer: postings._Answer) -> None:
        if builder.papers in at and not go_on.is_set():
            go_on.wait(timeout=60)
        real_add(builder, doc0, answer)

    monkeypatch.setattr(postings._Builder, "add", add)
    return go_on
