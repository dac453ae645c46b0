"""A warm start (the corpus cache present) maps the cache and shows rows chunk by chunk as
they are checked: the same papers in the same order as a cold start, never a refused text."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from abstract_reader import corpus_cache
from abstract_reader.cachefile import SECRET_NAME
from abstract_reader.corpus import CorpusBuilder
from abstract_reader.tui.screens.main import MainScreen

from ..cache_edit import edit_cache, put_text
from ..conftest import write_dump
from .conftest import listed, make_app, settle

WIDE = (140, 40)


def _dump(tmp_path: Path) -> Path:
    abstracts = [f"Abstract {n} on topic {n % 89}, checked chunk by chunk." for n in range(12_000)]
    return write_dump(tmp_path / "big.txt", *abstracts)


def _spy(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    seen: list[int] = []
    original = MainScreen._papers_arrived

    def spy(self: MainScreen, done: int, total: int) -> None:
        seen.append(len(self.session.corpus.papers))
        original(self, done, total)

    monkeypatch.setattr(MainScreen, "_papers_arrived", spy)
    monkeypatch.setattr("abstract_reader.tui.screens.main.SYNC_LOAD_BYTES", 0)
    return seen


async def _cold(tmp_path: Path, dump: Path) -> tuple[list[str], list[str]]:
    app = make_app(tmp_path, [dump])
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        assert app.main.loaded == 12_000
        return app.session.corpus.papers.ids(), listed(app)


def _in_step(monkeypatch: pytest.MonkeyPatch, seen: list[int]) -> None:
    """The cache's chunks are published no faster than the screen takes them: each waits
    until the list has shown the rows before it (as on a large corpus, where checking a
    chunk takes longer than drawing the count), so what the user sees at each chunk can be
    asserted."""
    original = corpus_cache.Opened.publish

    def publish(self: corpus_cache.Opened, table: Any) -> Any:
        for rows in original(self, table):
            yield rows  # (the loader posts these rows, then asks for the next chunk)
            deadline = time.monotonic() + 10
            while rows.stop not in seen and time.monotonic() < deadline:
                time.sleep(0.002)  # (the loading thread, waiting for the UI thread)

    monkeypatch.setattr(corpus_cache.Opened, "publish", publish)


def _no_parsing(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("parsed instead of reading the cache")

    monkeypatch.setattr(CorpusBuilder, "add_file_in_batches", refuse)


async def test_a_warm_start_shows_rows_while_the_cache_is_checked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dump = _dump(tmp_path)
    seen = _spy(monkeypatch)
    cold_ids, cold_rows = await _cold(tmp_path, dump)
    assert list((tmp_path / "corpus").glob("*.corpus"))  # saved beside the index build
    seen.clear()
    _no_parsing(monkeypatch)
    _in_step(monkeypatch, seen)
    app = make_app(tmp_path, [dump])
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        assert app.session.corpus.papers.ids() == cold_ids  # the same papers, same order
        assert listed(app) == cold_rows
    assert 5000 in seen and 10_000 in seen  # rows arrived chunk by chunk
    assert seen.index(5000) < seen.index(10_000) < seen.index(12_000)


@pytest.mark.parametrize("text", [b"\x1b[2J", b"B"], ids=["escape", "letter"])
async def test_a_cache_refused_halfway_is_cleared_and_the_dump_parsed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: bytes
) -> None:
    dump = _dump(tmp_path)
    seen = _spy(monkeypatch)
    cold_ids, cold_rows = await _cold(tmp_path, dump)
    (path,) = (tmp_path / "corpus").glob("*.corpus")
    # in the last chunk; the header as it was (its MAC holds), that chunk's MAC fails
    edit_cache(path, lambda arrays: put_text(arrays, 11_000, text), numbers_crc=False)
    seen.clear()
    _in_step(monkeypatch, seen)
    app = make_app(tmp_path, [dump])
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        assert app.session.corpus.papers.ids() == cold_ids
        assert listed(app) == cold_rows
        assert all("\x1b" not in p.abstract for p in app.session.corpus.papers)
    assert 10_000 in seen and 0 in seen[seen.index(10_000) :]  # shown, cleared, parsed


async def test_without_the_secret_a_warm_start_checks_the_cache_in_full(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The secret gone (or unreadable): the cache is not refused but checked as untrusted
    input, text by text and id by id; the same papers, no parsing."""
    dump = _dump(tmp_path)
    seen = _spy(monkeypatch)
    cold_ids, cold_rows = await _cold(tmp_path, dump)
    (tmp_path / "corpus" / SECRET_NAME).unlink()
    checked: list[int] = []
    original = corpus_cache._check_chunk

    def spy(blob: Any, offsets: Any, first: int, last: int) -> Any:
        checked.append(first)
        return original(blob, offsets, first, last)

    monkeypatch.setattr(corpus_cache, "_check_chunk", spy)
    _no_parsing(monkeypatch)
    seen.clear()
    app = make_app(tmp_path, [dump])
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        assert app.session.corpus.papers.ids() == cold_ids
        assert listed(app) == cold_rows
    assert checked == [0, 5000, 10_000]


async def test_rows_shown_before_the_dumps_key_are_replaced_if_it_disagrees(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A warm start finds its cache by the dumps' stat data and shows rows while their
    SHA-256 is taken; had the dump changed with the same stat data (as if the kernel
    allowed it), the key disagrees: what was shown goes, the dump is parsed."""
    monkeypatch.setattr(corpus_cache, "_RACY_NS", 0)
    dump = _dump(tmp_path)
    seen = _spy(monkeypatch)
    await _cold(tmp_path, dump)
    recorded = corpus_cache.dump_stats([dump])
    dump.write_text(dump.read_text().replace("Abstract 11000 ", "Changed 11000 "))
    monkeypatch.setattr(corpus_cache, "dump_stats", lambda files: recorded)
    seen.clear()
    _in_step(monkeypatch, seen)
    app = make_app(tmp_path, [dump])
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        papers = app.session.corpus.papers
        assert any(p.abstract.startswith("Changed 11000 ") for p in papers)
        assert not any(p.abstract.startswith("Abstract 11000 ") for p in papers)
    assert 12_000 in seen and 0 in seen[seen.index(12_000) :]  # all shown, cleared, parsed
