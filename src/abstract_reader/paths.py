"""Where the library and caches live (platformdirs), with environment overrides."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable
from pathlib import Path

import platformdirs

APP_NAME = "abstract-reader"


#: Folders made for the user's data (library, caches): theirs alone, as ~/.ssh or ~/.gnupg —
#: notes and reading habits are private. Existing folders are never changed.
PRIVATE_DIR_MODE = 0o700


def _override(name: str) -> Path | None:
    """A path from the environment; unset, empty or blank means "use the default"."""
    value = os.environ.get(name, "")
    return Path(value).expanduser() if value.strip() else None


def default_db_path() -> Path:
    """``$ABSTRACT_READER_DB``, else the user data dir's ``library.sqlite3``."""
    return _override("ABSTRACT_READER_DB") or (
        platformdirs.user_data_path(APP_NAME) / "library.sqlite3"
    )


def library_location(given: str | os.PathLike[str] | None = None) -> tuple[Path, str | None]:
    """The library file and who named it: ``--db`` (``given``), ``ABSTRACT_READER_DB``, or
    None for the default location. A library someone named is made only in a folder that
    exists (a mistyped path must not start an empty library), and its making is said; the
    default one is made silently, folders and all, on first use."""
    if given is not None and str(given).strip():
        return Path(given).expanduser(), "--db"
    named = _override("ABSTRACT_READER_DB")
    if named is not None:
        return named, "ABSTRACT_READER_DB"
    return default_db_path(), None


def missing_library_folder(path: Path) -> str | None:
    """Why a library cannot be made at a path someone named, None when it can (or when a file
    is there already: opening it says what is wrong with it, if anything)."""
    if os.path.lexists(path):
        return None
    folder = path.parent
    if folder.is_dir():
        return None
    if os.path.lexists(folder):
        return f"{folder} is not a folder"
    return f"the folder {folder} does not exist"


def cache_dir() -> Path:
    """``$ABSTRACT_READER_CACHE``, else the user cache dir."""
    return _override("ABSTRACT_READER_CACHE") or platformdirs.user_cache_path(APP_NAME)


def make_private_dir(path: Path) -> None:
    """Create ``path`` and any missing parents with ``PRIVATE_DIR_MODE`` (``mkdir -p -m
    700`` for every folder it makes; ``Path.mkdir(parents=True, mode=…)`` applies the mode
    to the last one only). Existing folders, and links to folders, are left as they are."""
    missing: list[Path] = []
    current = path
    while not current.exists() and not current.is_symlink() and current != current.parent:
        missing.append(current)
        current = current.parent
    for folder in reversed(missing):
        try:
            folder.mkdir(mode=PRIVATE_DIR_MODE)
        except FileExistsError:
            if not folder.is_dir():
                raise


def files_key(salt: str, files: Iterable[str | os.PathLike[str]]) -> str | None:
    """A cache key from ``salt`` and the files' paths, sizes and mtimes; None when a file
    cannot be stat'ed. Both caches (index, parsed corpus) use it."""
    digest = hashlib.blake2b(salt.encode(), digest_size=16)
    for name in files:
        try:
            st = os.stat(name)
        except OSError:
            return None
        # (a name that is not UTF-8 keeps its bytes: surrogateescape)
        line = f"{os.path.abspath(name)}\0{st.st_size}\0{st.st_mtime_ns}\n"
        digest.update(line.encode("utf-8", "surrogateescape"))
    return digest.hexdigest()
