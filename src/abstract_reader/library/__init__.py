"""The local library: bookmarks, read marks, tags, notes, metadata overrides, settings.

``schema`` opens the SQLite file (migrations, backups, the read-only fallback), ``store``
holds ``Library`` (delta writes with a change log, refresh, undo), ``interchange`` exports
and imports the whole library as JSON, ``model`` the data and errors the views see.
"""

from __future__ import annotations

from .model import (
    TAG_MAX,
    UNCHECKED,
    LibraryBusy,
    LibraryError,
    Metadata,
    MetadataConflict,
    NoteConflict,
    ReadOnlyLibrary,
    Snapshot,
    TagExists,
    changed_facts,
    clean_tag,
    tag_query,
)
from .schema import (
    BACKUP_INTERVAL_S,
    BACKUPS_KEPT,
    BUSY_TIMEOUT_MS,
    MIGRATIONS,
    READER_BUSY_TIMEOUT_MS,
    SCHEMA_VERSION,
    busy_timeout_s,
)
from .store import CHANGES_KEPT, Library

__all__ = [
    "BACKUPS_KEPT",
    "BACKUP_INTERVAL_S",
    "BUSY_TIMEOUT_MS",
    "CHANGES_KEPT",
    "MIGRATIONS",
    "READER_BUSY_TIMEOUT_MS",
    "SCHEMA_VERSION",
    "TAG_MAX",
    "UNCHECKED",
    "Library",
    "LibraryBusy",
    "LibraryError",
    "Metadata",
    "MetadataConflict",
    "NoteConflict",
    "ReadOnlyLibrary",
    "Snapshot",
    "TagExists",
    "busy_timeout_s",
    "changed_facts",
    "clean_tag",
    "tag_query",
]
