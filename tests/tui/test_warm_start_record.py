"""The reader's cold start records its corpus cache once saved (checked again from the file,
in the background), so that the very next start shows the cache's rows without hashing its
texts; a warm start that had to check them records the file for the one after. What is
shown is what parsing shows, every time."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from abstract_reader import corpus_cache as cc
from abstract_reader.corpus import load_corpus
from abstract_reader.search import SearchIndex

from ..conftest import write_dump
from .conftest import listed, make_app, settle, type_filter

WIDE = (140, 40)


def _join(name: str) -> None:
    for thread in threading.enumerate():
        if thread.name == name:
            thread.join(timeout=60)


def _no_checks_under_way() -> None:
    """Earlier tests' background checks (daemon threads) done: the MACs counted are ours."""
    _join("corpus-vouch")


async def test_the_next_start_shows_the_cache_without_hashing_its_texts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cc, "_RACY_NS", 0)  # (files written just now count as settled)
    monkeypatch.setattr("abstract_reader.tui.screens.main.SYNC_LOAD_BYTES", 0)  # a thread
    texts = [f"Abstract {n} on topic {n % 37}, at some length." for n in range(12_000)]
    dump = write_dump(tmp_path / "big.txt", *texts)
    expected = [h.paper.id for h in SearchIndex(load_corpus([dump])).search("topic 36")]
    macs = 0
    chunk_mac = cc._chunk_mac

    def counted(*args: Any, **kwargs: Any) -> bytes:
        nonlocal macs
        macs += 1
        return chunk_mac(*args, **kwargs)

    _no_checks_under_way()
    monkeypatch.setattr(cc, "_chunk_mac", counted)
    corpus_dir = tmp_path / "corpus"

    async def start() -> tuple[list[str], list[str]]:
        app = make_app(tmp_path, [dump])
        async with app.run_test(size=WIDE) as pilot:
            await settle(app, pilot)
            assert app.session.index is not None
            assert [h.paper.id for h in app.session.index.search("topic 36")] == expected
            shown, ids = listed(app), app.session.corpus.papers.ids()
            await type_filter(app, pilot, "topic 36")
            assert len(listed(app)) == len(expected)
        return shown, ids

    cold = await start()  # parsed, saved (3 MACs made), checked again and recorded
    _join("corpus-save")
    _join("corpus-vouch")
    assert len(list(corpus_dir.glob("*.checked"))) == 1
    assert macs == 6
    macs = 0
    assert await start() == cold  # the record holds: no text hashed
    assert macs == 0

    for record in corpus_dir.glob("*.checked"):
        record.unlink()
    assert await start() == cold  # no record: every chunk's MAC checked, then recorded
    assert macs == 3
    assert len(list(corpus_dir.glob("*.checked"))) == 1
    macs = 0
    assert await start() == cold
    assert macs == 0
