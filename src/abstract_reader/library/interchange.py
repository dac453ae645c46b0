"""Export and import of the whole library as one JSON document (merging, never dropping)."""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, Any

from ..text import sanitise
from .model import LibraryError, as_text, clean_field, clean_tag, json_list, papers_phrase
from .schema import SCHEMA_VERSION

if TYPE_CHECKING:
    from .store import Library, _Change


def export_document(library: Library) -> dict[str, Any]:
    """The whole library as a JSON-ready document."""
    snap = library.reload()
    papers: dict[str, dict[str, Any]] = {}
    for pid in sorted(snap.paper_ids()):
        entry: dict[str, Any] = {}
        if pid in snap.bookmarks:
            entry["bookmarked_at"] = snap.bookmarks[pid]
        if pid in snap.read:
            entry["read_at"] = snap.read[pid]
        if snap.tags.get(pid):
            entry["tags"] = snap.tags[pid]
        if pid in snap.notes:
            entry["note"] = snap.notes[pid]
        if pid in snap.metadata:
            entry["metadata"] = snap.metadata[pid].as_dict()
        papers[pid] = entry
    return {
        "format": "abstract-reader-library",
        "version": 1,
        "schema": SCHEMA_VERSION,
        "papers": papers,
        "settings": snap.settings,
    }


def import_document(library: Library, data: Any) -> int:
    """Merge an export into this library (never drops anything). Returns papers touched."""
    if not isinstance(data, dict) or data.get("format") != "abstract-reader-library":
        raise LibraryError("not an abstract-reader library export")
    papers = data.get("papers")
    if not isinstance(papers, dict):
        raise LibraryError("the export has no 'papers' object")
    touched = 0

    def build(change: _Change) -> None:
        nonlocal touched
        conn = change.conn
        for pid, entry in papers.items():
            if not isinstance(pid, str) or not isinstance(entry, dict):
                continue
            touched += 1
            if "bookmarked_at" in entry:
                when = _number(entry["bookmarked_at"], pid, "bookmarked_at")
                change.apply({"op": "mark", "table": "bookmarks", "add": {pid: when}})
            if "read_at" in entry:
                when = _number(entry["read_at"], pid, "read_at")
                change.apply({"op": "mark", "table": "read_marks", "add": {pid: when}})
            tags = entry.get("tags", []) or []
            if not isinstance(tags, list):
                raise LibraryError(f"paper {pid}: 'tags' must be a list")
            for raw in tags:
                try:
                    name = clean_tag(str(raw))
                except LibraryError as exc:
                    raise LibraryError(f"paper {pid}: {exc}") from None
                change.apply({"op": "tag", "name": name, "add": {pid: time.time()}})
            note = entry.get("note")
            if isinstance(note, str) and note.strip():
                note = sanitise(note)
                row = conn.execute("SELECT body FROM notes WHERE paper_id = ?", (pid,)).fetchone()
                existing = None if row is None else as_text(row[0])
                body = note
                if existing and existing != note and note not in existing:
                    body = existing + "\n\n" + note
                elif existing:
                    body = existing
                change.apply({"op": "note", "id": pid, "body": body})
            meta = entry.get("metadata")
            if isinstance(meta, dict):
                row = conn.execute(
                    "SELECT title, authors, url, doi, year FROM metadata WHERE paper_id = ?",
                    (pid,),
                ).fetchone()
                old = row or (None, "[]", None, None, None)
                authors = meta.get("authors") or json_list(old[1])
                if not isinstance(authors, list):
                    raise LibraryError(f"paper {pid}: 'authors' must be a list")
                year = meta.get("year") if meta.get("year") is not None else old[4]
                if year is not None:
                    year = int(_number(year, pid, "year"))
                    if not 1000 <= year <= 9999:
                        raise LibraryError(f"paper {pid}: year must have four digits")
                new_row = [
                    _imported_text(meta, "title", old[0]),
                    json.dumps([c for a in authors if (c := clean_field(str(a)))]),
                    _imported_text(meta, "url", old[2]),
                    _imported_text(meta, "doi", old[3]),
                    year,
                ]
                change.apply({"op": "meta", "id": pid, "row": new_row})
        settings = data.get("settings")
        if isinstance(settings, dict):
            for key, value in settings.items():
                cur = conn.execute(
                    "INSERT OR IGNORE INTO settings VALUES (?, ?)", (str(key), str(value))
                )
                change.dirty = change.dirty or bool(cur.rowcount)

    library._transact(f"import of {papers_phrase(len(papers))}", build)
    return touched


def _imported_text(meta: dict[str, Any], key: str, current: str | None) -> str | None:
    """A metadata field from an import file, sanitised; the current value when absent."""
    value = meta.get(key)
    return clean_field(str(value)) if value else current


def _number(value: Any, paper_id: str, field_name: str) -> float:
    """A number from an import file, or a one-line error naming the paper and the field."""
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise LibraryError(f"paper {paper_id}: {field_name} must be a number")
    try:
        return float(value)
    except ValueError:
        raise LibraryError(
            f"paper {paper_id}: {field_name} must be a number, not {value!r}"
        ) from None
