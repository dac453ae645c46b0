"""The reader indexes large dumps while they load (the abstracts' chunks go to the helper
process as rows come): the index is the one a build after loading gives, and quitting
mid-load stops the helper and removes its files."""

from __future__ import annotations

import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from textual.widgets import Input

from abstract_reader.corpus import CorpusBuilder, load_corpus
from abstract_reader.search import SearchIndex, postings

from ..conftest import write_dump
from ..test_index_build import _arrays
from .conftest import listed, make_app, settle, type_filter, until

WIDE = (140, 40)


def _dumps(folder: Path) -> list[Path]:
    folder.mkdir()
    return [
        write_dump(
            folder / f"d{f}.txt",
            *[f"Abstract {f}-{n} on Robust topic {n % 37} and more." for n in range(40)],
        )
        for f in range(6)
    ]


@pytest.fixture
def early_everywhere(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Every load is threaded and indexed while it goes, 7 papers a chunk; the returned
    list notes, per chunk handed to the helper, whether the load was still under way."""
    main = "abstract_reader.tui.screens.main"
    monkeypatch.setattr(f"{main}.SYNC_LOAD_BYTES", 0)
    monkeypatch.setattr(f"{main}.EARLY_INDEX_BYTES", 0)
    monkeypatch.setattr(f"{main}.EARLY_INDEX_ROWS", 1)
    monkeypatch.setattr(postings, "CHUNK_DOCS", 7)
    finished = threading.Event()
    real_finish = CorpusBuilder.finish
    real_send = postings._Helper.send_raw
    handed: list[bool] = []

    def finish(builder: CorpusBuilder) -> object:
        if threading.current_thread() is not threading.main_thread():  # the reader's load
            finished.set()
        return real_finish(builder)

    def send_raw(helper: postings._Helper, pieces: postings.RawTexts) -> int:
        handed.append(not finished.is_set())
        return real_send(helper, pieces)

    monkeypatch.setattr(CorpusBuilder, "finish", finish)
    monkeypatch.setattr(postings._Helper, "send_raw", send_raw)
    return handed


async def test_an_index_made_while_loading_is_the_fresh_one(
    tmp_path: Path, early_everywhere: list[bool]
) -> None:
    dumps = _dumps(tmp_path / "dumps")
    fresh = SearchIndex(load_corpus(dumps))
    expected = [h.paper.id for h in fresh.search("robust topic 36")]
    app = make_app(tmp_path, dumps)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        index = app.session.index
        assert index is not None and not index.loaded_from_cache
        assert any(early_everywhere)  # chunks went to the helper while the dumps loaded
        assert _arrays(index) == _arrays(fresh)
        await type_filter(app, pilot, "robust topic 36")
        assert len(listed(app)) == len(expected) == 6


async def test_quitting_mid_load_stops_the_helper_and_removes_its_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, early_everywhere: list[bool]
) -> None:
    temp = tmp_path / "tmp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    dumps = _dumps(tmp_path / "dumps")
    go_on = threading.Event()
    real_add = CorpusBuilder.add_file_in_batches

    def add_file_in_batches(
        builder: CorpusBuilder, path: Path, batch: int = 5000
    ) -> Iterator[range]:
        yield from real_add(builder, path, batch)
        if path == dumps[3]:  # the load waits (≤ 60 s) after its fourth dump
            go_on.wait(timeout=60)

    monkeypatch.setattr(CorpusBuilder, "add_file_in_batches", add_file_in_batches)
    app = make_app(tmp_path, dumps)
    try:
        async with app.run_test(size=WIDE) as pilot:
            await _until(pilot, lambda: bool(early_everywhere) and bool(list(temp.iterdir())))
            assert app.session.index is None
            await pilot.press("q")
    finally:
        go_on.set()
    deadline = time.monotonic() + 30
    while list(temp.iterdir()):  # the helper saw its stdin close: it removed its folder
        assert time.monotonic() < deadline, "the helper's folder is still there"
        time.sleep(0.05)


async def _until(pilot: object, condition: object, timeout: float = 30.0) -> None:
    from .conftest import until

    await until(pilot, condition, timeout)  # type: ignore[arg-type]


@pytest.mark.parametrize("hand_over_first", [0, 10**9], ids=["large", "small"])
async def test_m_right_after_indexing_ranks_and_the_index_ends_mapped(
    tmp_path: Path,
    early_everywhere: list[bool],
    monkeypatch: pytest.MonkeyPatch,
    hand_over_first: int,
) -> None:
    """A large corpus's index is handed over before its cache is saved and read back from
    the file (the like model waits for that); a small one's after. Either way `m` pressed
    as soon as the index is ready ranks the papers like the current one, and the index
    ends up read from its cache file, not held as built arrays."""
    monkeypatch.setattr("abstract_reader.tui.screens.main.HAND_OVER_FIRST", hand_over_first)
    dumps = _dumps(tmp_path / "dumps")
    app = make_app(tmp_path, dumps)
    async with app.run_test(size=WIDE) as pilot:
        await until(pilot, lambda: app.session.index is not None)
        await pilot.press("m")
        await settle(app, pilot)
        await until(pilot, lambda: app.query_one("#filter", Input).value.startswith("like:"))
        await until(pilot, lambda: "ranked like" in str(app.query_one("#status").render()))
        assert len(listed(app)) == 6 * 40 - 1  # every other paper, ranked
        index = app.session.index
        assert index is not None and not index.map_pending and index._mapped is not None
