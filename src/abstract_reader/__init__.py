"""abstract-reader: a keyboard-driven terminal reader for dumps of conference abstracts."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any

# numpy asks the kernel for transparent huge pages for every array of 4 MB or more
# (`madvise`), and with the kernel's usual defrag policy ("madvise") the first touch of
# such an array may compact memory first. At a million papers, the first keys of a session
# make fresh 4 MB arrays: with huge pages those keys stalled 8-28 ms in the kernel (the
# first pass of 94 keys, p95 5.7-13.6 ms; without, 5.9-6.9 ms, and no slower later). So
# numpy is told not to, here, before any of this package imports it — unless the user's
# environment says otherwise, or numpy was imported first (its choice is then left alone).
# The helper processes inherit the setting.
if "numpy" not in sys.modules:
    os.environ.setdefault("NUMPY_MADVISE_HUGEPAGE", "0")

__version__ = "0.1.0"

__all__ = ["Corpus", "Paper", "SearchIndex", "__version__", "load_corpus"]

if TYPE_CHECKING:
    from .corpus import Corpus, Paper, load_corpus
    from .search import SearchIndex


def __getattr__(name: str) -> Any:
    # Lazy, so that `abstract-reader --version` does not pay for numpy and rapidfuzz.
    if name in ("Corpus", "Paper", "load_corpus"):
        from . import corpus

        return getattr(corpus, name)
    if name == "SearchIndex":
        from .search import SearchIndex

        return SearchIndex
    raise AttributeError(name)
