"""The parsed-corpus cache: same papers as parsing, never trusted when in doubt."""

from __future__ import annotations

from pathlib import Path

import pytest

from abstract_reader.corpus import Corpus, CorpusBuilder, load_corpus
from abstract_reader.corpus_cache import key_for, load, load_corpus_cached

from .conftest import SEEDS, cli


def _facts(corpus: Corpus) -> list[tuple[object, ...]]:
    return [
        (
            p.id,
            p.abstract,
            p.title,
            p.title_derived,
            p.venue,
            p.year,
            [(s.file, s.index) for s in p.sources],
        )
        for p in corpus.papers
    ]


def test_cached_corpus_is_the_parsed_corpus(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"Conf 2024 Papers\n\nGood \xff abstract about caches.\n")
    paths = [SEEDS, bad, tmp_path / "missing.txt"]
    parsed = load_corpus(paths)
    first = load_corpus_cached(paths, tmp_path / "cache", min_bytes=0)  # parses and saves
    assert len(list((tmp_path / "cache").glob("*.corpus"))) == 1

    def no_parsing(*args: object) -> None:
        raise AssertionError("parsed again instead of reading the cache")

    monkeypatch.setattr(CorpusBuilder, "add_file", no_parsing)
    second = load_corpus_cached(paths, tmp_path / "cache", min_bytes=0)  # from the cache
    assert _facts(first) == _facts(second) == _facts(parsed)
    assert [str(e) for e in second.errors] == [str(e) for e in parsed.errors]
    assert second.files == parsed.files
    assert second.resolve(parsed.papers[0].id[:8]).id == parsed.papers[0].id


def test_a_changed_dump_is_parsed_again(tmp_path: Path) -> None:
    dump = tmp_path / "d.txt"
    dump.write_text("First version of an abstract about caching.\n")
    load_corpus_cached([dump], tmp_path / "cache", min_bytes=0)
    dump.write_text("A second, longer version of the abstract about caching.\n")
    again = load_corpus_cached([dump], tmp_path / "cache", min_bytes=0)
    assert again.papers[0].abstract.startswith("A second")


def test_a_damaged_cache_is_ignored(tmp_path: Path) -> None:
    dump = tmp_path / "d.txt"
    dump.write_text("An abstract about damaged caches.\n")
    load_corpus_cached([dump], tmp_path / "cache", min_bytes=0)
    key = key_for([dump])
    assert key is not None
    (tmp_path / "cache" / f"{key}.corpus").write_bytes(b"not a cache")
    assert load(tmp_path / "cache", key) is None
    again = load_corpus_cached([dump], tmp_path / "cache", min_bytes=0)
    assert again.papers[0].abstract == "An abstract about damaged caches."


def test_small_corpora_are_not_cached(tmp_path: Path) -> None:
    load_corpus_cached([SEEDS], tmp_path / "cache")  # the default threshold: 80 KB is small
    assert not (tmp_path / "cache").exists()


def test_cli_lists_the_same_papers_from_the_cache(tmp_path: Path) -> None:
    big = tmp_path / "big.txt"
    abstracts = [
        f"Abstract number {n} about topic {n % 97} with enough words to matter."
        for n in range(70_000)
    ]
    big.write_text("Big 2025 Papers\n\n" + "\n\n".join(abstracts) + "\n")
    env_cache = tmp_path / "home-cache"
    import os

    env = {**os.environ, "ABSTRACT_READER_CACHE": str(env_cache)}
    first = cli("list", "-d", str(big), env=env)
    assert (env_cache / "corpus").is_dir() and any((env_cache / "corpus").glob("*.corpus"))
    second = cli("list", "-d", str(big), env=env)
    assert first.returncode == second.returncode == 0
    assert first.stdout == second.stdout and len(second.stdout.splitlines()) == 70_000


def test_titles_made_distinct_after_parsing_come_back_from_the_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Two abstracts open alike, so their derived titles clash and one is given its id after
    # parsing (a title set on the table, not the parsed one): the cache keeps what was shown,
    # non-ASCII included, in every row around it.
    opening = "Café-scale résumé learning with Ünïcode ✓ embeddings for naïve agents"
    dump = tmp_path / "d.txt"
    dump.write_text(
        "Conf 2025 Papers\n\n"
        + "\n\n".join(
            [
                "A first abstract about ordinary things.",
                f"{opening}. It then studies one setting.",
                "Ε ένα άλλο κείμενο για τη μάθηση.",
                f"{opening}. It then studies another setting.",
                "The last abstract, about 東京 and Zürich.",
            ]
        )
        + "\n",
        encoding="utf-8",
    )
    parsed = load_corpus([dump])
    titles = [p.title for p in parsed.papers]
    assert len(set(titles)) == len(titles) == 5
    assert any("[" in t for t in titles)  # (the clash was made distinct by an id)
    load_corpus_cached([dump], tmp_path / "cache", min_bytes=0)  # parses and saves

    def no_parsing(*args: object) -> None:
        raise AssertionError("parsed again instead of reading the cache")

    monkeypatch.setattr(CorpusBuilder, "add_file", no_parsing)
    cached = load_corpus_cached([dump], tmp_path / "cache", min_bytes=0)
    assert [p.title for p in cached.papers] == titles
    assert _facts(cached) == _facts(parsed)
