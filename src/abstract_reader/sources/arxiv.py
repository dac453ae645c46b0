"""The arXiv metadata snapshot: JSON Lines, one record a line, ~3M lines / 4+ GB — streamed.

A record (Kaggle "arxiv" dataset / arXiv's bulk metadata): ``id``, ``title``, ``authors``,
``authors_parsed`` ([[last, first, suffix]]), ``abstract`` (hard-wrapped, leading spaces),
``doi``, ``journal-ref``, ``categories`` (space-separated, primary first), ``versions``
([{"version": "v1", "created": "Mon, 2 Apr 2007 19:18:42 GMT"}]), ``update_date``.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from . import UTF16, Item, RecordProblem, SourceError, clean_text, open_source, record, year_in

_AUTHOR_SPLIT = re.compile(r",\s*(?:and\s+)?|\s+and\s+")


def authors_of(raw: dict[str, Any]) -> tuple[str, ...]:
    parsed = raw.get("authors_parsed")
    names: list[str] = []
    if isinstance(parsed, list) and parsed:
        for entry in parsed:
            if not isinstance(entry, list) or not entry:
                continue
            last, first, suffix = [*map(str, entry), "", "", ""][:3]
            name = clean_text(" ".join(p for p in (first, last, suffix) if p.strip()))
            if name:
                names.append(name)
        return tuple(names)
    text = clean_text(raw.get("authors"))
    if text:
        names = [n for n in (clean_text(p) for p in _AUTHOR_SPLIT.split(text)) if n]
    return tuple(names)


def record_from(raw: object, file: str, index: int) -> Item:
    where = f"line {index}"
    if not isinstance(raw, dict):
        return RecordProblem(file, where, "not a JSON object")
    arxiv_id = clean_text(raw.get("id"))
    if not arxiv_id:
        return RecordProblem(file, where, "no arXiv id")
    title = clean_text(raw.get("title"))
    if not title:
        return RecordProblem(file, f"{where} ({arxiv_id})", "no title")
    year = None
    versions = raw.get("versions")
    if isinstance(versions, list) and versions and isinstance(versions[0], dict):
        year = year_in(versions[0].get("created"))
    if year is None:
        year = year_in(raw.get("update_date"))
    categories = clean_text(raw.get("categories"))
    return record(
        "arxiv",
        arxiv_id,
        file,
        index,
        title,
        authors=list(authors_of(raw)),  # names already clean: cleaning again keeps them
        year=year,
        venue=raw.get("journal-ref"),
        url=f"https://arxiv.org/abs/{arxiv_id}",
        doi=raw.get("doi"),
        abstract=raw.get("abstract"),
        eprint=arxiv_id,
        primary_class=categories.split()[0] if categories else None,
    )


#: a line longer than this is not read into memory (a record of the snapshot is a few KB)
MAX_LINE_BYTES = 16 << 20


def read(path: Path) -> Iterator[Item]:
    """Stream the records; the first non-blank line must be an arXiv-like JSON object."""
    return _records(open_source(path), path.name)  # (closed by the generator's finally)


def _records(handle: Any, name: str) -> Iterator[Item]:
    checked = False
    try:
        lines = iter(functools.partial(handle.readline, MAX_LINE_BYTES + 1), b"")
        for number, line in enumerate(lines, start=1):
            if len(line) > MAX_LINE_BYTES and not line.endswith(b"\n"):
                while line and not line.endswith(b"\n"):  # the rest, a piece at a time
                    line = handle.readline(MAX_LINE_BYTES)
                why = f"longer than {MAX_LINE_BYTES >> 20} MB"
                if not checked:
                    raise SourceError(f"not JSON Lines (line {number}: {why})")
                yield RecordProblem(name, f"line {number}", f"{why}; not read")
                continue
            if not checked and line.startswith((b"\xff\xfe", b"\xfe\xff")):
                raise SourceError(UTF16)  # (lines of UTF-16 are not split at b"\n")
            if not line.strip():
                continue
            try:
                raw = json.loads(line)
            except (ValueError, UnicodeDecodeError, RecursionError) as exc:
                deep = isinstance(exc, RecursionError)  # nested a thousand deep
                if not checked:
                    why = "nested too deeply" if deep else str(exc).split(":")[0]
                    raise SourceError(f"not JSON Lines (line {number}: {why})") from None
                why = "not valid JSON (nested too deeply)" if deep else "not valid JSON"
                yield RecordProblem(name, f"line {number}", why)
                continue
            if not checked:
                if not isinstance(raw, dict) or not ({"id", "abstract", "title"} & raw.keys()):
                    raise SourceError(
                        "not arXiv metadata records (the first line has no id/title/abstract)"
                    )
                checked = True
            yield record_from(raw, name, number)
        if not checked:
            raise SourceError("no records (empty file)")
    finally:
        handle.close()
