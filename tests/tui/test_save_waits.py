"""A large corpus's index is handed over before its cache is saved; the save waits while a
query is typed (the searches and frames of its keys come first), never past leaving the
filter, and a reader quit while it waits leaves a cache that is correct or none."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from abstract_reader.search import SearchIndex, cache
from abstract_reader.search.cache import SUFFIX
from abstract_reader.tui.app import ReaderApp
from abstract_reader.tui.screens import main

from .conftest import listed, make_app, settle, until


class Saves:
    """Holds the index build until ``go()``; records each cache save: whether a query was
    being typed when it began, and when it is done."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, quiet: float = 3600.0) -> None:
        self.began: list[bool] = []
        self.done = threading.Event()
        self.first_pause = threading.Event()
        self._gate = threading.Event()
        self.screen: main.MainScreen | None = None
        build, save = SearchIndex.__init__, SearchIndex.save_and_map

        def held_build(index: SearchIndex, *args: Any, **kwargs: Any) -> None:
            assert self._gate.wait(30), "the build was never let go"
            build(index, *args, **kwargs)

        def recorded_save(index: SearchIndex, **kwargs: Any) -> None:
            assert self.screen is not None
            self.began.append(self.screen.keys_arriving(main.SAVE_QUIET_S))
            pause = kwargs.get("pause")
            if pause is not None:
                kwargs["pause"] = self._paused(pause)
            try:
                save(index, **kwargs)
            finally:
                self.done.set()

        monkeypatch.setattr(SearchIndex, "__init__", held_build)
        monkeypatch.setattr(SearchIndex, "save_and_map", recorded_save)
        monkeypatch.setattr(main, "HAND_OVER_FIRST", 0)  # the bundled dumps count as large
        monkeypatch.setattr(main, "SAVE_QUIET_S", quiet)  # 3600: a key counts as just typed

    #: set at the save's first pause; the save then waits for `typed` (see `_paused`)
    first_pause: threading.Event
    typed: threading.Event | None = None

    def _paused(self, pause: Any) -> Any:
        def recorded() -> None:
            if not self.first_pause.is_set():
                self.first_pause.set()
                if self.typed is not None:
                    assert self.typed.wait(30), "the test never typed"
            pause()

        return recorded

    async def start_typing(self, app: ReaderApp, pilot: Pilot[Any]) -> None:
        """`/ r` while the index is built, then the build goes on: the index is handed
        over while the query is being typed."""
        self.screen = app.main
        await pilot.press("slash", "r")
        self._gate.set()
        await until(pilot, lambda: app.session.index is not None)


async def test_the_index_is_saved_once_the_query_is_typed_not_while(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    saves = Saves(monkeypatch)
    app = make_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await saves.start_typing(app, pilot)
        await pilot.press("o", "b")
        await until(pilot, lambda: "of 55" in str(app.query_one("#status").render()))
        await pilot.pause(0.2)
        assert saves.began == []  # the keys' searches ran; the save waits
        robust = listed(app)
        await pilot.press("enter")  # the query is typed: the list has the focus
        await until(pilot, saves.done.is_set)
        assert saves.began == [False]
        await settle(app, pilot)
        index = app.session.index
        assert index is not None and not index.map_pending and index._mapped is not None
        assert listed(app) == robust  # (read from the file saved: the same result)


async def test_a_reader_quit_while_the_save_waits_leaves_a_correct_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    saves = Saves(monkeypatch)
    app = make_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await saves.start_typing(app, pilot)
        await pilot.press("o", "b", "u", "s", "t")
        await until(pilot, lambda: app.main.keys_arriving() and not saves.began)
        expected = listed(app)
        app.exit()  # quit from the filter, the save still waiting
    assert saves.done.wait(30)  # quitting: the save no longer waits for keys
    assert saves.began == [False]
    assert list((tmp_path / "cache").glob(f"*{SUFFIX}"))  # (saved whole, or there'd be none)
    monkeypatch.undo()
    app = make_app(tmp_path)  # the next start reads that cache: the same results
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        index = app.session.index
        assert index is not None and index.loaded_from_cache
        await pilot.press("slash", *"robust")
        await settle(app, pilot)
        assert listed(app) == expected


async def test_the_save_goes_on_once_the_keys_stop_the_filter_still_focused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    saves = Saves(monkeypatch, quiet=0.5)
    app = make_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await saves.start_typing(app, pilot)
        await pilot.press("o")
        await until(pilot, saves.done.is_set)  # no more keys: the save went on
        assert saves.began == [False]
        assert app.main.focused is app.query_one("#filter")


async def test_a_save_under_way_waits_while_a_query_is_begun_then_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The save began with no query being typed (a million papers' takes seconds); the user
    starts typing during it: it waits between its pieces until the filter is left."""
    monkeypatch.setattr(cache, "WRITE_PIECE", 64)  # many pieces, even for 55 papers
    saves = Saves(monkeypatch)
    saves.typed = threading.Event()
    app = make_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        saves.screen = app.main
        saves._gate.set()  # the build goes on, the list focused: the save begins at once
        await until(pilot, saves.first_pause.is_set)
        assert saves.began == [False]
        await pilot.press("slash", *"rob")  # typing begins while the save is under way
        saves.typed.set()
        await until(pilot, lambda: "of 55" in str(app.query_one("#status").render()))
        await pilot.pause(0.3)
        assert not saves.done.is_set()  # it waits between two pieces
        robust = listed(app)
        await pilot.press("enter")  # the query is typed: the list has the focus
        await until(pilot, saves.done.is_set)
        await settle(app, pilot)
        index = app.session.index
        assert index is not None and not index.map_pending and index._mapped is not None
        assert listed(app) == robust  # (read from the file saved: the same result)
