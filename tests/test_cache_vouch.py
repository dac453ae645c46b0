"""A corpus cache whose every chunk MAC held once is recorded (`Opened.record`: its stat
data, authenticated with the user's secret), so that the next start need not hash its texts
again; any write to the file since (a new ctime), another file in its place, a record not
made with the secret, or a file changed too recently to tell: the MACs are checked as before,
and what is shown is always what parsing shows. The dumps' content key is hashed every time."""

from __future__ import annotations

import json
import os
import shutil
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from abstract_reader import corpus_cache as cc
from abstract_reader.corpus import Corpus, load_corpus
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
    a = [f"Abstract {k:06d} about topic {k % 89:02d}, with words to spare." for k in range(n)]
    b = [f"Another abstract {k:05d} on matters {k % 13:02d}." for k in range(n // 4)]
    return [write_dump(tmp_path / "a.txt", *a), write_dump(tmp_path / "b.txt", *b)]


class _Macs:
    """How many chunk MACs were computed."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        for thread in threading.enumerate():  # earlier tests' background checks: not ours
            if thread.name == "corpus-vouch":
                thread.join(timeout=60)
        self.count = 0
        chunk_mac = cc._chunk_mac

        def counted(*args: Any, **kwargs: Any) -> bytes:
            self.count += 1
            return chunk_mac(*args, **kwargs)

        monkeypatch.setattr(cc, "_chunk_mac", counted)


def _publish(opened: cc.Opened) -> Corpus:
    table = PaperTable()
    for _rows in opened.publish(table):
        pass
    return Corpus(papers=table)


def _after_a_tick(path: Path) -> None:
    """Wait until the clock is past the file's last change (a write now gets a later ctime
    even where timestamps are coarse)."""
    ctime = path.stat().st_ctime_ns
    deadline = time.monotonic() + 5
    while time.time_ns() <= ctime + 20_000_000 and time.monotonic() < deadline:
        time.sleep(0.005)


def _recorded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[list[Path], Path, str]:
    """Dumps whose cache was saved, checked in full once, and recorded."""
    monkeypatch.setattr(cc, "_RACY_NS", 0)  # (the file was just written: old enough here)
    paths = _dumps(tmp_path)
    cache = tmp_path / "cache"
    load_corpus_cached(paths, cache, min_bytes=0)
    key = str(key_for(paths))
    opened = open_cache(cache, key, paths)
    assert opened is not None and not opened.vouched
    _publish(opened)
    assert opened.record(cache)
    return paths, cache, key


def test_a_cache_checked_once_is_believed_by_its_record(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths, cache, key = _recorded(tmp_path, monkeypatch)
    macs = _Macs(monkeypatch)
    opened = open_cache(cache, key, paths)
    assert opened is not None and opened.vouched
    assert _facts(_publish(opened)) == _facts(load_corpus(paths))
    assert macs.count == 0  # no text hashed again
    assert not opened.record(cache)  # (nothing more to record)


def test_a_cache_written_into_after_its_record_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths, cache, key = _recorded(tmp_path, monkeypatch)
    path = cache / f"{key}.corpus"
    _after_a_tick(path)
    at = path.read_bytes().index(b"Abstract 007001")
    with path.open("r+b") as handle:  # written into in place, as a bad disk or program would
        handle.seek(at)
        handle.write(b"Planted!")
    opened = open_cache(cache, key, paths)
    assert opened is not None and not opened.vouched
    with pytest.raises(CacheRefused):
        _publish(opened)
    shown = load_corpus_cached(paths, cache, min_bytes=0)  # refused: the dumps are parsed
    assert _facts(shown) == _facts(load_corpus(paths))
    assert not any("Planted" in p.abstract for p in shown.papers)


@pytest.mark.parametrize("attack", ["copied in place", "forged record", "garbage", "other file"])
def test_a_record_that_is_not_of_this_file_is_not_believed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, attack: str
) -> None:
    paths, cache, key = _recorded(tmp_path, monkeypatch)
    path, record = cache / f"{key}.corpus", cache / f"{key}.checked"
    if attack == "copied in place":  # the same bytes, another file (inode, ctime)
        shutil.copyfile(path, tmp_path / "copy")
        (tmp_path / "copy").replace(path)
    elif attack == "forged record":  # the right stat data, a MAC made without the secret
        data = json.loads(record.read_bytes())
        data["mac"] = bytes(32).hex()
        record.write_text(json.dumps(data))
    elif attack == "garbage":
        record.write_bytes(b"\xff{not json")
    else:  # the record of another cache file, renamed to this one's
        (tmp_path / "other").mkdir()
        other = _dumps(tmp_path / "other", n=6000)
        load_corpus_cached(other, cache, min_bytes=0)
        other_key = str(key_for(other))
        opened = open_cache(cache, other_key, other)
        assert opened is not None
        _publish(opened)
        assert opened.record(cache)
        (cache / f"{other_key}.checked").replace(record)
    macs = _Macs(monkeypatch)
    opened = open_cache(cache, key, paths)
    assert opened is not None and not opened.vouched
    assert _facts(_publish(opened)) == _facts(load_corpus(paths))
    assert macs.count == 3  # every chunk's MAC checked, as without a record


def test_a_cache_changed_too_recently_to_tell_is_not_recorded(tmp_path: Path) -> None:
    """A write in the same clock tick as the file's last change could keep its ctime: a
    file changed less than `_RACY_NS` before it is read gets no record."""
    paths = _dumps(tmp_path)
    cache = tmp_path / "cache"
    load_corpus_cached(paths, cache, min_bytes=0)
    opened = open_cache(cache, str(key_for(paths)), paths)
    assert opened is not None
    _publish(opened)
    assert not opened.record(cache)
    assert not list(cache.glob("*.checked"))


def test_a_record_is_only_made_after_every_chunk_checked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cc, "_RACY_NS", 0)
    paths = _dumps(tmp_path)
    cache = tmp_path / "cache"
    load_corpus_cached(paths, cache, min_bytes=0)
    opened = open_cache(cache, str(key_for(paths)), paths)
    assert opened is not None
    rows = opened.publish(PaperTable())
    next(rows)  # one chunk of three
    rows.close()
    assert not opened.record(cache)


def test_saving_records_the_cache_in_the_background(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the reader's cold start does: saved, then checked again from the file and
    recorded by a thread of its own; the next start hashes no text."""
    monkeypatch.setattr(cc, "_RACY_NS", 0)
    paths = _dumps(tmp_path)
    cache = tmp_path / "cache"
    fresh = load_corpus(paths)
    assert cc.save_and_vouch(cache, str(key_for(paths)), fresh, [])
    for thread in threading.enumerate():
        if thread.name == "corpus-vouch":
            thread.join(timeout=60)
    assert len(list(cache.glob("*.checked"))) == 1
    macs = _Macs(monkeypatch)
    opened = open_cache(cache, str(key_for(paths)), paths)
    assert opened is not None and opened.vouched
    assert _facts(_publish(opened)) == _facts(fresh)
    assert macs.count == 0


def test_the_background_check_waits_for_the_readers_background_work(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The reader's cold start passes the event its similarity model sets when built: the
    second check (its pages and arrays) does not run beside that build, the session's peak;
    the cache is recorded once the event is set."""
    monkeypatch.setattr(cc, "_RACY_NS", 0)
    paths = _dumps(tmp_path, n=3_000)
    cache = tmp_path / "cache"
    after = threading.Event()
    assert cc.save_and_vouch(cache, str(key_for(paths)), load_corpus(paths), [], after=after)
    (vouch,) = [t for t in threading.enumerate() if t.name == "corpus-vouch"]
    vouch.join(timeout=0.5)  # (what it would do meanwhile: it is still waiting)
    assert vouch.is_alive() and not list(cache.glob("*.checked"))
    after.set()
    vouch.join(timeout=60)
    assert len(list(cache.glob("*.checked"))) == 1


def test_the_content_key_is_the_same_however_it_is_hashed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The key hashed on its thread, with the caller of `result` helping, is `key_for`'s;
    a dump changed meanwhile gives none."""
    monkeypatch.setattr(cc, "_RACY_NS", 0)
    paths = [
        write_dump(tmp_path / f"d{n}.txt", *(f"Text {n} {k}." for k in range(50))) for n in range(9)
    ]
    pending = cc.PendingKey(paths)
    assert pending.stats is not None  # (hashed on a thread, not up front)
    assert pending.result() == key_for(paths) is not None
    assert cc.PendingKey([]).result() == key_for([])
    pending = cc.PendingKey(paths)
    pending.result()
    paths[3].write_text(paths[3].read_text() + "\n\nOne more.\n")
    os.utime(paths[3], ns=(paths[3].stat().st_atime_ns, paths[3].stat().st_mtime_ns))
    assert pending.result() is None


# -- the index cache ---------------------------------------------------------------------------
def _index_setup(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[Corpus, Path, str, list[str]]:
    """A corpus, the reader's cache folders (the secret in ``corpus``), its index saved
    there, checked in full by the next start and recorded."""
    from abstract_reader.cachefile import secret
    from abstract_reader.search import SearchIndex, cache_key_for
    from abstract_reader.search import cache as index_cache

    monkeypatch.setattr(index_cache, "_RACY_NS", 0)
    corpus = load_corpus(_dumps(tmp_path, n=3000))
    root = tmp_path / "cache"
    assert secret(root / "corpus") is not None
    index_dir = root / "index"
    key = str(cache_key_for(corpus.files))
    expected = [h.paper.id for h in SearchIndex(corpus).search("topic 07")]
    SearchIndex(corpus, cache_dir=index_dir, cache_key=key)  # built, saved
    assert not (index_dir / f"{key}.checked").exists()
    checks = _Checks(monkeypatch)
    assert SearchIndex(corpus, cache_dir=index_dir, cache_key=key).loaded_from_cache
    assert checks.count == 2  # checked in full, then recorded
    monkeypatch.undo()
    monkeypatch.setattr(index_cache, "_RACY_NS", 0)
    assert (index_dir / f"{key}.checked").is_file()
    return corpus, index_dir, key, expected


class _Checks:
    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        from abstract_reader.search.postings import _FieldIndex

        self.count = 0
        from_arrays = _FieldIndex.from_arrays.__func__  # type: ignore[attr-defined]

        def counted(cls: Any, *args: Any) -> Any:
            self.count += 1
            return from_arrays(cls, *args)

        monkeypatch.setattr(_FieldIndex, "from_arrays", classmethod(counted))


def test_a_recorded_index_cache_is_read_without_its_checks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from abstract_reader.search import SearchIndex

    corpus, index_dir, key, expected = _index_setup(tmp_path, monkeypatch)
    checks = _Checks(monkeypatch)
    index = SearchIndex(corpus, cache_dir=index_dir, cache_key=key)
    assert index.loaded_from_cache and checks.count == 0
    assert [h.paper.id for h in index.search("topic 07")] == expected


def test_an_index_cache_written_into_after_its_record_is_checked_and_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from abstract_reader.search import SearchIndex
    from abstract_reader.search import cache as index_cache

    corpus, index_dir, key, expected = _index_setup(tmp_path, monkeypatch)
    path = index_dir / f"{key}.idx"
    raw = path.read_bytes()
    count = index_cache._HEAD.unpack_from(raw, 0)[3]
    for i in range(count):
        name, _dtype, offset, _length = index_cache._SECTION.unpack_from(
            raw, index_cache._HEAD.size + i * index_cache._SECTION.size
        )
        if name.rstrip(b"\0") == b"text_folded_docs":
            break
    _after_a_tick(path)
    with path.open("r+b") as handle:  # a posting beyond the corpus, in place
        handle.seek(offset)
        handle.write(b"\xff\xff\xff\x7f")
    checks = _Checks(monkeypatch)
    index = SearchIndex(corpus, cache_dir=index_dir, cache_key=key)
    assert checks.count == 1  # checked in full (the text field's check refused it)
    assert not index.loaded_from_cache  # rebuilt
    assert [h.paper.id for h in index.search("topic 07")] == expected


def test_a_later_chunk_moved_is_refused_in_its_place(tmp_path: Path) -> None:
    """A first start from a file not recorded checks each chunk's MAC as it publishes it: a
    chunk moved to another place is refused there — the rows before it were published (the
    reader shows them until it clears them and parses), none of it or after it."""
    paths = _dumps(tmp_path, n=22_000)  # 27,500 papers: six chunks
    cache = tmp_path / "cache"
    load_corpus_cached(paths, cache, min_bytes=0)
    (path,) = cache.glob("*.corpus")

    def swap(arrays: dict[str, Any]) -> None:
        """The third and fourth chunks exchanged with all they have (their papers are all of
        one length): every MAC is one we made, but for another place."""
        size = cc.CHUNK

        def exchange(blob: Any, a: int, b: int, c: int) -> None:  # [a, b) ↔ [b, c)
            assert c - b == b - a
            blob[a:c] = np.concatenate([blob[b:c], blob[a:b]])

        for text, offsets in (("abstracts", "abstract_offsets"), ("titles", "title_offsets")):
            a, b, c = (int(arrays[offsets][i]) for i in (2 * size, 3 * size, 4 * size))
            exchange(arrays[text], a, b, c)
        for name in cc._CHUNK_NUMBERS:
            exchange(arrays[name], 2 * size, 3 * size, 4 * size)
        exchange(arrays["macs"], 2 * cc._MAC_SIZE, 3 * cc._MAC_SIZE, 4 * cc._MAC_SIZE)

    edit_cache(path, swap, numbers_crc=False)
    opened = open_cache(cache, str(key_for(paths)), paths)
    assert opened is not None and not opened.vouched
    table = PaperTable()
    published = []
    with pytest.raises(CacheRefused):
        for rows in opened.publish(table):
            published.append(rows)
    assert published == [range(k * cc.CHUNK, (k + 1) * cc.CHUNK) for k in range(2)]
    assert len(table) == 2 * cc.CHUNK
