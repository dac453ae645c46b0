"""RIS (``TY`` … ``ER``), via rispy, one record at a time so that a malformed record is
reported and skipped while the others load. Tags used: TI/T1, AU/A1, PY/Y1/DA, AB/N2, DO,
UR, T2/JO/JF/BT, ID."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from . import Item, RecordProblem, SourceError, clean_text, clean_url, read_text, record, year_in

_TAG_LINE = re.compile(r"^([A-Z][A-Z0-9])  -(?: (.*))?$")


def _person(raw: str) -> str | None:
    """RIS names are "Last, First[, Suffix]"."""
    parts = [p.strip() for p in raw.split(",")]
    if len(parts) >= 2 and parts[1]:
        name = f"{parts[1]} {parts[0]}"
        return clean_text(f"{name}, {parts[2]}" if len(parts) > 2 and parts[2] else name)
    return clean_text(raw)


def _chunks(text: str) -> Iterator[tuple[int, str]]:
    """(first line number, text) of each TY … ER record."""
    start: int | None = None
    lines: list[str] = []
    for number, line in enumerate(text.splitlines(), start=1):
        tag = _TAG_LINE.match(line.rstrip())
        if tag and tag.group(1) == "TY":
            if start is not None:  # a record without ER: give it to rispy as it is
                yield start, "\n".join(lines)
            start, lines = number, []
        if start is not None:
            lines.append(line.rstrip())
            if tag and tag.group(1) == "ER":
                yield start, "\n".join(lines)
                start, lines = None, []
    if start is not None:
        yield start, "\n".join(lines)


def read(path: Path) -> Iterator[Item]:
    import rispy

    text = read_text(path)
    chunks = list(_chunks(text))
    if not chunks:
        raise SourceError("not RIS (no 'TY  - ' record start)")
    name = path.name
    items: list[Item] = []
    for index, (line, chunk) in enumerate(chunks, start=1):
        where = f"record {index} (line {line})"
        if not chunk.rstrip().endswith("ER  -"):
            items.append(RecordProblem(name, where, "no 'ER  -' line ending the record"))
            continue
        try:
            entries = rispy.loads(chunk)
        except Exception as exc:  # rispy raises plain IOError / ValueError / KeyError
            items.append(RecordProblem(name, where, f"cannot be parsed ({exc})"))
            continue
        if len(entries) != 1:
            items.append(RecordProblem(name, where, "cannot be parsed"))
            continue
        entry = entries[0]

        def first(*keys: str, entry: dict[str, object] = entry) -> object:
            for key in keys:
                value = entry.get(key)
                if isinstance(value, list):
                    value = value[0] if value else None
                if value:
                    return value
            return None

        title = clean_text(first("title", "primary_title"))
        if not title:
            items.append(RecordProblem(name, where, "no title (TI or T1)"))
            continue
        people = entry.get("authors") or entry.get("first_authors") or []
        urls = entry.get("urls") or []
        items.append(
            record(
                "ris",
                clean_text(first("id")) or f"record{index}",
                name,
                index,
                title,
                authors=list(people),  # already in order
                person=lambda p: _person(str(p)),
                year=year_in(first("year", "publication_year", "date")),
                venue=first(
                    "secondary_title", "journal_name", "alternate_title3", "alternate_title1"
                ),
                url=next((u for u in (clean_url(x) for x in urls) if u), None),
                doi=first("doi"),
                abstract=first("abstract", "notes_abstract"),
            )
        )
    return iter(items)
