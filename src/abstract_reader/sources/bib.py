"""BibTeX (Zotero / Better BibTeX exports with ``abstract``), via bibtexparser v2: LaTeX in
fields decoded to Unicode (math kept), braces removed for display, authors read as people.
A bare ``%`` in a field is a percent sign, as its author meant (BibTeX has no comments inside
a value), not a LaTeX comment that would cut the rest of the field away."""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from . import Item, RecordProblem, SourceError, clean_text, clean_url, read_text, record, year_in

#: A % after an even number of backslashes (none, or escaped backslashes) is not escaped.
_BARE_PERCENT_RE = re.compile(r"(?<!\\)((?:\\\\)*)%")
_VENUE_FIELDS = ("booktitle", "journal", "journaltitle", "eventtitle", "publisher", "howpublished")


def _person(parts: object) -> str | None:
    first = getattr(parts, "first", None)
    if first is None:
        return clean_text(parts)
    words = [*parts.first, *parts.von, *parts.last]  # type: ignore[attr-defined]
    name = clean_text(" ".join(words))
    jr = clean_text(" ".join(parts.jr))  # type: ignore[attr-defined]
    return f"{name}, {jr}" if name and jr else name


def _literal_percent() -> Any:
    """A middleware (run before LaTeX decoding) that escapes every bare % in a field."""
    from bibtexparser.middlewares.middleware import BlockMiddleware

    class LiteralPercent(BlockMiddleware):
        def transform_entry(self, entry: Any, library: Any) -> Any:
            for found in entry.fields:
                if isinstance(found.value, str) and "%" in found.value:
                    found.value = _BARE_PERCENT_RE.sub(r"\1\\%", found.value)
            return entry

    return LiteralPercent()


def read(path: Path) -> Iterator[Item]:
    from bibtexparser import middlewares as mw
    from bibtexparser.entrypoint import parse_string

    text = read_text(path)
    logging.getLogger("bibtexparser").setLevel(logging.CRITICAL)  # failures are reported here
    library = parse_string(
        text,
        append_middleware=[
            _literal_percent(),
            mw.LatexDecodingMiddleware(),
            mw.SeparateCoAuthors(),
            mw.SplitNameParts(),
        ],
    )
    if not library.entries and not library.failed_blocks:
        raise SourceError("no BibTeX entries")
    name = path.name
    items: list[Item] = []
    blocks: list[tuple[int, Any, Any]] = [
        (b.start_line or 0, None, b) for b in library.failed_blocks
    ]
    blocks += [(e.start_line or 0, e, None) for e in library.entries]
    for index, (start, entry, bad) in enumerate(sorted(blocks, key=lambda t: t[0]), 1):
        line = start + 1
        if entry is None:
            error = str(getattr(bad, "error", "") or "").strip()
            why = error.splitlines()[0] if error else "cannot be parsed (unbalanced braces?)"
            items.append(RecordProblem(name, f"entry {index} (line {line})", why))
            continue
        fields = entry.fields_dict
        key = clean_text(entry.key) or f"entry{index}"

        def field(name: str, fields: dict[str, Any] = fields) -> object:
            found = fields.get(name)
            return getattr(found, "value", None)

        title = clean_text(field("title"))
        if not title:
            items.append(RecordProblem(name, f"entry {index} ({key}, line {line})", "no title"))
            continue
        venue = next((v for f in _VENUE_FIELDS if (v := clean_text(field(f)))), None)
        eprint = clean_text(field("eprint"))
        archive = (clean_text(field("archiveprefix")) or "").lower()
        items.append(
            record(
                "bibtex",
                key,
                name,
                index,
                title,
                authors=field("author"),
                person=_person,
                year=year_in(clean_text(field("year")) or clean_text(field("date"))),
                venue=venue,
                url=clean_url(field("url")),
                doi=field("doi"),
                abstract=field("abstract"),
                eprint=eprint if eprint and archive in ("arxiv", "") else None,
                primary_class=field("primaryclass"),
            )
        )
    return iter(items)
