"""The filter answers as keys arrive: no debounce, a slow search never shows an older query's
result over a newer one, and keys typed while it runs are coalesced into the newest query."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from abstract_reader.search import SearchIndex, SearchResult
from abstract_reader.tui.app import ReaderApp
from abstract_reader.tui.widgets.paper_list import PaperList
from abstract_reader.tui.widgets.paper_view import PaperView

from .conftest import listed, make_app, settle, until

WIDE = (140, 40)


class HeldSearch:
    """The real search, except that the queries in ``held`` wait until ``release()``: a slow
    search, as a phrase of common words over a large corpus is. Records every query run."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, *held: str) -> None:
        self.held = set(held)
        self.searched: list[str] = []
        self.started: set[str] = set()
        self._gate = threading.Event()
        real = SearchIndex.search

        def search(index: SearchIndex, query: Any, *args: Any, **kwargs: Any) -> SearchResult:
            self.searched.append(str(query))
            self.started.add(str(query))
            if query in self.held:
                assert self._gate.wait(30), "the held search was never released"
            return real(index, query, *args, **kwargs)

        monkeypatch.setattr(SearchIndex, "search", search)

    def release(self) -> None:
        self._gate.set()


def ids_for(app: ReaderApp, query: str) -> list[str]:
    """What the list must show for ``query`` (relevance order): the real search."""
    session = app.session
    assert session.index is not None
    return [hit.paper.id for hit in session.index.search(query, session.library_view())]


def listed_ids(app: ReaderApp) -> list[str]:
    paper_list = app.query_one(PaperList)
    return [paper_list.source.row(i).paper_id for i in range(len(paper_list.source))]


async def test_a_burst_of_keys_during_a_slow_search_ends_on_the_last_query(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        expected = ids_for(app, "robust")
        assert 0 < len(expected) < 55
        paper_list = app.query_one(PaperList)
        paper_list.cursor = 5  # a new query puts the cursor back on the first row
        held = HeldSearch(monkeypatch, "r")
        await pilot.press("slash", "r")
        await until(pilot, lambda: "r" in held.started)
        await pilot.press("o", "b", "u", "s", "t")  # typed while "r" is still searching
        await pilot.pause()
        assert held.searched == ["r"]  # the newer keys wait for it, nothing piles up
        assert len(listed(app)) == 55  # and nothing is shown before its result
        held.release()
        await until(pilot, lambda: "robust" in held.searched)
        await settle(app, pilot)
        # the keys between were skipped; the result of "r" was never shown over "robust"
        assert held.searched == ["r", "robust"]
        assert listed_ids(app) == expected
        assert paper_list.cursor == 0
        view = app.query_one(PaperView)
        assert view.details is not None and view.details.paper_id == paper_list.current_id


async def test_a_slow_result_arriving_after_a_newer_query_is_discarded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        held = HeldSearch(monkeypatch, "robust")
        await pilot.press("slash", *"robust")
        await until(pilot, lambda: "robust" in held.started)
        await pilot.press("escape", "escape")  # back to the list; Esc again clears the filter
        await until(pilot, lambda: len(listed(app)) == 55)
        held.release()
        await settle(app, pilot)
        assert len(listed(app)) == 55  # the old query's result came, and was not shown
        assert app.query_one("#filter").value == ""  # type: ignore[attr-defined]
        assert "of 55" not in str(app.query_one("#status").render())


async def test_each_key_shows_the_result_of_the_query_typed_so_far(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        shown: list[int] = []
        await pilot.press("slash")
        for letter in "robust":
            await pilot.press(letter)
            await settle(app, pilot)
            shown.append(len(listed(app)))
        assert shown[-1] < 55
        assert shown == sorted(shown, reverse=True)  # each letter narrows (prefix matches)
        await pilot.press("backspace")
        await settle(app, pilot)
        assert len(listed(app)) == shown[-2]
