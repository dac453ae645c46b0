"""The status line keeps what matters visible at any width: progress first, then the count;
what does not fit is dropped from the least important end, and the cut shows "…" (never a
part cut mid-way); the first frames agree with each other."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest
from rich.cells import cell_len

from abstract_reader.corpus import CorpusBuilder
from abstract_reader.library import Library
from abstract_reader.search import postings
from abstract_reader.tui.app import ReaderApp
from abstract_reader.tui.widgets.status_line import StatusLine, fit_status

from ..conftest import write_dump
from .conftest import make_app, settle, until

SIZES = [(70, 24), (120, 40)]


def shown(app: ReaderApp) -> str:
    return str(app.query_one("#status").render())


def assert_fits(app: ReaderApp) -> None:
    """On one line, whole parts only; a cut ends in " · …"."""
    status = app.query_one("#status", StatusLine)
    text = shown(app)
    assert cell_len(text) <= status.size.width
    pieces = text.split(" · ")
    if pieces[-1] == "…":
        pieces.pop()
    else:
        assert len(pieces) == len(status.parts)
    assert pieces == list(status.parts[: len(pieces)])


def _pause_index_at_20(monkeypatch: pytest.MonkeyPatch) -> threading.Event:
    monkeypatch.setattr(postings, "CHUNK_DOCS", 10)
    go_on = threading.Event()
    real_add = postings._Builder.add

    def add(builder: postings._Builder, doc0: int, answer: postings._Answer) -> None:
        if builder.papers == 20 and not go_on.is_set():
            go_on.wait(timeout=60)
        real_add(builder, doc0, answer)

    monkeypatch.setattr(postings._Builder, "add", add)
    return go_on


@pytest.mark.parametrize("size", SIZES)
async def test_indexing_progress_shows_first_and_the_line_is_cut_between_parts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, size: tuple[int, int]
) -> None:
    with Library(tmp_path / "lib.sqlite3") as lib:  # a long line: a sort, a filter, @unknown
        lib.set_setting("sort", "recent")
        lib.set_setting("filter", "graph @nosuchsearch robust")
    go_on = _pause_index_at_20(monkeypatch)
    app = make_app(tmp_path)  # the 55 bundled abstracts
    async with app.run_test(size=size) as pilot:
        try:
            await until(pilot, lambda: "indexing 20 / 55…" in shown(app), timeout=60)
            text = shown(app)
            assert text.startswith("indexing 20 / 55… (filter waits) · 55 papers")
            assert "the filter applies" not in text
            assert_fits(app)
            if size[0] == 70:
                assert text.endswith(" · …")  # the rest did not fit: said, not cut mid-word
        finally:
            go_on.set()
        await settle(app, pilot)
        await until(pilot, lambda: app.session.index is not None)
        text = shown(app)
        assert "indexing" not in text
        assert text.startswith("0 of 55")  # the unknown saved search matches nothing
        assert_fits(app)
        if size[0] == 120:
            assert "no saved search @nosuchsearch" in text
            assert "sorted by recently tagged or bookmarked" in text


async def test_loading_progress_is_first_and_knows_the_file_total_from_the_first_frame(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("abstract_reader.tui.screens.main.SYNC_LOAD_BYTES", 0)
    dumps = [
        write_dump(tmp_path / f"d{i}.txt", *[f"Abstract {i}-{n} on graphs." for n in range(50)])
        for i in range(2)
    ]
    go_on = threading.Event()
    real = CorpusBuilder.add_file_in_batches

    def add_file_in_batches(builder: CorpusBuilder, path: Path, *args: Any, **kwargs: Any) -> Any:
        if path.name == "d1.txt":  # the second file waits: the first is in
            go_on.wait(timeout=60)
        return real(builder, path, *args, **kwargs)

    monkeypatch.setattr(CorpusBuilder, "add_file_in_batches", add_file_in_batches)
    seen: list[tuple[str, ...]] = []
    real_show = StatusLine.show

    def show(status: StatusLine, parts: Any) -> None:
        seen.append(tuple(parts))
        real_show(status, parts)

    monkeypatch.setattr(StatusLine, "show", show)
    app = make_app(tmp_path, dumps)
    async with app.run_test(size=(70, 24)) as pilot:
        try:
            await until(pilot, lambda: shown(app).startswith("loading 1/2 files… · 50 papers"))
            assert_fits(app)
        finally:
            go_on.set()
        await settle(app, pilot)
        assert shown(app).startswith("100 papers")
    loading = [parts[0] for parts in seen if parts[0].startswith("loading")]
    assert loading[0] == "loading 0/2 files…"  # the total is known before the first file
    assert all("/2 files…" in part for part in loading)
    assert seen[0][:2] == ("loading 0/2 files…", "0 papers")


def test_fit_status_drops_whole_parts_from_the_end() -> None:
    parts = ["loading 3/20 files…", "9,899 papers", "9,899 unread", "0 bookmarked"]
    assert fit_status(parts, 200) == " · ".join(parts)
    assert fit_status(parts, 50) == "loading 3/20 files… · 9,899 papers · …"
    assert fit_status(parts, 10) == "loading…"  # not even the first part: cut, with "…"
    assert fit_status(["ignored: 論文論文"], 12) == "ignored:…"  # wide characters count twice
