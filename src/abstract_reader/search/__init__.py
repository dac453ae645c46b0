"""Word-level, typo-tolerant search with fzf's query syntax.

- `query`: the query language (text → `Query` of `Term`s; no numpy)
- `postings`: one field's sorted vocabulary with CSR postings, and its build
- `engine`: `SearchIndex` (matching, ranking, phrases, filters) and lazy `SearchResult`
- `cache`: the on-disk index cache
"""

from __future__ import annotations

from .cache import INDEX_FORMAT, cache_key_for, default_cache_dir
from .engine import (
    EXACT,
    PHRASE_CHECK_LIMIT,
    PREFIX,
    TITLE_BONUS,
    TYPO,
    Hit,
    LibraryState,
    SearchIndex,
    SearchResult,
    WordMatch,
)
from .postings import CHUNK_DOCS, PARALLEL_MIN_DOCS, Vocabulary, _FieldIndex, _Postings
from .query import Query, Term, Word, named_tags, parse_query, parts_asking, typo_budget

__all__ = [
    "CHUNK_DOCS",
    "EXACT",
    "INDEX_FORMAT",
    "PARALLEL_MIN_DOCS",
    "PHRASE_CHECK_LIMIT",
    "PREFIX",
    "TITLE_BONUS",
    "TYPO",
    "Hit",
    "LibraryState",
    "Query",
    "SearchIndex",
    "SearchResult",
    "Term",
    "Vocabulary",
    "Word",
    "WordMatch",
    "_FieldIndex",
    "_Postings",
    "cache_key_for",
    "default_cache_dir",
    "named_tags",
    "parse_query",
    "parts_asking",
    "typo_budget",
]
