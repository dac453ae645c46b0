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
#: Non-blank lines read, at most, before the first arXiv record: those that are not one (a
#: first line cut short by a download, a stray header) are reported one a line and the rest
#: loads; a file with no record among its first ones is not arXiv JSON Lines (one line, the
#: file skipped) — a wrong file is never read to its end, nor reported a line at a time.
RECOGNISE_LINES = 20


def read(path: Path) -> Iterator[Item]:
    """Stream the records; one of the first `RECOGNISE_LINES` non-blank lines must be an
    arXiv-like JSON object (the lines before it are malformed records)."""
    return _records(open_source(path), path.name)  # (closed by the generator's finally)


def _records(handle: Any, name: str) -> Iterator[Item]:
    checked = False
    before: list[RecordProblem] = []  #: the lines before the first record, said once known
    refusal = ""  #: why the file is not arXiv JSON Lines, if no record comes (the first line's)

    def not_yet(problem: RecordProblem, why: str) -> None:
        nonlocal refusal
        refusal = refusal or why
        before.append(problem)
        if len(before) >= RECOGNISE_LINES:
            raise SourceError(refusal)

    try:
        lines = iter(functools.partial(handle.readline, MAX_LINE_BYTES + 1), b"")
        for number, line in enumerate(lines, start=1):
            if len(line) > MAX_LINE_BYTES and not line.endswith(b"\n"):
                while line and not line.endswith(b"\n"):  # the rest, a piece at a time
                    line = handle.readline(MAX_LINE_BYTES)
                why = f"longer than {MAX_LINE_BYTES >> 20} MB"
                problem = RecordProblem(name, f"line {number}", f"{why}; not read")
                if not checked:
                    not_yet(problem, f"not JSON Lines (line {number}: {why})")
                    continue
                yield problem
                continue
            if not checked and line.startswith((b"\xff\xfe", b"\xfe\xff")):
                raise SourceError(UTF16)  # (lines of UTF-16 are not split at b"\n")
            if not line.strip():
                continue
            try:
                raw = json.loads(line)
            except (ValueError, UnicodeDecodeError, RecursionError) as exc:
                deep = isinstance(exc, RecursionError)  # nested a thousand deep
                why = "not valid JSON (nested too deeply)" if deep else "not valid JSON"
                problem = RecordProblem(name, f"line {number}", why)
                if not checked:
                    short = "nested too deeply" if deep else str(exc).split(":")[0]
                    not_yet(problem, f"not JSON Lines (line {number}: {short})")
                    continue
                yield problem
                continue
            if not checked:
                if not isinstance(raw, dict) or not ({"id", "abstract", "title"} & raw.keys()):
                    item = record_from(raw, name, number)  # (a problem: no id, or no object)
                    assert isinstance(item, RecordProblem)
                    not_yet(
                        item,
                        "not arXiv metadata records (the first line has no id/title/abstract)",
                    )
                    continue
                checked = True
                yield from before  # (a file of records after all: its lines before the first)
                before.clear()
            yield record_from(raw, name, number)
        if not checked:
            raise SourceError(refusal or "no records (empty file)")
    finally:
        handle.close()
