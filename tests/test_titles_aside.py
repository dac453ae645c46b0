"""Derived titles made by a helper process while the dumps are parsed: the same papers,
titles, ids, sources and errors as when this process derives them, whatever goes wrong."""

from __future__ import annotations

from pathlib import Path

import pytest

from abstract_reader import corpus as corpus_module
from abstract_reader.corpus import Corpus, CorpusBuilder

from .conftest import write_dump

ABSTRACTS = [
    "We propose Gradient Surgery (GS), a method for multi-task learning.",
    "This paper studies the robustness of graph neural networks to noise.",
    "Linked Paper One: a study of attention. We find that heads specialise.",
    "We introduce a benchmark called TinyBench for evaluating small models.",
    "Diffusion models are shown to memorise; we measure how often that happens.",
    "We propose Gradient Surgery (GS), a method for multi-task learning.",  # a duplicate
    "Our method, realized in FastNet (FN), trains twice as quickly.",
]


def _dumps(tmp_path: Path) -> list[Path]:
    paths = []
    for n in range(4):
        body = [f"{a} Variant {n}-{i}." if i % 3 else a for i, a in enumerate(ABSTRACTS)]
        paths.append(write_dump(tmp_path / f"d{n}.txt", *body))
    (tmp_path / "empty.txt").write_text("")
    paths.insert(2, tmp_path / "empty.txt")  # a file that does not load: skipped by both
    paths.append(tmp_path / "missing.txt")
    return paths


def _load(paths: list[Path], aside: bool, batch: int = 3) -> Corpus:
    builder = CorpusBuilder(paths)
    if aside:
        assert builder.derive_titles_aside(min_bytes=0, batch=batch)
    try:
        for path in builder.files:
            for _rows in builder.add_file_in_batches(path, batch):
                pass
    finally:
        builder.close()
    return builder.finish()


def _shown(corpus: Corpus) -> list[tuple[str, str, bool, list[tuple[str, int]]]]:
    return [
        (p.id, p.title, p.title_derived, [(s.file, s.index) for s in p.sources])
        for p in corpus.papers
    ]


def test_titles_from_the_helper_are_the_titles_derived_here(tmp_path: Path) -> None:
    paths = _dumps(tmp_path)
    here = _load(paths, aside=False)
    aside = _load(paths, aside=True)
    assert _shown(aside) == _shown(here)
    assert [str(e) for e in aside.errors] == [str(e) for e in here.errors]
    assert "Gradient Surgery" in here.papers[0].title  # a real derived title, not a stand-in
    assert len({p.title for p in aside.papers}) == len(aside.papers)  # still made distinct


def test_a_dump_changed_between_the_two_reads_gets_titles_of_what_was_read_here(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = _dumps(tmp_path)
    builder = CorpusBuilder(paths)
    assert builder.derive_titles_aside(min_bytes=0, batch=3)
    # the helper reads every dump soon; this process reads d1 only after it was rewritten
    first = builder.files[0]
    list(builder.add_file_in_batches(first, 3))
    changed = "We propose Changed Method (CM), a different contribution entirely."
    write_dump(paths[1], changed, *ABSTRACTS[1:4])
    for path in builder.files[1:]:
        list(builder.add_file_in_batches(path, 3))
    corpus = builder.finish()
    titles = {p.abstract: p.title for p in corpus.papers}
    assert "Changed Method" in titles[changed]


def test_a_helper_that_fails_leaves_the_titles_to_this_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = _dumps(tmp_path)
    here = _load(paths, aside=False)
    for code in ("import sys; sys.exit(3)", "print('F 1 2'); print('nonsense')"):
        monkeypatch.setattr(corpus_module, "_HELPER_CODE", code)
        assert _shown(_load(paths, aside=True)) == _shown(here)


def test_small_corpora_need_no_helper(tmp_path: Path) -> None:
    builder = CorpusBuilder(_dumps(tmp_path))
    assert not builder.derive_titles_aside()  # far below TITLES_ASIDE_MIN_BYTES


def test_the_cli_lists_the_same_titles_when_a_helper_derives_them(tmp_path: Path) -> None:
    import json
    import os

    from .conftest import cli

    filler = "We measure it on many tasks and report the results in detail. " * 18
    folder = tmp_path / "dumps"
    folder.mkdir()
    for n in range(3):  # ~9 MiB in all: over TITLES_ASIDE_MIN_BYTES, so the helper runs
        abstracts = [
            f"We propose Method{n}x{i} (M{n}X{i}), a way to learn task {i}. {filler}"
            for i in range(2_700)
        ]
        write_dump(folder / f"d{n}.txt", *abstracts)
    assert sum(p.stat().st_size for p in folder.iterdir()) >= corpus_module.TITLES_ASIDE_MIN_BYTES
    here = _load(sorted(folder.iterdir()), aside=False, batch=corpus_module.BATCH)
    env = {**os.environ, "ABSTRACT_READER_CACHE": str(tmp_path / "cache")}
    result = cli("list", "-d", str(folder), "--json", db=tmp_path / "lib.sqlite3", env=env)
    assert result.returncode == 0, result.stderr
    listed = {row["id"]: row["title"] for row in map(json.loads, result.stdout.splitlines())}
    assert listed == {p.id: p.title for p in here.papers}
