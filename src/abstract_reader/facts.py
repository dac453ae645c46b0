"""The library facts a query can depend on and a write can change.

One vocabulary shared by the store (which facts a write changed), the query parser (which facts
a query reads) and the session (a result is stale when the two meet). Plain data: no Textual.
"""

from __future__ import annotations

from typing import Final, Literal, get_args

Fact = Literal["tags", "bookmarks", "read", "notes", "meta"]

ALL_FACTS: Final[frozenset[Fact]] = frozenset(get_args(Fact))
