"""abstract-reader: a keyboard-driven terminal reader for dumps of conference abstracts."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

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
