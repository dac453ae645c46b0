"""Where the library and caches live (platformdirs), with environment overrides."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable
from pathlib import Path

import platformdirs

APP_NAME = "abstract-reader"


def default_db_path() -> Path:
    """``$ABSTRACT_READER_DB``, else the user data dir's ``library.sqlite3``."""
    override = os.environ.get("ABSTRACT_READER_DB")
    if override:
        return Path(override).expanduser()
    return platformdirs.user_data_path(APP_NAME) / "library.sqlite3"


def cache_dir() -> Path:
    """``$ABSTRACT_READER_CACHE``, else the user cache dir."""
    override = os.environ.get("ABSTRACT_READER_CACHE")
    if override:
        return Path(override).expanduser()
    return platformdirs.user_cache_path(APP_NAME)


def files_key(salt: str, files: Iterable[str | os.PathLike[str]]) -> str | None:
    """A cache key from ``salt`` and the files' paths, sizes and mtimes; None when a file
    cannot be stat'ed. Both caches (index, parsed corpus) use it."""
    digest = hashlib.blake2b(salt.encode(), digest_size=16)
    for name in files:
        try:
            st = os.stat(name)
        except OSError:
            return None
        digest.update(f"{os.path.abspath(name)}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
    return digest.hexdigest()
