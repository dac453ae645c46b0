"""``.json``: OpenReview API v2 notes (``{"notes": [...], "count": N}`` or a bare list of
notes) or CSL-JSON (a list of items). Told apart by content.

OpenReview v2 note: ``id``, ``forum``, ``content.{title,authors,abstract,venue,venueid}.value``,
``pdate``/``cdate`` (ms since the epoch). CSL-JSON item: ``id``, ``title``,
``author[{family, given, non-dropping-particle, suffix} | {literal}]``, ``issued.date-parts``,
``container-title``, ``DOI``, ``URL``, ``abstract``.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from . import Item, RecordProblem, SourceError, clean_text, clean_url, read_text, record, year_in


def _value(content: dict[str, Any], key: str) -> Any:
    """API v2 wraps each field as {"value": …}; v1 (and hand-made files) do not."""
    field = content.get(key)
    if isinstance(field, dict):
        return field.get("value")
    return field


def openreview_record(note: object, file: str, index: int) -> Item:
    if not isinstance(note, dict):
        return RecordProblem(file, f"note {index}", "not a JSON object")
    note_id = clean_text(note.get("id")) or clean_text(note.get("forum"))
    where = f"note {index}" + (f" ({note_id})" if note_id else "")
    content = note.get("content")
    if not note_id:
        return RecordProblem(file, where, "no id")
    if not isinstance(content, dict):
        return RecordProblem(file, where, "no content")
    title = clean_text(_value(content, "title"))
    if not title:
        return RecordProblem(file, where, "no title")
    year = None
    for stamp in (note.get("pdate"), note.get("odate"), note.get("cdate")):
        if isinstance(stamp, int | float) and not isinstance(stamp, bool) and stamp > 0:
            year = dt.datetime.fromtimestamp(stamp / 1000, dt.UTC).year
            break
    venueid = clean_text(_value(content, "venueid"))
    if venueid and (in_id := year_in(venueid)):
        year = in_id
    forum = clean_text(note.get("forum")) or note_id
    return record(
        "openreview",
        note_id,
        file,
        index,
        title,
        authors=_value(content, "authors"),
        year=year,
        venue=clean_text(_value(content, "venue")) or venueid,
        url=f"https://openreview.net/forum?id={forum}",
        doi=_value(content, "doi"),
        abstract=_value(content, "abstract"),
    )


def _csl_name(person: object) -> str | None:
    if not isinstance(person, dict):
        return clean_text(person)
    if person.get("literal"):
        return clean_text(person.get("literal"))
    parts = [
        person.get("given"),
        person.get("dropping-particle"),
        person.get("non-dropping-particle"),
        person.get("family"),
    ]
    name = clean_text(" ".join(str(p) for p in parts if isinstance(p, str) and p.strip()))
    suffix = clean_text(person.get("suffix"))
    return f"{name}, {suffix}" if name and suffix else name


def csl_record(item: object, file: str, index: int) -> Item:
    if not isinstance(item, dict):
        return RecordProblem(file, f"item {index}", "not a JSON object")
    item_id = clean_text(item.get("id")) or f"item{index}"
    where = f"item {index} ({item_id})"
    title = clean_text(item.get("title"))
    if not title:
        return RecordProblem(file, where, "no title")
    authors = item.get("author")
    year = None
    issued = item.get("issued")
    if isinstance(issued, dict):
        parts = issued.get("date-parts")
        if isinstance(parts, list) and parts and isinstance(parts[0], list) and parts[0]:
            year = year_in(parts[0][0]) or year_in(str(parts[0][0]))
        year = year or year_in(issued.get("raw")) or year_in(issued.get("literal"))
    return record(
        "csl-json",
        item_id,
        file,
        index,
        title,
        authors=authors,
        person=_csl_name,
        year=year,
        venue=clean_text(item.get("container-title")) or clean_text(item.get("event-title")),
        url=clean_url(item.get("URL")),
        doi=item.get("DOI"),
        abstract=item.get("abstract"),
    )


def read(path: Path) -> Iterator[Item]:
    name = path.name
    try:
        data = json.loads(read_text(path))
    except json.JSONDecodeError as exc:
        raise SourceError(f"not valid JSON (line {exc.lineno}: {exc.msg})") from None
    except RecursionError:  # arrays or objects nested a thousand deep
        raise SourceError("not valid JSON (nested too deeply)") from None
    if isinstance(data, dict) and isinstance(data.get("notes"), list):
        items, kind = data["notes"], "openreview"
    elif isinstance(data, list):
        first = next((x for x in data if isinstance(x, dict)), None)
        if first is None:
            raise SourceError("no records (an empty list)" if not data else "no JSON objects")
        kind = "openreview" if isinstance(first.get("content"), dict) else "csl"
        if kind == "csl" and not ({"title", "author", "type", "issued"} & first.keys()):
            raise SourceError("neither OpenReview notes nor CSL-JSON items")
        items = data
    else:
        raise SourceError('neither OpenReview notes ({"notes": [...]}) nor a CSL-JSON list')
    convert = openreview_record if kind == "openreview" else csl_record
    return (convert(item, name, n) for n, item in enumerate(items, start=1))
