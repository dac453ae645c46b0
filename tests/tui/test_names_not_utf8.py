"""The reader on a dump whose file name is not UTF-8 (`café.txt` saved in Latin-1)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ..conftest import SEEDS
from .conftest import listed, make_app, settle, type_filter, until


async def test_the_filter_works_beside_a_dump_named_in_latin_1(tmp_path: Path) -> None:
    """The index's and what-is-new's keys took the name as text: "Building the search
    index failed", and the status said `indexing… (filter waits)` for good."""
    folder = tmp_path / "dumps"
    folder.mkdir()
    seed = sorted(SEEDS.glob("*.txt"))[0]
    (folder / seed.name).write_bytes(seed.read_bytes())
    try:
        with open(os.path.join(os.fsencode(folder), b"caf\xe9.txt"), "wb") as out:
            out.write(b"NeurIPS 2026 Papers\n\nWe present a robust xylophone method.\n")
    except OSError:
        pytest.skip("this file system refuses the name")
    app = make_app(tmp_path, [folder])
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        await until(pilot, lambda: app.session.index is not None)
        await type_filter(app, pilot, "xylophone")
        assert listed(app) == ["Robust xylophone method"]
        errors = [n.message for n in app._notifications if n.severity == "error"]
        assert not errors
