"""Dumps of hostile sizes in the reader: a dump over the size limit is one load error naming
it, and the other dumps load and can be filtered as ever."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from abstract_reader import corpus as corpus_module

from ..conftest import write_dump
from .conftest import listed, make_app, settle, type_filter, until, view_text

WIDE = (140, 40)


def _status(app: Any) -> str:
    return str(app.query_one("#status").render())


async def test_a_dump_over_the_size_limit_is_one_load_error_and_the_rest_loads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(corpus_module, "MAX_DUMP_BYTES", 4096)
    big = write_dump(tmp_path / "big.txt", *(f"Alpha paper {n} on kernels." for n in range(400)))
    good = write_dump(tmp_path / "good.txt", *(f"Beta paper {n} on graphs." for n in range(40)))
    app = make_app(tmp_path, [big, good])
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        await until(pilot, lambda: "1 load error" in _status(app))
        assert [str(e) for e in app.session.corpus.errors] == [
            f"{big}: too large ({big.stat().st_size:,} bytes; a dump is read up to 4,096"
            " bytes: split it into smaller dumps); skipped"
        ]
        assert len(listed(app)) == 40
        await type_filter(app, pilot, "graphs")
        assert len(listed(app)) == 40
        await type_filter(app, pilot, "kernels")
        assert listed(app) == []


async def test_an_abstract_repeated_many_times_names_ten_sources_and_counts_the_rest(
    tmp_path: Path,
) -> None:
    """A dump repeating one abstract three million times made one paper with three million
    sources, all on its "sources:" line: pressing j took 71 s (the view drew that line). The
    view names the first ten and counts the rest; moving stays quick."""
    same = write_dump(tmp_path / "same.txt", *(["No abstract available."] * 500))
    good = write_dump(tmp_path / "good.txt", "A real abstract on kernels.")
    app = make_app(tmp_path, [same, good])
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        assert len(listed(app)) == 2
        await until(pilot, lambda: "… and 490 more" in view_text(app))
        text = view_text(app)
        assert "same.txt #10," in text and "same.txt #11" not in text
        await pilot.press("j")
        await until(pilot, lambda: "source: good.txt #1" in view_text(app))
        await pilot.press("k")
        await until(pilot, lambda: "… and 490 more" in view_text(app))
