"""A cold start saves the parsed corpus as soon as the parse is done, beside the index build:
quitting while the index is built keeps it, and the next start reads it instead of parsing."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from abstract_reader.corpus import CorpusBuilder, load_corpus
from abstract_reader.search import SearchIndex, postings

from ..conftest import write_dump
from .conftest import listed, make_app, pause_index_build, settle, type_filter, until

WIDE = (140, 40)


async def test_quitting_while_indexing_keeps_the_parsed_corpus(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    texts = [f"Abstract {n} on topic {n % 37}." for n in range(300)]
    dump = write_dump(tmp_path / "big.txt", *texts)
    expected = [h.paper.id for h in SearchIndex(load_corpus([dump])).search("topic 36")]
    monkeypatch.setattr("abstract_reader.tui.screens.main.SYNC_LOAD_BYTES", 0)  # a thread
    real_add = postings._Builder.add
    go_on = pause_index_build(monkeypatch)  # the build pauses at 20 papers
    app = make_app(tmp_path, [dump])
    try:
        async with app.run_test(size=WIDE) as pilot:
            await until(
                pilot, lambda: "indexing 20 / 300…" in str(app.query_one("#status").render())
            )
            shown = listed(app)
            ids = app.session.corpus.papers.ids()
            await pilot.press("q")
    finally:
        go_on.set()
    assert app.session.index is None  # quit before the index was done
    for thread in threading.enumerate():  # the process waits for a save under way at exit
        if thread.name == "corpus-save":
            thread.join(timeout=60)
    assert len(list((tmp_path / "corpus").glob("*.corpus"))) == 1

    monkeypatch.setattr(postings._Builder, "add", real_add)

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("parsed again instead of reading the cache")

    monkeypatch.setattr(CorpusBuilder, "add_file_in_batches", refuse)
    app = make_app(tmp_path, [dump])
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        assert app.session.corpus.papers.ids() == ids  # the same papers, in the same order
        assert listed(app) == shown
        assert app.session.index is not None
        assert [h.paper.id for h in app.session.index.search("topic 36")] == expected
        await type_filter(app, pilot, "topic 36")
        assert len(listed(app)) == len(expected) == 8


async def test_a_cold_index_is_read_from_its_saved_file_once_ready(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After a cold build the postings saved to the cache are what the reader searches
    (mapped, not the built copies): the same results."""
    texts = [f"Abstract {n} on topic {n % 37}." for n in range(300)]
    dump = write_dump(tmp_path / "big.txt", *texts)
    expected = [h.paper.id for h in SearchIndex(load_corpus([dump])).search("topic 36")]
    monkeypatch.setattr("abstract_reader.tui.screens.main.SYNC_LOAD_BYTES", 0)  # a thread
    app = make_app(tmp_path, [dump])
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        index = app.session.index
        assert index is not None and not index.loaded_from_cache
        assert not index.map_pending
        assert not index.text.folded.docs.flags.writeable  # the saved file's pages
        assert [h.paper.id for h in index.search("topic 36")] == expected
        await type_filter(app, pilot, "topic 36")
        assert len(listed(app)) == 8
