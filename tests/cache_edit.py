"""Editing a corpus cache file as an attacker or a bad disk would, checksums made right
again, so that only the checks of what the file says can refuse it."""

from __future__ import annotations

import json
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from abstract_reader import corpus_cache as cc


def edit_cache(
    path: Path, edit: Callable[[dict[str, Any]], None], *, numbers_crc: bool = True
) -> None:
    """``edit`` changes the sections (writable numpy arrays, by name) in place; the CRCs are
    made right again (the numbers' one, in the header, only if ``numbers_crc``: the header
    is then as it was, and its MAC holds). The MACs are left as they were: only the user's
    secret could make them right."""
    data = bytearray(path.read_bytes())
    head_size = int.from_bytes(data[len(cc.MAGIC) : len(cc.MAGIC) + 8], "little")
    meta = json.loads(bytes(data[cc._HEAD : cc._HEAD + head_size]))
    arrays = {
        name: np.frombuffer(data, np.dtype(dtype), length, offset)
        for name, (offset, dtype, length) in meta["sections"].items()
    }
    edit(arrays)
    sums = arrays["sums"]
    offsets, title_offsets = arrays["abstract_offsets"], arrays["title_offsets"]
    count, chunk = meta["count"], meta["chunk"]
    for k, first in enumerate(range(0, count, chunk)):
        last = min(count, first + chunk)
        crc = cc._crc(arrays["abstracts"], offsets, first, last, 0)
        sums[k] = cc._crc(arrays["titles"], title_offsets, first, last, crc)
    if numbers_crc:
        meta["numbers"] = cc._numbers_crc(arrays)
    head = json.dumps(meta).encode()
    assert cc._HEAD + len(head) <= min(s[0] for s in meta["sections"].values())
    data[len(cc.MAGIC) : len(cc.MAGIC) + 8] = len(head).to_bytes(8, "little")
    data[len(cc.MAGIC) + 8 : len(cc.MAGIC) + 12] = zlib.crc32(head).to_bytes(4, "little")
    data[cc._HEAD : cc._HEAD + len(head)] = head
    path.write_bytes(bytes(data))


def put_text(arrays: dict[str, Any], row: int, text: bytes) -> None:
    """Overwrite the start of a row's abstract with ``text`` (same length overall)."""
    start = int(arrays["abstract_offsets"][row])
    arrays["abstracts"][start : start + len(text)] = np.frombuffer(text, np.uint8)
