"""The corpus cache is mapped, not read: the table's columns are views of the file, its
texts and ids are checked chunk by chunk, and a file that fails any check is refused."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from abstract_reader.cachefile import SECRET_NAME
from abstract_reader.corpus import Corpus, CorpusBuilder, load_corpus
from abstract_reader.corpus_cache import (
    CacheRefused,
    key_for,
    load_corpus_cached,
    open_cache,
)
from abstract_reader.papertable import PaperTable

from .cache_edit import edit_cache, put_text
from .conftest import write_dump


def _facts(corpus: Corpus) -> list[tuple[object, ...]]:
    return [
        (p.id, p.abstract, p.title, p.title_derived, p.venue, p.year, p.sources)
        for p in corpus.papers
    ]


def _dumps(tmp_path: Path, n: int = 12_000) -> list[Path]:
    a = [f"Abstract {k} about topic {k % 89}, with words to spare." for k in range(n)]
    first = write_dump(tmp_path / "a.txt", *a)
    second = write_dump(tmp_path / "b.txt", *a[:50], "A paper only in b.", header=None)
    return [first, second]


def test_a_warm_corpus_is_the_cold_one_and_maps_its_columns(tmp_path: Path) -> None:
    paths = _dumps(tmp_path)
    cold = load_corpus_cached(paths, tmp_path / "cache", min_bytes=0)
    key = key_for(paths)
    assert key is not None
    opened = open_cache(tmp_path / "cache", key, paths)
    assert opened is not None
    table = PaperTable()
    published = [len(rows) for rows in opened.publish(table)]
    assert published == [5000, 5000, 2001]  # chunk by chunk
    chunk = table.chunks[0]
    assert isinstance(chunk.abstracts, np.ndarray) and not chunk.abstracts.flags.owndata
    warm = load_corpus_cached(paths, tmp_path / "cache", min_bytes=0)
    assert _facts(warm) == _facts(cold) == _facts(load_corpus(paths))
    assert [len(p.sources) for p in warm.papers[:51]] == [2] * 50 + [1]


#: damage the checks of what a file says refuse, with the user's secret or without
_MALFORMED = [
    "escape",
    "bidi",
    "offsets",
    "offsets-past-end",
    "split-character",
    "title-split-character",
    "title-offsets",
    "venue-code",
    "repeated",
    "year",
    "source",
    "bytes",
]
#: well-formed changes: parsing could have given them, only the MACs tell (without the
#: secret, ids are derived from the texts again; a venue or place changed is believed)
_WELL_FORMED = ["letter", "title", "venue", "index", "id", "id-header-kept"]


@pytest.mark.parametrize(
    ("damage", "secret_kept"),
    [(d, True) for d in _MALFORMED + _WELL_FORMED] + [(d, False) for d in _MALFORMED],
    ids=lambda v: v if isinstance(v, str) else ("secret" if v else "no-secret"),
)
def test_a_tampered_cache_is_refused_and_the_dumps_are_parsed(
    tmp_path: Path, damage: str, secret_kept: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without the user's secret (another account's cache folder, the secret deleted)
    nothing vouches for the file: every check is of what it says."""
    paths = _dumps(tmp_path)
    cache = tmp_path / "cache"
    fresh = load_corpus(paths)
    load_corpus_cached(paths, cache, min_bytes=0)
    if not secret_kept:
        (cache / SECRET_NAME).unlink()
    (path,) = cache.glob("*.corpus")

    def edit(arrays: dict[str, np.ndarray]) -> None:
        row = 7000  # in the second chunk: the first one has passed when this one fails
        if damage == "escape":
            put_text(arrays, row, b"\x1b]52;c;")
        elif damage == "bidi":
            put_text(arrays, row, "\u202e".encode())
        elif damage == "offsets":  # going backwards
            arrays["abstract_offsets"][row] = arrays["abstract_offsets"][row + 1] + 1
        elif damage == "offsets-past-end":
            arrays["abstract_offsets"][-1] += 1
        elif damage == "split-character":
            put_text(arrays, row, "é".encode())
            arrays["abstract_offsets"][row] += 1  # the cut falls inside "é"
        elif damage == "title-split-character":  # a cut inside a title's "é"
            start = int(arrays["title_offsets"][row])
            arrays["titles"][start : start + 2] = np.frombuffer("é".encode(), np.uint8)
            arrays["title_offsets"][row] += 1
        elif damage == "title-offsets":  # going backwards
            arrays["title_offsets"][row] = arrays["title_offsets"][row + 1] + 1
        elif damage == "venue-code":  # no such venue
            arrays["venues"][row] = 99
        elif damage == "repeated":  # a text made equal to another: the same id twice
            a, b = arrays["abstract_offsets"][[row, row + 1]]
            c = int(arrays["abstract_offsets"][row + 1])
            d = int(arrays["abstract_offsets"][row + 2])
            if d - c == b - a:
                arrays["abstracts"][c:d] = arrays["abstracts"][a:b]
            else:
                arrays["abstract_offsets"][row + 1] = a  # an empty text
        elif damage == "year":
            arrays["years"][row] = 12
        elif damage == "source":
            arrays["files"][row] = 9
        elif damage == "bytes":
            put_text(arrays, row, b"\xff\xfe")
        elif damage == "letter":  # "Abstract 7000 …" → "Bbstract 7000 …"
            put_text(arrays, row, b"B")
        elif damage == "title":
            start = int(arrays["title_offsets"][row])
            arrays["titles"][start] ^= 0x20  # another case of the same letter
        elif damage == "venue":  # another venue of the file's
            arrays["venues"][row] = -1 if arrays["venues"][row] >= 0 else 0
        elif damage == "index":  # another place in the dump
            arrays["indexes"][row] += 1
        elif damage.startswith("id"):
            arrays["keys"][row] ^= 1

    # the texts' CRCs are numbers too: recomputing that CRC would change the header
    header_kept = damage in ("letter", "title", "id-header-kept")
    edit_cache(path, edit, numbers_crc=not header_kept)
    key = key_for(paths)
    assert key is not None
    opened = open_cache(cache, key, paths)
    if header_kept and secret_kept:
        assert opened is not None  # the header's MAC holds: the chunk's does not
    if opened is not None:  # what numpy checks at once passed: the chunk check refuses
        table = PaperTable()
        with pytest.raises(CacheRefused):
            for _rows in opened.publish(table):
                pass
        assert len(table) == 5000  # the first chunk had been published
    parsed: list[Path] = []
    add_file = CorpusBuilder.add_file

    def spy(self: CorpusBuilder, p: Path) -> int:
        parsed.append(p)
        return add_file(self, p)

    monkeypatch.setattr(CorpusBuilder, "add_file", spy)
    again = load_corpus_cached(paths, cache, min_bytes=0)
    assert parsed == paths
    assert _facts(again) == _facts(fresh)
