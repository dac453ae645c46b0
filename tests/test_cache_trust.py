"""The caches (parsed corpus, search index) can never change what the user sees: stale,
damaged or crafted cache files give exactly what parsing and indexing the dumps give."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from abstract_reader.cachefile import SECRET_NAME, secret, write_atomically
from abstract_reader.corpus import Corpus, Paper, load_corpus, paper_id
from abstract_reader.corpus_cache import key_for, load_corpus_cached, save
from abstract_reader.search import SearchIndex, cache_key_for
from abstract_reader.search import cache as index_cache

from .conftest import cli, write_dump

ABSTRACTS = [
    "Robust estimation of the mean under heavy tails.",
    "Graph neural networks for molecules, with an attention module.",
    "A study of the effect of the learning rate on the loss of the model.",
    "Diffusion models of images: sampling, guidance and safety.",
]
QUERIES = ["robust", "of the", '"of the"', "graph neural", "mod", "!robust", "Diffusion"]


def _facts(corpus: Corpus) -> list[tuple[object, ...]]:
    return [
        (p.id, p.abstract, p.title, p.venue, p.year, [(s.file, s.index) for s in p.sources])
        for p in corpus.papers
    ]


def _dump(tmp_path: Path) -> Path:
    return write_dump(tmp_path / "d.txt", *ABSTRACTS)


def test_a_dump_edited_with_size_and_mtime_kept_is_parsed_again(tmp_path: Path) -> None:
    dump = _dump(tmp_path)
    cache = tmp_path / "cache"
    load_corpus_cached([dump], cache, min_bytes=0)
    st_before = os.stat(dump)
    text = dump.read_text().replace("Robust", "Sturdy")  # same length
    dump.write_text(text)
    os.utime(dump, ns=(st_before.st_atime_ns, st_before.st_mtime_ns))  # like cp -p, rsync
    assert os.stat(dump).st_size == st_before.st_size
    again = load_corpus_cached([dump], cache, min_bytes=0)
    assert _facts(again) == _facts(load_corpus([dump]))
    assert any(p.abstract.startswith("Sturdy") for p in again.papers)


def _crafted(corpus: Corpus, change: str) -> Corpus:
    papers = [
        Paper(p.id, p.abstract, p.title, venue=p.venue, year=p.year, sources=list(p.sources))
        for p in corpus.papers
    ]
    if change == "swap":  # another paper's text under an id
        papers[0].abstract, papers[1].abstract = papers[1].abstract, papers[0].abstract
    elif change == "escape":  # raw escape sequences for the terminal
        papers[0].abstract = "\x1b]52;c;ZWNobyBwd25lZA==\x07 clipboard"
    elif change == "title":
        papers[0].title = "\x1b[2J\u202e wiped"
    elif change == "year":
        papers[0].year = 10**12
    elif change == "foreign-file":
        papers[0].sources[0] = type(papers[0].sources[0])("/etc/passwd", 1)
    elif change == "duplicate":
        papers[1] = papers[0]
    return Corpus(papers=papers, files=list(corpus.files))


def _save_crafted(cache: Path, key: str, corpus: Corpus, *, reader_has_secret: bool) -> None:
    """A well-formed cache of ``corpus`` at ``key`` in ``cache``, as an attacker makes one:
    with a secret of their own (the reader has its own secret), or none at all (the reader
    has none either: it checks the whole file)."""
    if reader_has_secret:
        elsewhere = cache.parent / "attacker"
        save(elsewhere, key, corpus, [])  # signed with the attacker's own secret
        assert secret(cache) is not None and secret(cache) != secret(elsewhere)
        (elsewhere / f"{key}.corpus").replace(cache / f"{key}.corpus")
    else:
        cache.mkdir(parents=True, exist_ok=True)
        (cache / SECRET_NAME).mkdir()  # no secret can be read or made there
        save(cache, key, corpus, [])


@pytest.mark.parametrize("reader_has_secret", [True, False], ids=["secret", "no-secret"])
@pytest.mark.parametrize("change", ["swap", "escape", "title", "year", "foreign-file", "duplicate"])
def test_a_crafted_corpus_cache_is_not_believed(
    tmp_path: Path, change: str, reader_has_secret: bool
) -> None:
    dump = _dump(tmp_path)
    cache = tmp_path / "cache"
    fresh = load_corpus([dump])
    key = key_for([dump])
    assert key is not None
    _save_crafted(cache, key, _crafted(fresh, change), reader_has_secret=reader_has_secret)
    loaded = load_corpus_cached([dump], cache, min_bytes=0)
    for paper in loaded.papers:
        assert paper.id == paper_id(paper.abstract)  # no text under another paper's id
        assert "\x1b" not in paper.abstract + paper.title
    if change == "swap":  # the same papers, only in another order: ids derived from texts
        assert sorted(_facts(loaded)[i][:2] for i in range(4)) == sorted(
            f[:2] for f in _facts(fresh)
        )
    else:
        assert _facts(loaded) == _facts(fresh)


def test_the_reader_cli_shows_no_crafted_text(tmp_path: Path) -> None:
    dump = _dump(tmp_path)
    home_cache = tmp_path / "home-cache"
    fresh = load_corpus([dump])
    key = key_for([dump])
    assert key is not None
    _save_crafted(home_cache / "corpus", key, _crafted(fresh, "escape"), reader_has_secret=True)
    env = {**os.environ, "ABSTRACT_READER_CACHE": str(home_cache)}
    # the CLI caches from 4 MB on; the crafted file sits where it would look anyway
    result = cli("show", fresh.papers[0].id, "-d", str(dump), env=env)
    assert result.returncode == 0 and "\x1b" not in result.stdout
    assert "Robust estimation" in result.stdout


def test_cache_writes_follow_no_links(tmp_path: Path) -> None:
    dump = _dump(tmp_path)
    cache = tmp_path / "cache"
    cache.mkdir()
    victim = tmp_path / "victim"
    victim.write_text("precious")
    key = key_for([dump])
    assert key is not None
    for name in (f".{key}.{os.getpid()}.tmp.npz", f"{key}.corpus"):  # old and final names
        (cache / name).symlink_to(victim)
    load_corpus_cached([dump], cache, min_bytes=0)
    assert victim.read_text() == "precious"
    assert (cache / f"{key}.corpus").is_file() and not (cache / f"{key}.corpus").is_symlink()
    index_cache = tmp_path / "index"
    index_cache.mkdir()
    corpus = load_corpus([dump])
    ikey = cache_key_for(corpus.files)
    assert ikey is not None
    for name in (f".{ikey}.{os.getpid()}.tmp.idx", f"{ikey}.idx"):
        (index_cache / name).symlink_to(victim)
    SearchIndex(corpus, cache_dir=index_cache, cache_key=ikey)
    assert victim.read_text() == "precious"
    assert not (index_cache / f"{ikey}.idx").is_symlink()


def test_a_fifo_or_link_as_cache_file_is_ignored(tmp_path: Path) -> None:
    dump = _dump(tmp_path)
    cache = tmp_path / "cache"
    fresh = load_corpus([dump])
    load_corpus_cached([dump], cache, min_bytes=0)
    key = key_for([dump])
    real = cache / f"{key}.corpus"
    real.rename(tmp_path / "elsewhere.corpus")
    real.symlink_to(tmp_path / "elsewhere.corpus")  # a link: not read (someone else's file)
    assert _facts(load_corpus_cached([dump], cache, min_bytes=0)) == _facts(fresh)
    real.unlink()
    os.mkfifo(real)  # would block a plain open() for ever
    assert _facts(load_corpus_cached([dump], cache, min_bytes=0)) == _facts(fresh)


def test_temporary_files_of_dead_processes_are_removed(tmp_path: Path) -> None:
    import subprocess
    import sys

    gone = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    stale = tmp_path / f".tmp-{int(gone.stdout)}-abc.part"
    stale.write_bytes(b"x" * 1000)
    mine = tmp_path / f".tmp-{os.getppid()}-abc.part"  # a live process's: kept
    mine.write_bytes(b"x")
    assert write_atomically(tmp_path, "new.npz", lambda h: h.write(b"data"), keep=4)
    assert not stale.exists() and mine.exists() and (tmp_path / "new.npz").read_bytes() == b"data"


def _index_arrays(path: Path) -> dict[str, np.ndarray]:
    _digest, arrays = index_cache._sections(memoryview(path.read_bytes()), len(ABSTRACTS))
    return {name: array.copy() for name, array in arrays.items()}


def _results(index: SearchIndex) -> list[list[str]]:
    return [[h.paper.id for h in index.search(q)] for q in QUERIES]


ATTACKS = ["reversed", "offsets", "beyond", "dtype", "words", "unsorted-words", "utf8"]
ATTACKS += ["misaligned", "past-the-end", "truncated", "other-corpus", "repeated-section"]


@pytest.mark.parametrize("attack", ATTACKS)
def test_a_crafted_index_cache_is_not_believed(tmp_path: Path, attack: str) -> None:
    corpus = load_corpus([_dump(tmp_path)])
    cache = tmp_path / "index"
    key = cache_key_for(corpus.files)
    assert key is not None
    fresh = SearchIndex(corpus, cache_dir=cache, cache_key=key)
    path = cache / f"{key}.idx"
    opened = SearchIndex(corpus, cache_dir=cache, cache_key=key)
    assert opened.loaded_from_cache
    docs_array = opened.text.folded.docs
    assert not docs_array.flags.writeable and not docs_array.flags.owndata  # a mapped view
    arrays = _index_arrays(path)
    digest = index_cache.corpus_digest(corpus)
    docs, offsets = arrays["text_folded_docs"], arrays["text_folded_offsets"]
    if attack == "reversed":  # every postings list in the wrong order: the same sets…
        arrays["text_folded_docs"] = docs[::-1].copy()
    elif attack == "offsets":  # words pointing at other words' papers
        shifted = offsets.copy()
        shifted[1:-1] = np.minimum(shifted[1:-1] + 1, shifted[-1])
        arrays["text_folded_offsets"] = shifted
    elif attack == "beyond":
        arrays["text_folded_docs"] = docs + np.uint32(len(corpus.papers))
    elif attack == "dtype":
        arrays["text_folded_offsets"] = offsets.astype(np.float64)
    elif attack in ("words", "unsorted-words", "utf8"):
        blob = {"words": b"zz\naa\n", "unsorted-words": b"aab\naaa\n", "utf8": b"a\xff\nb\n"}
        arrays["text_folded_words"] = np.frombuffer(blob[attack], np.uint8)
        arrays["text_folded_offsets"] = np.array([0, 1, docs.size], np.int64)
    elif attack == "other-corpus":
        digest = bytes(16)
    blob = bytearray(_index_file(len(corpus.papers), digest, arrays))
    table = index_cache._HEAD.size
    if attack == "misaligned":  # the first section one byte later
        blob[table + 40 : table + 48] = (int.from_bytes(blob[table + 40 : table + 48], "little") + 1).to_bytes(8, "little")  # fmt: skip
    elif attack == "past-the-end":  # the first section longer than the file
        blob[table + 48 : table + 56] = (len(blob)).to_bytes(8, "little")
    elif attack == "truncated":
        del blob[len(blob) // 2 :]
    elif attack == "repeated-section":
        blob[table + index_cache._SECTION.size : table + 2 * index_cache._SECTION.size] = blob[
            table : table + index_cache._SECTION.size
        ]
    tmp = cache / "crafted"
    tmp.write_bytes(bytes(blob))
    tmp.replace(path)  # as a writer does: a new file renamed over it (never changed in place)
    again = SearchIndex(corpus, cache_dir=cache, cache_key=key)
    assert not again.loaded_from_cache
    assert _results(again) == _results(fresh)
    assert _results(opened) == _results(fresh)  # the index opened before is unchanged


def _index_file(n: int, digest: bytes, arrays: dict[str, np.ndarray]) -> bytes:
    import io

    out = io.BytesIO()
    index_cache._write(out, n, digest, arrays)
    return out.getvalue()


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(data=st.data())
def test_fuzzed_cache_files_show_what_parsing_shows(tmp_path: Path, data: st.DataObject) -> None:
    """Random damage to either cache file: no traceback; what is shown equals a fresh parse
    (corpus) and a fresh index (search results)."""
    root = Path(tempfile.mkdtemp(dir=tmp_path))
    dump = _dump(root)
    fresh = load_corpus([dump])
    fresh_results = _results(SearchIndex(fresh))
    corpus_cache = root / "corpus"
    index_cache = root / "index"
    load_corpus_cached([dump], corpus_cache, min_bytes=0)
    key = cache_key_for(fresh.files)
    assert key is not None
    SearchIndex(fresh, cache_dir=index_cache, cache_key=key)
    target = data.draw(st.sampled_from([corpus_cache, index_cache]))
    (path,) = [p for p in target.iterdir() if p.suffix in (".corpus", ".idx")]
    blob = bytearray(path.read_bytes())
    for _ in range(data.draw(st.integers(1, 8))):
        kind = data.draw(st.sampled_from(["flip", "truncate", "splice"]))
        if not blob:
            break
        at = data.draw(st.integers(0, len(blob) - 1))
        if kind == "flip":
            blob[at] ^= data.draw(st.integers(1, 255))
        elif kind == "truncate":
            del blob[at:]
        else:
            blob[at:at] = data.draw(st.binary(min_size=1, max_size=64))
    path.write_bytes(bytes(blob))
    loaded = load_corpus_cached([dump], corpus_cache, min_bytes=0)
    assert _facts(loaded) == _facts(fresh)
    index = SearchIndex(loaded, cache_dir=index_cache, cache_key=key)
    assert _results(index) == fresh_results
