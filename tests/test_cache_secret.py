"""The corpus cache is authenticated with the user's secret: a cache we wrote is believed
without checking every text and id; one we did not write (another secret, edited, chunks
moved, another corpus's renamed) is refused and the dumps parsed; without a secret every
cache is checked in full, as untrusted input."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from abstract_reader import corpus_cache as cc
from abstract_reader.cachefile import SECRET_BYTES, SECRET_NAME, secret
from abstract_reader.corpus import Corpus, CorpusBuilder, load_corpus
from abstract_reader.corpus_cache import CacheRefused, key_for, load_corpus_cached, open_cache
from abstract_reader.papertable import PaperTable

from .cache_edit import edit_cache
from .conftest import write_dump


def _facts(corpus: Corpus) -> list[tuple[object, ...]]:
    return [
        (p.id, p.abstract, p.title, p.title_derived, p.venue, p.year, p.sources)
        for p in corpus.papers
    ]


def _dumps(tmp_path: Path, n: int = 12_000) -> list[Path]:
    # every abstract (and so every derived title) of one length: chunks can be swapped whole
    a = [f"Abstract {k:06d} about topic {k % 89:02d}, with words to spare." for k in range(n)]
    return [write_dump(tmp_path / "a.txt", *a)]


class _Watch:
    """Which dumps were parsed, which chunks checked in full."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.parsed: list[Path] = []
        self.checked: list[int] = []
        add_file, check_chunk = CorpusBuilder.add_file, cc._check_chunk

        def parse(builder: CorpusBuilder, path: Path) -> int:
            self.parsed.append(path)
            return add_file(builder, path)

        def check(blob: Any, offsets: Any, first: int, last: int) -> Any:
            self.checked.append(first)
            return check_chunk(blob, offsets, first, last)

        monkeypatch.setattr(CorpusBuilder, "add_file", parse)
        monkeypatch.setattr(cc, "_check_chunk", check)


def _cached(tmp_path: Path) -> tuple[list[Path], Path, Corpus]:
    paths = _dumps(tmp_path)
    cache = tmp_path / "cache"
    fresh = load_corpus_cached(paths, cache, min_bytes=0)  # parsed, saved with a new secret
    return paths, cache, fresh


def test_the_secret_is_made_once_private_and_kept(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    assert secret(cache, create=False) is None
    made = secret(cache)
    assert made is not None and len(made) == SECRET_BYTES
    st = os.lstat(cache / SECRET_NAME)
    assert stat.S_ISREG(st.st_mode) and stat.S_IMODE(st.st_mode) == 0o600
    assert secret(cache) == secret(cache, create=False) == made
    assert secret(tmp_path / "other") != made
    assert not [p for p in cache.iterdir() if p.name != SECRET_NAME]  # no temporary file left


@pytest.mark.parametrize("kind", ["readable", "link", "folder", "short"])
def test_a_secret_that_could_be_another_s_is_not_used(tmp_path: Path, kind: str) -> None:
    cache = tmp_path / "cache"
    cache.mkdir()
    path = cache / SECRET_NAME
    theirs = tmp_path / "theirs"
    theirs.write_bytes(b"k" * SECRET_BYTES)
    theirs.chmod(0o600)
    if kind == "readable":  # others may read it: others may forge caches
        path.write_bytes(b"k" * SECRET_BYTES)
        path.chmod(0o644)
    elif kind == "link":
        path.symlink_to(theirs)
    elif kind == "folder":
        path.mkdir()
    else:
        path.write_bytes(b"k" * (SECRET_BYTES - 1))
        path.chmod(0o600)
    assert secret(cache) is None  # not believed, and not replaced either
    assert theirs.read_bytes() == b"k" * SECRET_BYTES


def test_a_cache_we_wrote_is_believed_without_checking_each_text(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths, cache, fresh = _cached(tmp_path)
    watch = _Watch(monkeypatch)
    warm = load_corpus_cached(paths, cache, min_bytes=0)
    assert watch.parsed == [] and watch.checked == []
    assert _facts(warm) == _facts(fresh) == _facts(load_corpus(paths))


def test_a_cache_written_with_another_secret_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths, cache, fresh = _cached(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    load_corpus_cached(paths, elsewhere, min_bytes=0)  # the same dumps, another secret
    key = key_for(paths)
    (elsewhere / f"{key}.corpus").replace(cache / f"{key}.corpus")
    assert open_cache(cache, str(key), paths) is None
    watch = _Watch(monkeypatch)
    again = load_corpus_cached(paths, cache, min_bytes=0)
    assert watch.parsed == paths
    assert _facts(again) == _facts(fresh)
    watch.parsed.clear()
    load_corpus_cached(paths, cache, min_bytes=0)  # the cache written again, with ours
    assert watch.parsed == [] and watch.checked == []


@pytest.mark.parametrize("lost", ["removed", "unreadable", "folder"])
def test_without_the_secret_the_cache_is_checked_in_full(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, lost: str
) -> None:
    paths, cache, fresh = _cached(tmp_path)
    path = cache / SECRET_NAME
    if lost == "removed":
        path.unlink()
    elif lost == "unreadable":  # (mode bits: root reads anything, so none that tell it)
        path.chmod(0o640)
    else:  # nothing can be read or made there: the cache is written without a MAC
        path.unlink()
        path.mkdir()
        load_corpus_cached(paths, cache, min_bytes=0)
    watch = _Watch(monkeypatch)
    warm = load_corpus_cached(paths, cache, min_bytes=0)
    assert watch.parsed == []
    assert watch.checked == [0, 5000, 10_000]  # every chunk's texts and ids, as before
    assert _facts(warm) == _facts(fresh)


def test_chunks_swapped_whole_are_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Chunks 0 and 1 exchanged with all they have (texts, ids, numbers, MACs): every
    offset still fits, every MAC is one we made — but for another place."""
    paths, cache, fresh = _cached(tmp_path)
    (path,) = cache.glob("*.corpus")

    def swap(arrays: dict[str, Any]) -> None:
        size = 5000

        def exchange(blob: np.ndarray, a: int, b: int, c: int) -> None:  # [a, b) ↔ [b, c)
            assert c - b == b - a
            blob[a:c] = np.concatenate([blob[b:c], blob[a:b]])

        for text, offsets in (("abstracts", "abstract_offsets"), ("titles", "title_offsets")):
            a, b, c = (int(arrays[offsets][i]) for i in (0, size, 2 * size))
            exchange(arrays[text], a, b, c)
        for name in cc._CHUNK_NUMBERS:
            exchange(arrays[name], 0, size, 2 * size)
        exchange(arrays["macs"], 0, cc._MAC_SIZE, 2 * cc._MAC_SIZE)

    edit_cache(path, swap, numbers_crc=False)
    key = key_for(paths)
    opened = open_cache(cache, str(key), paths)
    assert opened is not None
    with pytest.raises(CacheRefused):
        for _rows in opened.publish(PaperTable()):
            pass
    watch = _Watch(monkeypatch)
    assert _facts(load_corpus_cached(paths, cache, min_bytes=0)) == _facts(fresh)
    assert watch.parsed == paths


@pytest.mark.parametrize("secret_kept", [True, False], ids=["secret", "no-secret"])
def test_the_cache_of_other_dumps_renamed_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, secret_kept: bool
) -> None:
    """A dump changed, the cache of its old version renamed to the new version's key: its
    papers are not shown (the key is in the header, and in its MAC)."""
    paths, cache, _fresh = _cached(tmp_path)
    old_key = key_for(paths)
    text = paths[0].read_text().replace("Abstract 000007", "Changed 000007")
    paths[0].write_text(text)
    new_key = key_for(paths)
    assert new_key != old_key
    (cache / f"{old_key}.corpus").replace(cache / f"{new_key}.corpus")
    if not secret_kept:
        (cache / SECRET_NAME).unlink()
    watch = _Watch(monkeypatch)
    again = load_corpus_cached(paths, cache, min_bytes=0)
    assert watch.parsed == paths
    assert _facts(again) == _facts(load_corpus(paths))
    assert any(p.abstract.startswith("Changed 000007") for p in again.papers)


# -- first rows without waiting for the dumps' SHA-256 (`open_for`) ------------------------


class _SlowKey:
    """Hashing the dumps held until released: what returns before that did not wait for
    it. ``hashed``: files hashed (these tests' dumps are one file: the keys hashed)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        import threading

        self.release = threading.Event()
        self.hashed = 0
        content_digest = cc.content_digest

        def slow(path: Path) -> str | None:
            self.release.wait(timeout=30)
            self.hashed += 1
            return content_digest(path)

        monkeypatch.setattr(cc, "content_digest", slow)
        monkeypatch.setattr(cc, "_RACY_NS", 0)  # the dumps were just written: old enough


def test_a_warm_start_finds_its_cache_by_the_dumps_stat_data(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = _dumps(tmp_path)
    cache = tmp_path / "cache"
    slow = _SlowKey(monkeypatch)
    opened, pending = cc.open_for(cache, paths)  # cold: no cache of these files, no wait
    assert opened is None and slow.hashed == 0
    fresh = load_corpus(paths)
    slow.release.set()
    assert cc.save(cache, pending, fresh, [])
    slow.release.clear()
    opened, pending = cc.open_for(cache, paths)  # warm: found before the key is hashed
    assert opened is not None and slow.hashed == 1
    table = PaperTable()
    for _rows in opened.publish(table):
        pass
    slow.release.set()
    opened.confirm(pending)  # the key agrees: the rows are final
    assert _facts(Corpus(papers=table)) == _facts(fresh)


def test_rows_found_by_stat_data_whose_key_disagrees_are_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The dump changed but its stat data did not (which the kernel never allows through
    its file calls — as if it had): the rows are published, then `confirm` refuses them."""
    paths = _dumps(tmp_path)
    cache = tmp_path / "cache"
    _SlowKey(monkeypatch).release.set()
    opened, pending = cc.open_for(cache, paths)
    assert cc.save(cache, pending, load_corpus(paths), [])
    recorded = cc.dump_stats(paths)
    paths[0].write_text(paths[0].read_text().replace("Abstract 000007", "Changed 000007"))
    monkeypatch.setattr(cc, "dump_stats", lambda files: recorded)
    opened, pending = cc.open_for(cache, paths)
    assert opened is not None
    for _rows in opened.publish(PaperTable()):
        pass
    with pytest.raises(CacheRefused):
        opened.confirm(pending)


def test_a_dump_changed_while_parsed_leaves_no_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = _dumps(tmp_path)
    cache = tmp_path / "cache"
    _SlowKey(monkeypatch).release.set()
    opened, pending = cc.open_for(cache, paths)
    assert opened is None
    corpus = load_corpus(paths)
    paths[0].write_text(paths[0].read_text().replace("Abstract 000007", "Changed 000007"))
    assert not cc.save(cache, pending, corpus, [])  # its key may be of either version
    assert not list(cache.glob("*.corpus"))


def test_without_the_secret_stat_data_finds_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = _dumps(tmp_path)
    cache = tmp_path / "cache"
    slow = _SlowKey(monkeypatch)
    slow.release.set()
    opened, pending = cc.open_for(cache, paths)
    assert cc.save(cache, pending, load_corpus(paths), [])
    (cache / SECRET_NAME).unlink()  # the stat data in the header is then unauthenticated
    opened, pending = cc.open_for(cache, paths)  # found by the key, waited for
    assert opened is not None and slow.hashed == 2
