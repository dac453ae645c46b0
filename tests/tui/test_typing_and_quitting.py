"""A new query shows its best papers from the top; quitting while the index is built stops
the build (the process does not linger on a blank screen)."""

from __future__ import annotations

import re
import threading
from pathlib import Path
from typing import Any

import pytest

from abstract_reader.search import postings
from abstract_reader.tui.widgets.paper_list import PaperList

from .conftest import make_app, settle, type_filter, until


async def test_a_new_query_starts_at_its_best_paper(tmp_path: Path) -> None:
    """The cursor was on a paper that the query also matches, but not as its best: after
    typing, the cursor is on the best match at the top, not still on the old paper."""
    app = make_app(tmp_path)  # the 55 bundled abstracts
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        index = app.session.index
        assert index is not None
        paper_list = app.query_one(PaperList)
        for _ in range(6):
            await pilot.press("j")
        await settle(app, pilot)
        here = paper_list.current_id
        assert here is not None and paper_list.cursor == 6
        abstract = app.session.corpus.papers[paper_list.cursor].abstract
        query = None
        for word in dict.fromkeys(re.findall(r"[a-z]{6,}", abstract)):
            ids = [hit.paper.id for hit in index.search(word)]
            if here in ids and ids.index(here) > 0:
                query, best = word, ids[0]
                break
        assert query is not None, "no word of that abstract ranks it below another paper"
        await type_filter(app, pilot, query)
        await until(pilot, lambda: paper_list.current_id == best)
        assert paper_list.cursor == 0
        # clearing the filter keeps the paper in view: it is found in its place
        await pilot.press("escape")
        await settle(app, pilot)
        assert paper_list.current_id == best


async def test_quitting_while_the_index_is_built_stops_the_build(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(postings, "CHUNK_DOCS", 10)
    go_on = threading.Event()
    added: list[int] = []
    ended = threading.Event()
    real_add, real_build = postings._Builder.add, postings._build

    def add(builder: postings._Builder, doc0: int, answer: postings._Answer) -> None:
        if builder.papers == 20 and not go_on.is_set():  # the build pauses at 20 papers
            go_on.wait(timeout=60)
        added.append(builder.papers)
        real_add(builder, doc0, answer)

    def build(*args: Any, **kwargs: Any) -> postings._Builder:
        try:
            return real_build(*args, **kwargs)
        finally:
            ended.set()

    monkeypatch.setattr(postings._Builder, "add", add)
    monkeypatch.setattr(postings, "_build", build)
    app = make_app(tmp_path)
    try:
        async with app.run_test(size=(140, 40)) as pilot:
            await until(
                pilot, lambda: "indexing 20 / 55…" in str(app.query_one("#status").render())
            )
            await pilot.press("q")
    finally:
        go_on.set()
    assert ended.wait(timeout=60)  # the build returned (here: raised) ...
    # it stopped at the next step, not after building the other 35 papers' chunks
    assert max(added) <= 30
    assert app.session.index is None


async def test_quitting_while_the_like_model_is_built_stops_the_build(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The similarity model is built in the background once the index is ready (~15 s at a
    million papers): `q` then ends the reader at the build's next step, not after it (the
    process waited for the build: the shell came back 15 s after q)."""
    from abstract_reader.search import similar

    real_blocks, real_kept = similar._blocks, similar._kept
    go_on = threading.Event()
    steps: list[int] = []
    ended = threading.Event()
    real_prepare = similar.prepare

    def blocks(offsets: Any, block: int) -> list[tuple[int, int]]:
        return real_blocks(offsets, 20)  # many small steps (55 papers' postings)

    def kept(*args: Any) -> Any:
        steps.append(len(steps))
        if len(steps) == 3 and not go_on.is_set():  # the build pauses in its third step
            go_on.wait(timeout=60)
        return real_kept(*args)

    def prepare(*args: Any, **kwargs: Any) -> None:
        try:
            real_prepare(*args, **kwargs)
        finally:
            ended.set()

    monkeypatch.setattr(similar, "_blocks", blocks)
    monkeypatch.setattr(similar, "_kept", kept)
    monkeypatch.setattr(similar, "prepare", prepare)
    app = make_app(tmp_path)
    try:
        async with app.run_test(size=(140, 40)) as pilot:
            await until(pilot, lambda: len(steps) >= 3)
            total = len(real_blocks(app.session.index.text.folded.offsets, 20))  # type: ignore[union-attr]
            await pilot.press("q")
    finally:
        go_on.set()
    assert ended.wait(timeout=60)  # the build returned (here: stopped) ...
    # ... at its next step, not after the other blocks of both passes
    assert total > 6 and len(steps) <= 4
    assert similar._BUILT.get(app.session.index) is None  # type: ignore[arg-type]
