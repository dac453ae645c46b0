"""The reader's cold start with the titles derived by a helper process: the rows show the
same titles, in the same order, searchable by title, as when the reader derives them."""

from __future__ import annotations

from pathlib import Path

import pytest

from abstract_reader.corpus import load_corpus

from ..conftest import write_dump
from .conftest import listed, make_app, settle, type_filter


def _dumps(tmp_path: Path) -> list[Path]:
    names = ["Gradient Surgery", "Tiny Bench", "Fast Net", "Graph Lens", "Mixture Probe"]
    paths = []
    for n in range(3):
        abstracts = [
            f"We propose {name} {n}{i} ({name[:2].upper()}{n}{i}), a method for task {i}."
            for i, name in enumerate(names * 3)
        ]
        paths.append(write_dump(tmp_path / f"dump{n}.txt", *abstracts))
    return paths


@pytest.mark.parametrize("aside", [False, True])
async def test_a_cold_start_shows_the_same_titles_with_the_titles_helper(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, aside: bool
) -> None:
    paths = _dumps(tmp_path)
    expected = [p.title for p in load_corpus(paths).papers]  # derived here: the reference
    monkeypatch.setattr("abstract_reader.tui.screens.main.SYNC_LOAD_BYTES", 0)  # a thread
    monkeypatch.setattr("abstract_reader.corpus.TITLES_ASIDE_MIN_BYTES", 0 if aside else 1 << 40)
    app = make_app(tmp_path, paths)
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        assert sorted(listed(app)) == sorted(expected)
        assert "TI11: Tiny Bench 11" in listed(app)  # a title the helper derived
        await type_filter(app, pilot, "title:tiny")  # titles are searched too
        await settle(app, pilot)
        shown = listed(app)
        assert len(shown) == 9 and all("Tiny Bench" in t for t in shown)
