"""The parsed-corpus cache: same papers as parsing, never trusted when in doubt."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from abstract_reader import corpus_cache as cc
from abstract_reader.corpus import Corpus, CorpusBuilder, LoadError, load_corpus
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
    # past `MIN_BYTES` (4 MiB), which the CLI's cache needs, in 7,000 abstracts of ~650
    # bytes (a dump's usual length) rather than 70,000 short ones: the same bytes, a tenth
    # of the rows to list twice
    filler = " ".join(f"word{k} of the method" for k in range(32))
    abstracts = [f"Abstract number {n} about topic {n % 97}: {filler}." for n in range(7_000)]
    big.write_text("Big 2025 Papers\n\n" + "\n\n".join(abstracts) + "\n")
    env_cache = tmp_path / "home-cache"
    import os

    env = {**os.environ, "ABSTRACT_READER_CACHE": str(env_cache)}
    first = cli("list", "-d", str(big), env=env)
    assert (env_cache / "corpus").is_dir() and any((env_cache / "corpus").glob("*.corpus"))
    second = cli("list", "-d", str(big), env=env)
    assert first.returncode == second.returncode == 0
    assert first.stdout == second.stdout and len(second.stdout.splitlines()) == 7_000


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


def test_a_cache_written_by_other_parsing_code_is_not_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The cache keeps a dump's parse, its warnings' words too. Parsing changed, the package
    version not (an older parse said "abstract 0" where it now says "the header (line N)"),
    and a warm start showed the old words. A cache written by other parsing code is found
    neither by the dumps' stat data (the reader's warm start) nor by its key: the dump is
    parsed again, its warning as this code words it. One written by this code is used."""
    dump = tmp_path / "d.txt"
    dump.write_bytes(b"Conf 2024 Papers\n\nAn abstract with one bad \xff byte.\n")
    cache = tmp_path / "cache"
    parsed = load_corpus([dump])
    now = [str(e) for e in parsed.errors]
    assert now == [f"{dump}: invalid UTF-8 on line 3 (1 byte sequence shown as \ufffd)"]
    older = [LoadError(str(dump), "abstract 0 has invalid UTF-8", fatal=False)]  # its words
    monkeypatch.setattr(cc, "_RACY_NS", 0)  # (just written: its stat data counts all the same)
    with monkeypatch.context() as other_code:
        other_code.setattr(cc, "parser_fingerprint", lambda: "older parsing code", raising=False)
        assert cc.save(cache, cc.PendingKey([dump]), parsed, older)
    opened, _pending = cc.open_for(cache, [dump])
    assert opened is None
    again = load_corpus_cached([dump], cache, min_bytes=0)
    assert [str(e) for e in again.errors] == now
    assert _facts(again) == _facts(parsed)

    # the same, written by this code (its words told apart from a parse's): used both ways
    assert cc.save(cache, cc.PendingKey([dump]), parsed, older)
    opened, pending = cc.open_for(cache, [dump])
    assert opened is not None
    opened.confirm(pending)
    assert [str(e) for e in opened.errors] == [f"{dump}: abstract 0 has invalid UTF-8"]

    def no_parsing(*args: object) -> None:
        raise AssertionError("parsed again instead of reading the cache")

    monkeypatch.setattr(CorpusBuilder, "add_file", no_parsing)
    cached = load_corpus_cached([dump], cache, min_bytes=0)
    assert [str(e) for e in cached.errors] == [f"{dump}: abstract 0 has invalid UTF-8"]
    assert _facts(cached) == _facts(parsed)


def test_the_parser_fingerprint_covers_every_module_parsing_imports(tmp_path: Path) -> None:
    """`PARSER_MODULES` is every module of the package that parsing dumps (titles derived
    in the title process too) and caching them imports: a module added to that path and not
    to the list would change the parse without changing the cache's key."""
    first = tmp_path / "a.txt"
    first.write_text("Conf 2024 Papers\n\nOne abstract about caches. It is short.\n")
    second = tmp_path / "b.txt"
    second.write_bytes(b"Another abstract, its byte \xff invalid.\n")
    code = (
        "import sys\n"
        "from pathlib import Path\n"
        "from abstract_reader.corpus import CorpusBuilder\n"
        "from abstract_reader.corpus_cache import PARSER_MODULES, load_corpus_cached\n"
        "files = [Path(f) for f in sys.argv[1:3]]\n"
        "builder = CorpusBuilder(files, titler=True)\n"
        "for path in files:\n"
        "    builder.add_file(path)\n"
        "builder.finish()\n"
        "load_corpus_cached(files, Path(sys.argv[3]), min_bytes=0)\n"
        "load_corpus_cached(files, Path(sys.argv[3]), min_bytes=0)\n"
        "used = {n.split('.')[1] if '.' in n else '__init__' for n in sys.modules\n"
        "        if n.split('.')[0] == 'abstract_reader'}\n"
        "print(sorted(used - set(PARSER_MODULES)), 'text' in used)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code, str(first), str(second), str(tmp_path / "cache")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[] True"
