"""Where the library and caches live (platformdirs), with environment overrides."""

from __future__ import annotations

import os
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
