"""The load problems' notice and the status count the same things in the same words: a FIFO
named directly and through its folder is one load error, not two, and the notice says where
the list outlives it."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from textual.notifications import Notification

from abstract_reader.tui.screens import main as main_screen

from ..conftest import SEEDS, write_dump
from .conftest import make_app, until

WIDE = (140, 40)


def _notices(app: Any) -> list[Notification]:
    return [n for n in app._notifications if isinstance(n, Notification)]


pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")


async def test_the_notice_and_the_status_count_a_fifo_named_twice_once(tmp_path: Path) -> None:
    folder = tmp_path / "h"
    folder.mkdir()
    for seed in sorted(SEEDS.glob("*.txt")):
        (folder / seed.name).write_bytes(seed.read_bytes())
    (folder / "empty.txt").write_bytes(b"")
    (folder / "binary.txt").write_bytes(bytes(range(256)) * 8)
    (folder / "latin.txt").write_bytes(b"Un r\xe9sum\xe9 about robust estimators of the mean.\n")
    os.mkfifo(folder / "fifo.txt")
    write_dump(tmp_path / "x.txt", "An abstract about robust estimators of the mean.")
    paths = [folder, folder / "fifo.txt", tmp_path / "x.txt", tmp_path / "x.txt"]
    app = make_app(tmp_path, paths)
    async with app.run_test(size=WIDE) as pilot:
        # (the notice is read when the load ends: a slow index build could outlast it)
        await until(pilot, lambda: any("loaded" in n.title for n in _notices(app)))
        status = str(app.query_one("#status").render())
        loads = [n for n in _notices(app) if "loaded" in n.title]
        assert len(loads) == 1, [n.title for n in loads]
        notice = loads[0]
        # 3 paths gave nothing: the empty, the binary and the FIFO file (once)
        assert "⚠ 3 load errors" in status, status
        assert notice.title == "3 load errors · 5 files loaded, 1 with warnings"
        assert notice.message.count("fifo.txt") == 1, notice.message
        assert "printed again when you quit" in notice.message
        assert notice.timeout == main_screen.LOAD_NOTICE_S <= 15


async def test_a_dump_cut_short_while_it_loads_is_named_in_the_notice(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """QA s17 #3: a dump truncated while it was read loaded in part, with no warning."""
    from abstract_reader import corpus as corpus_module

    dump = write_dump(
        tmp_path / "growing.txt",
        "We study robust estimators of the mean under heavy tails and adversarial noise.",
        "A benchmark for calibration of graph neural networks under distribution shift.",
    )
    cut = dump.read_bytes().index(b"calibration") + 5
    look = corpus_module.not_text

    def truncate_then_look(head: bytes) -> str | None:  # (between the two looks at its size)
        os.truncate(dump, cut)
        return look(head)

    monkeypatch.setattr(corpus_module, "not_text", truncate_then_look)
    app = make_app(tmp_path, [dump])
    async with app.run_test(size=WIDE) as pilot:
        await until(pilot, lambda: any("loaded" in n.title for n in _notices(app)))
        notice = next(n for n in _notices(app) if "loaded" in n.title)
        assert "1 with warnings" in notice.title, notice.title
        assert notice.message.count("changed while it was read") == 1, notice.message
        assert "growing.txt" in notice.message and "reload to read it again" in notice.message
