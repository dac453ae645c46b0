"""The reader's state rules, outside any UI: what is loaded, what the user marked, what the
current query shows, which papers an action is for, and when a result is stale.

The reader (``tui/``) holds one ``Session`` and turns keys into calls on it; everything here is
plain Python (no Textual), so each rule is unit-tested without a terminal.

The staleness rule: a parsed query says which library facts it reads (``query_dependencies``);
a write, from this process or another, reports which facts it changed (``Library.refresh``);
the result is re-run when the two meet. Nothing looks at the raw query text.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from . import status
from .corpus import Corpus, Paper
from .facts import Fact
from .library import Library, Metadata, Snapshot
from .metadata import (
    EffectiveMetadata,
    OverridesFollower,
    effective,
)
from .plural import count_phrase
from .sorting import SORTS, TITLE_ORDER_NOW_MAX, TitleOrder, sort_rows
from .text import shown_title

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from .record import Record
    from .saved import Expansion
    from .search import Query, SearchIndex, SearchResult, Term

#: The facts an order reads (a write of one of them sorts again).
_SORT_FACTS: dict[str, frozenset[Dependency]] = {
    "title": frozenset({"meta"}),
    "year": frozenset({"meta"}),
    "recent": frozenset({"bookmarks", "tags"}),
    "unread": frozenset({"read"}),
}

HISTORY_KEY = "filter_history"
HISTORY_MAX = 100

#: The reader's place (its filter and current paper) is kept per dump set: the setting
#: ``place:<dump_set_key>`` holds ``{"filter": …, "paper": …}``.
PLACE_PREFIX = "place:"


def dump_set_key(paths: Sequence[str | os.PathLike[str]] | None) -> str:
    """The key of the dumps a reader was opened on: the paths as given (a folder as the
    folder, so that a dumps folder that gains a dump keeps its place and ``is:new`` view),
    resolved and sorted; the bundled dumps (no path) are one key wherever installed."""
    if paths is None:
        text = "bundled"
    else:
        resolved = sorted({os.path.realpath(os.fsdecode(p)) for p in paths})
        text = "\0".join(resolved)
    digest = hashlib.blake2b(text.encode("utf-8", "surrogateescape"), digest_size=12)
    return digest.hexdigest()


def saved_place(library: Library, key: str) -> tuple[str, str | None]:
    """The filter and the current paper saved for this dump set ("" and None: none)."""
    import json

    try:
        value = json.loads(library.setting(PLACE_PREFIX + key, "") or "{}")
    except json.JSONDecodeError:
        return "", None
    if not isinstance(value, dict):
        return "", None
    query = value.get("filter")
    paper = value.get("paper")
    return (
        query if isinstance(query, str) else "",
        paper if isinstance(paper, str) and paper else None,
    )


def save_place(library: Library, key: str, query: str, paper: str | None) -> None:
    """Keep the filter and the current paper for the next start on this dump set. Raises
    LibraryError when the library cannot take it."""
    import json

    place: dict[str, str] = {"filter": query}
    if paper:
        place["paper"] = paper
    library.set_setting(PLACE_PREFIX + key, json.dumps(place, ensure_ascii=False))


#: What a query can depend on: a library fact, the marks of this session (``is:marked``),
#: which papers are new since the previous session (``is:new``, known once it has begun), or
#: the saved searches its ``@name``s stand for (settings, not a library fact: the session
#: compares them after each refresh).
Dependency = Fact | Literal["marks", "new", "saved"]

#: `is:` values → the fact they read.
_IS_FACT: dict[str, Dependency] = {
    "bookmarked": "bookmarks",
    "read": "read",
    "unread": "read",
    "noted": "notes",
    "tagged": "tags",
    "marked": "marks",
    "new": "new",
}
#: Term kinds that read what the library's metadata may override: words matched against
#: titles, years, and venues (``match`` stores the venue it found with its provenance).
_META_KINDS = frozenset(
    {"words", "phrase", "phrase_loose", "title", "title_start", "year", "venue"}
)


def query_dependencies(query: Query) -> frozenset[Dependency]:
    """The facts a parsed query reads: `#tag` and `is:tagged` → tags, `is:bookmarked` →
    bookmarks, `is:read`/`is:unread` → read, `is:noted` → notes, words (which also match real
    titles), `title:`, `year:` and `venue:` → meta, `is:marked` → marks; `like:#tag` /
    `like:is:…` read what their seeds are chosen by. Case never matters: the parser has already folded field
    names."""
    found: set[Dependency] = set()

    def visit(term: Term) -> None:
        if term.kind == "or":
            for alternative in term.alternatives:
                visit(alternative)
        elif term.kind == "tag":
            found.add("tags")
        elif term.kind == "is":
            dependency = _IS_FACT.get(term.value)
            if dependency is not None:
                found.add(dependency)
        elif term.kind == "like" and term.value.startswith("#"):  # like:#tag
            found.add("tags")
        elif term.kind == "like" and term.value.startswith("is:"):  # like:is:bookmarked
            dependency = _IS_FACT.get(term.value[3:])
            if dependency is not None:
                found.add(dependency)
        elif term.kind in _META_KINDS:
            found.add("meta")
        elif term.kind == "like":  # ranks by likeness to seed papers: which ones may change
            if term.value.startswith("#"):
                found.add("tags")
            elif term.value.startswith("is:"):
                dependency = _IS_FACT.get(term.value[3:])
                if dependency is not None:
                    found.add(dependency)

    for term in query.terms:
        visit(term)
    return frozenset(found)


@dataclass(frozen=True, slots=True)
class LibraryView:
    """A frozen copy of the library's state filters (and the marks), for a search thread."""

    tags: dict[str, frozenset[str]]
    states: dict[str, frozenset[str]]
    names: tuple[str, ...] = ()  #: the tag names papers have, as shown

    def ids_with_tag(self, tag: str) -> set[str]:
        return set(self.tags.get(tag.casefold(), frozenset()))

    def ids_with_state(self, state: str) -> set[str]:
        return set(self.states.get(state, frozenset()))

    def tag_names(self) -> list[str]:
        """The tags papers have, as shown (for "did you mean" with a tag none has)."""
        return list(self.names)


@dataclass(frozen=True, slots=True)
class TagChange:
    """What the tag editor's save means: tags to add and to remove, nothing else."""

    added: tuple[str, ...]
    removed: tuple[str, ...]

    @property
    def empty(self) -> bool:
        return not self.added and not self.removed


def tag_change(shown: Sequence[str], edited: Sequence[str]) -> TagChange:
    """Compare the editor's tags with what it showed (case-insensitively, like the store)."""
    before = {t.casefold() for t in shown}
    after = {t.casefold() for t in edited}
    added = tuple(t for t in edited if t.casefold() not in before)
    removed = tuple(t for t in shown if t.casefold() not in after)
    return TagChange(added, removed)


#: The metadata's fields, in the editor's order.
METADATA_FIELDS = ("title", "authors", "url", "doi", "year")


def metadata_change(shown: Metadata, edited: Metadata, stored: Metadata) -> Metadata:
    """The stored metadata with only the fields the user changed in the editor: a field that
    another process set meanwhile, and the user did not touch, is kept."""
    values = {
        name: getattr(edited if getattr(edited, name) != getattr(shown, name) else stored, name)
        for name in METADATA_FIELDS
    }
    return Metadata(**values)


def metadata_conflicts(shown: Metadata, edited: Metadata, stored: Metadata) -> tuple[str, ...]:
    """The fields changed both in the editor (``edited`` against the ``shown`` it opened
    with) and elsewhere meanwhile (``stored`` now), to different values: saving the editor's
    would drop the other writer's unseen, so the user chooses. A field both set alike is
    no conflict."""
    return tuple(
        name
        for name in METADATA_FIELDS
        if getattr(edited, name) != getattr(shown, name)
        and getattr(stored, name) != getattr(shown, name)
        and getattr(stored, name) != getattr(edited, name)
    )


@dataclass(frozen=True, slots=True)
class Held:
    """A paper kept in the current result although the reader's own write made it leave:
    its library facts as the query last saw them (``LibraryView`` shows these for it)."""

    states: frozenset[str]  #: of "bookmarked", "read", "noted", "tagged"
    tags: frozenset[str]  #: casefolded


#: The states a query can read of a paper, as `Session.library_view` names them.
_HELD_STATES = ("bookmarked", "read", "noted", "tagged")


@dataclass(slots=True)
class Session:
    """The reader's state: corpus, library, index, marks, query and result."""

    library: Library
    corpus: Corpus = field(default_factory=Corpus)
    index: SearchIndex | None = None
    result: SearchResult | None = None
    marks: set[str] = field(default_factory=set)
    new: frozenset[str] = frozenset()  #: ``is:new``: set by ``begin_session``
    query_text: str = ""
    sort: str = "relevance"
    _dependencies: frozenset[Dependency] | None = None
    _expanded: Expansion | None = None  #: search text, unknown @names, a loop
    _saved: dict[str, str] = field(default_factory=dict)  #: the saved searches last seen
    #: the library's settings they were read from (replaced, never changed, by a change):
    #: while the same, a refresh does not walk them (100,000 provenances: ~12 ms a second)
    _saved_from: dict[str, str] | None = field(default=None, repr=False, compare=False)
    #: row → position in the result (or corpus); None: the same. Rows past its end (rows
    #: that came while it was being made) keep their position.
    _order: npt.NDArray[np.int64] | None = None
    _rows_of: npt.NDArray[np.int64] | None = None  #: the inverse of ``_order``, when needed
    _titles: TitleOrder | None = None  #: the corpus in title order, once made
    #: the order is ``title`` but the corpus's `TitleOrder` is not made yet (the reader has
    #: a worker make it); the rows are in the result's (or corpus's) order meanwhile
    sort_pending: bool = False
    #: the library's titles, years and venues, followed from snapshot to snapshot
    _overrides: OverridesFollower = field(default_factory=OverridesFollower)
    #: the index last given the overrides, and its `overrides_version` then
    _synced: tuple[SearchIndex, int] | None = None
    #: `_library_counts`: what they were counted from (the library's sections, the table
    #: and its length), and the counts (papers not loaded: -1 while not counted)
    _counts: tuple[tuple[object, ...], int, tuple[int, int, int]] | None = None
    #: `library_view`'s part made from the library alone: the sections it was made from,
    #: the tag sets, the state sets and the tag names
    _view_base: (
        tuple[
            tuple[object, ...],
            dict[str, frozenset[str]],
            dict[str, frozenset[str]],
            tuple[str, ...],
        ]
        | None
    ) = None
    #: papers kept in the current result as the query last saw them (`hold`), until the
    #: query changes: the paper being read never leaves under the reader
    held: dict[str, Held] = field(default_factory=dict)

    # -- the library ----------------------------------------------------------------------
    def refresh(self) -> frozenset[Dependency]:
        """Catch up with every write since the last call (this process's and others'); the
        facts that changed, and ``saved`` when the saved searches did (they are settings,
        which the library re-reads with any change but does not report). The index's real
        titles and years follow the metadata."""
        from .saved import saved

        changed: frozenset[Dependency] = self.library.refresh()
        if "meta" in changed:
            self.sync_metadata()
        settings = self.library.snapshot.settings
        if settings is self._saved_from:
            return changed
        self._saved_from = settings
        searches = saved(self.library)
        if searches != self._saved:
            self._saved = searches
            self._expanded = None
            self._dependencies = None
            changed |= {"saved"}
        return changed

    def saved_searches(self) -> dict[str, str]:
        """Name → query of the saved searches, as of the last refresh or own write."""
        return dict(self._saved)

    def save_search(self, name: str, query: str) -> None:
        """Save (or replace) a named search. Raises SavedSearchError for a bad name or an
        empty query, LibraryError when the library cannot take it."""
        from .saved import save

        save(self.library, name, query)
        self.refresh()

    def delete_search(self, name: str) -> None:
        from .saved import delete

        delete(self.library, name)
        self.refresh()

    def undo(self) -> str | None:
        """Undo the latest change this reader made; what was undone, or None. The paper it
        was on is named by its short title (`describe`) when it was one paper: "read mark
        on “RSE: Robust …”", "bookmark on “…”"; several are counted by the library."""
        undone = self.library.undo_change()
        if undone is None:
            return None
        what = undone.what
        if len(undone.paper_ids) != 1:
            return what
        paper = self.corpus.get(undone.paper_ids[0])
        if paper is None:  # (a paper not loaded now: the library's words)
            return what
        name = self.describe([paper])
        if " 1 paper" in what:  # "bookmark on 1 paper", "tag 'x' added to 1 paper"
            return what.replace(" 1 paper", " " + name, 1)
        head, paren, rest = what.partition(" (")  # "note (in part: …)"
        return f"{head} on {name}{paren}{rest}"

    # -- papers the reader itself changed stay in the result ---------------------------------
    def hold(self, paper_id: str) -> None:
        """The reader is about to change this paper's library facts itself (auto-read, `r`,
        `b`, tags, a note on the current paper): while the query stays the same, it keeps
        matching as it did (the facts it had now), so the result keeps it where it is — as a
        mail client keeps a message just read in an "unread" view. Other papers, and other
        processes' writes, change the result as ever. The "unread first" order sees it as it
        was too (a paper just read does not jump to the read ones under the cursor). No
        query and another order: nothing to hold."""
        if paper_id in self.held or not (self.filters or self.sort == "unread"):
            return
        snap = self.library.snapshot
        tags = frozenset(t.casefold() for t in snap.tags.get(paper_id, ()))
        states = {
            "bookmarked": paper_id in snap.bookmarks,
            "read": paper_id in snap.read,
            "noted": paper_id in snap.notes,
            "tagged": bool(tags),
        }
        self.held[paper_id] = Held(frozenset(k for k, v in states.items() if v), tags)

    # -- the query ------------------------------------------------------------------------
    def set_query(self, text: str) -> None:
        if text != self.query_text:
            self.held.clear()  # another query: every paper matches as it is now
        self.query_text = text
        self._dependencies = None
        self._expanded = None

    @property
    def search_text(self) -> str:
        """The query as searched: each ``@name`` replaced by its saved search (an unknown
        one left out, said in the status line, and the query then matches nothing)."""
        return self._expansion()[0]

    @property
    def unknown_saved(self) -> tuple[str, ...]:
        """The ``@name``s of the query that name no saved search: the query matches nothing
        (as the CLI refuses it), and the status line says them."""
        return self._expansion()[1] if self.query_text.strip() else ()

    @property
    def saved_problem(self) -> str | None:
        """Why the saved searches the query uses cannot be expanded (a loop, ``@a`` → ``@b``
        → ``@a``, or too deep a nesting), in one line: the query then matches nothing, and
        the status line says it."""
        return self._expansion()[2] if self.query_text.strip() else None

    @property
    def filters(self) -> bool:
        """Is there a query to run (words, or an ``@name``, known or not)?"""
        return bool(self.search_text.strip() or self.unknown_saved or self.saved_problem)

    def take_result(self, result: SearchResult | None) -> None:
        """The result of the current query becomes the rows' source; with an unknown saved
        search in the query, or a loop of them, nothing matches."""
        if result is not None and (self.unknown_saved or self.saved_problem):
            result = result.matching_nothing()
        self.result = result

    def _expansion(self) -> Expansion:
        if self._expanded is None:
            from .saved import Expansion, expand_known

            if "@" in self.query_text:
                self._expanded = expand_known(self._saved, self.query_text)
            else:
                self._expanded = Expansion(self.query_text)
        return self._expanded

    @property
    def dependencies(self) -> frozenset[Dependency]:
        """What the rows depend on: the facts the current query reads (parsed once per query
        text) and those the chosen order reads."""
        if self._dependencies is None:
            from .saved import references

            text = self.search_text
            found: frozenset[Dependency] = frozenset()
            if text.strip():
                from .search import parse_query

                found = query_dependencies(parse_query(text))
            if references(self.query_text):  # @name: re-run when a saved search changes
                found |= {"saved"}
            self._dependencies = found
        return self._dependencies | _SORT_FACTS.get(self.sort, frozenset())

    def is_stale(self, changed: Iterable[Dependency]) -> bool:
        """Does a change of these facts (or of the marks) change which rows are shown, or
        their order?"""
        return not self.dependencies.isdisjoint(changed)

    # -- the order ------------------------------------------------------------------------
    def next_sort(self) -> str:
        """The next order of `SORTS`. With no query the result's order is the dump order, so
        "dump" after "relevance" would change nothing on screen: it is skipped."""
        self.held.clear()  # another order: every paper placed as it is now
        names = list(SORTS)
        sort = names[(names.index(self.sort) + 1) % len(names)]
        if sort == "dump" and self.sort == "relevance" and self.result is None:
            sort = names[(names.index(sort) + 1) % len(names)]
        self.sort = sort
        return sort

    def apply_sort(self, loaded: int) -> None:
        """Order the rows of the current result (or of the corpus) by ``sort``. Stable: ties
        keep the result's order. By ``title`` over more than `TITLE_ORDER_NOW_MAX` papers
        this needs the corpus's `TitleOrder`: until it is given (`take_title_order`), the
        rows keep the result's order and ``sort_pending`` says so."""
        self._rows_of = None
        self._order = None
        self.sort_pending = False
        n = self.row_count(loaded)
        if self.sort == "relevance" or (self.sort == "dump" and self.result is None):
            return
        titles = None
        if self.sort == "title":
            titles = self._title_order(loaded)
            if titles is None:
                self.sort_pending = True
                return
        import numpy as np

        rows = self.result.order if self.result is not None else np.arange(n, dtype=np.int64)
        papers = self.corpus.papers
        self._order = sort_rows(self.sort, rows[:n], self._sort_snapshot(), papers, titles)

    def _sort_snapshot(self) -> Snapshot:
        """The library as the order reads it: for "unread first", the held papers read or
        unread as they were when held (`hold`)."""
        snap = self.library.snapshot
        if self.sort != "unread" or not self.held:
            return snap
        read = dict(snap.read)
        for paper_id, held in self.held.items():
            if "read" in held.states:
                read.setdefault(paper_id, 0.0)
            else:
                read.pop(paper_id, None)
        return dataclasses.replace(snap, read=read)

    def _title_order(self, loaded: int) -> TitleOrder | None:
        """The corpus's `TitleOrder` for its first ``loaded`` papers: the one made, if it is
        still current; else made now when they are few; else None (a worker makes it)."""
        papers = self.corpus.papers
        if self._titles is not None and self._titles.current(papers, loaded):
            return self._titles
        self._titles = None  # (out of date: its memory goes)
        if loaded <= TITLE_ORDER_NOW_MAX:
            self._titles = TitleOrder(papers)
            return self._titles
        return None

    def take_title_order(self, titles: TitleOrder) -> bool:
        """A `TitleOrder` made by a worker; False when it is out of date already (the
        corpus's titles changed meanwhile)."""
        if not titles.current(self.corpus.papers, len(self.corpus.papers)):
            return False
        self._titles = titles
        return True

    def _base_paper(self, index: int) -> Paper:
        if self.result is not None:
            return self.result.paper_at(index)
        return self.corpus.papers[index]

    def _base_position(self, paper_id: str) -> int | None:
        if self.result is not None:
            return self.result.position_of(paper_id)
        try:
            return self.corpus.index_of(paper_id)
        except KeyError:
            return None

    def library_view(self) -> LibraryView:
        """A copy of the state filters for the search thread. Always made: whether a query
        needs it is the parser's business, not a text test. The library's part is made once
        per change of the library, not with each key typed (every tag set and state set
        copied, and the tag names sorted: milliseconds a key with a large library)."""
        snap = self.library.snapshot
        sections = (snap.tags, snap.bookmarks, snap.read, snap.notes)
        base = self._view_base
        if base is None or not all(a is b for a, b in zip(base[0], sections, strict=True)):
            by_name: dict[str, set[str]] = {}
            for paper_id, its_tags in snap.tags.items():
                for name in its_tags:
                    by_name.setdefault(name.casefold(), set()).add(paper_id)
            frozen = {name: frozenset(ids) for name, ids in by_name.items()}
            base = (
                sections,
                frozen,
                {
                    "bookmarked": frozenset(snap.bookmarks),
                    "read": frozenset(snap.read),
                    "noted": frozenset(snap.notes),
                    "tagged": frozenset(p for ids in frozen.values() for p in ids),
                },
                tuple(self.library.tag_names()),
            )
            self._view_base = base
        _, tags, states, names = base
        if self.held:  # (few papers: only the sets they are in are copied)
            held = self.held
            states = dict(states)
            for state in _HELD_STATES:  # as the query saw them (`hold`)
                states[state] = (states[state] - held.keys()) | {
                    p for p, h in held.items() if state in h.states
                }
            tags = dict(tags)
            for name, ids in list(tags.items()):
                gone = {p for p in held if p in ids and name not in held[p].tags}
                if gone:
                    tags[name] = ids - gone
            for paper_id, h in held.items():
                for name in h.tags:
                    tags[name] = tags.get(name, frozenset()) | {paper_id}
        return LibraryView(
            tags=tags,
            names=names,
            states={**states, "marked": frozenset(self.marks), "new": self.new},
        )

    def begin_session(self) -> frozenset[str]:
        """A reader session starts (the corpus loaded): the previous one is remembered and the
        loaded dumps recorded as seen; ``is:new`` then answers the papers whose dumps were
        first seen since the previous session (as ``list -q is:new`` does). Reads every
        paper's sources once: for a worker thread."""
        from .seen import begin_session, new_ids

        begin_session(self.library, self.corpus.files)
        return frozenset(new_ids(self.library, self.corpus))

    def prime_metadata(self, index: SearchIndex) -> None:
        """Give an index not handed over yet (``self.index`` is still None: `sync_metadata`
        does nothing meanwhile) the library's titles, years and venues, in the thread that
        built it: at 50,000 matched papers this is ~1 s of Python, which the UI thread spent
        when the index was handed over (keys typed then waited for it). The hand-over's
        `sync_metadata` then gives it only what changed since."""
        if self.index is not None:
            return
        overrides = self._overrides
        overrides.follow(self.library.snapshot)
        index.set_title_overrides(overrides.titles)
        index.set_year_overrides(overrides.years)
        index.set_venue_overrides(overrides.venues)
        self._synced = (index, index.overrides_version)

    def set_venue(self, paper_id: str, venue: str | None) -> frozenset[Dependency]:
        """Set (None: clear) a paper's venue by hand (`metadata.set_venue`) and give the
        index the change; the facts changed, for the views (a setting written here is not
        reported by ``Library.refresh``, though the venue is metadata)."""
        from .metadata import set_venue

        set_venue(self.library, paper_id, venue)
        self.sync_metadata()
        return frozenset({"meta"})

    def sync_metadata(self) -> None:
        """Give the index the real titles and the years set in the library, and the venues
        ``match`` found (words and ``title:`` match those titles, ``year:`` those years,
        ``venue:`` those venues)."""
        index = self.index
        if index is None:
            return
        changes = self._overrides.follow(self.library.snapshot)
        synced = self._synced
        if synced is not None and synced[0] is index and synced[1] == index.overrides_version:
            if changes:  # (only the papers changed: a walk over 100,000 took seconds)
                index.update_overrides(
                    titles=changes.titles, years=changes.years, venues=changes.venues
                )
        else:  # a new index (or one given other overrides meanwhile): all of them
            overrides = self._overrides
            index.set_title_overrides(overrides.titles)
            index.set_year_overrides(overrides.years)
            index.set_venue_overrides(overrides.venues)
        self._synced = (index, index.overrides_version)

    # -- the filter's history --------------------------------------------------------------
    def history(self) -> list[str]:
        """Earlier queries, oldest first (kept in the library's settings)."""
        import json

        try:
            value = json.loads(self.library.setting(HISTORY_KEY, "[]") or "[]")
        except json.JSONDecodeError:
            return []
        return [q for q in value if isinstance(q, str)] if isinstance(value, list) else []

    def remember_query(self, text: str) -> None:
        """Add a query to the history (moved to the end when it is there already). Raises
        LibraryError when the library cannot take it."""
        import json

        query = " ".join(text.split())
        if not query:
            return
        history = [q for q in self.history() if q != query] + [query]
        self.library.set_setting(HISTORY_KEY, json.dumps(history[-HISTORY_MAX:]))

    # -- rows -----------------------------------------------------------------------------
    def row_count(self, loaded: int) -> int:
        return len(self.result) if self.result is not None else loaded

    def paper_at(self, index: int) -> Paper:
        order = self._order
        if order is not None and index < len(order):
            index = int(order[index])
        return self._base_paper(index)

    def brief_at(self, index: int) -> Paper:
        """`paper_at` with an empty abstract, for what a list row shows (id, title, venue,
        marks): no abstract is decoded or paged in for a row. Each read of a mapped abstract
        maps the page cache's whole folio around it — tens to hundreds of KB on a recent
        kernel — so rows drawn from all over a 100k corpus made its every abstract resident
        (~85 MB) within a few keys."""
        order = self._order
        if order is not None and index < len(order):
            index = int(order[index])
        if self.result is not None:
            return self.result.brief_at(index)
        return self.corpus.papers.without_abstract(index)

    def position_of(self, paper_id: str) -> int | None:
        base = self._base_position(paper_id)
        order = self._order
        if base is None or order is None or base >= len(order):
            return base
        if self._rows_of is None:
            import numpy as np

            self._rows_of = np.empty_like(order)
            self._rows_of[order] = np.arange(len(order), dtype=np.int64)
        return int(self._rows_of[base])

    # -- a paper as shown -----------------------------------------------------------------
    def metadata(self, paper: Paper) -> EffectiveMetadata:
        """The paper's effective metadata: the one place the reader asks for a title,
        authors, venue, year or link. The rule itself (the library's real title over a
        source record's over the derived one, field by field) is ``metadata.effective``."""
        return effective(paper, self.library.snapshot)

    def record(self, paper: Paper) -> Record:
        """The paper as cited: its effective metadata plus the library's facts."""
        from .record import record

        return record(paper, self.library.snapshot)

    def title_of(self, paper: Paper) -> str:
        """The title as the reader shows it (BibTeX's protection braces dropped)."""
        return shown_title(self.metadata(paper).title)

    def venue_of(self, paper: Paper) -> str:
        return self.metadata(paper).venue_label

    def link_of(self, paper: Paper) -> str | None:
        """Where the paper can be read: its URL, else its DOI as a doi.org link, else its
        arXiv page."""
        meta = self.metadata(paper)
        if meta.url:
            return meta.url
        if meta.doi:
            return "https://doi.org/" + meta.doi
        if meta.eprint:
            return "https://arxiv.org/abs/" + meta.eprint
        return None

    # -- marks and targets ----------------------------------------------------------------
    def toggle_mark(self, paper_id: str) -> bool:
        """Mark or unmark a paper; True when it is marked now."""
        if paper_id in self.marks:
            self.marks.discard(paper_id)
            return False
        self.marks.add(paper_id)
        return True

    def targets(self, current: str | None) -> list[Paper]:
        """The papers an action is for: the marked ones when some are marked — in the
        list's order (the query's rows as sorted), then any the query no longer shows, in
        corpus order — else the current one."""
        if self.marks:
            papers = [p for pid in self.marks if (p := self.corpus.get(pid)) is not None]
            rows = self._row_of_docs()
            corpus = self.corpus

            def place(paper: Paper) -> tuple[int, int]:
                doc = corpus.index_of(paper.id)
                row = int(rows[doc]) if doc < len(rows) else -1
                return (0, row) if row >= 0 else (1, doc)

            return sorted(papers, key=place)
        paper = self.corpus.get(current) if current else None
        return [paper] if paper is not None else []

    def _row_of_docs(self) -> npt.NDArray[np.int64]:
        """Each loaded paper's row in the list (-1: not shown), in one pass."""
        import numpy as np

        loaded = len(self.corpus.papers)
        n = self.row_count(loaded)
        positions = np.arange(n, dtype=np.int64)
        order = self._order
        if order is not None:
            cut = min(len(order), n)
            positions[:cut] = order[:cut]
        docs = self.result.order[positions] if self.result is not None else positions
        rows = np.full(loaded, -1, dtype=np.int64)
        rows[docs] = np.arange(n, dtype=np.int64)
        return rows

    def describe(self, papers: Sequence[Paper]) -> str:
        """A short name for the papers of an action, for titles of dialogs."""
        if len(papers) == 1:
            title = self.title_of(papers[0])
            return f"“{title[:50]}{'…' if len(title) > 50 else ''}”"
        return count_phrase(len(papers), "marked paper")

    # -- status ---------------------------------------------------------------------------
    def status_parts(
        self,
        *,
        shown: int,
        loaded: int,
        loading: bool,
        load_progress: tuple[int | None, int] = (0, 0),
        index_progress: tuple[int, int] = (0, 0),
        problems_key: str = "",
    ) -> list[str]:
        """The status bar's parts, most important first (a narrow line keeps the first ones,
        shortened: see `status.StatusPart`): progress, the count, the marks, what the query
        could not use, warnings, the order, the library's counts, then the rest.
        ``load_progress``: files loaded (None: from the corpus cache, all at once) and
        files. ``problems_key``: the key that lists the load problems (the reader's)."""
        read, bookmarked, orphans = self._library_counts(orphans=not loading)
        parts: list[str] = []
        if loading:
            parts.append(status.loading_part(*load_progress))
        elif self.index is None:
            done, papers = index_progress
            waiting = bool(self.query_text.strip())
            parts.append(status.indexing_part(done, papers, waiting=waiting))
        result = self.result
        notes: list[str] = []
        partial = False
        for note in result.notes if result is not None else ():  # an unknown id:, …
            phrase = status.phrase_check(note)  # … a bounded phrase check
            partial = partial or phrase is not None
            notes.append(phrase if phrase is not None else note)
        parts.append(status.count_part(shown, loaded, filtered=result is not None, partial=partial))
        if self.marks:
            parts.append(f"{len(self.marks):,} marked")
        unknown = self.unknown_saved
        if unknown:
            parts.append(status.listed_part("no saved search ", ["@" + n for n in unknown], ", "))
        problem = self.saved_problem
        if problem is not None:
            parts.append(problem)
        if result is not None and result.query.ignored:
            parts.append(status.listed_part("ignored: ", result.query.ignored))
        parts.extend(notes)
        # (the paths, as the load notice counts them)
        problems = status.load_problems_part(self.corpus.failed, self.corpus.warned, problems_key)
        if problems is not None:
            parts.append(problems)
        if self.library.read_only:
            parts.append("⚠ library read-only")
        # the order before the library's counts: a narrow line keeps what the list shows
        if self.sort != "relevance":
            parts.append(status.sort_part(self.sort, SORTS[self.sort], pending=self.sort_pending))
        if result is not None and result.ranked_like:  # like: (with its words)
            parts.append(status.ranked_like_part(result.ranked_like, result.like_words))
        parts.append(status.detail(f"{max(0, loaded - read):,} unread"))
        parts.append(status.detail(f"{bookmarked:,} bookmarked"))
        if orphans and not loading:
            parts.append(status.orphans_part(orphans))
        return parts

    def _library_counts(self, *, orphans: bool = True) -> tuple[int, int, int]:
        """Loaded papers read, bookmarked, and papers the library has something for that
        are not loaded: counted once per change of the library or the corpus, not with each
        key typed (a vectorised look-up of every id the library names — 50,000 after a
        `match` — took ~100 ms a key at 100,000 papers). Without ``orphans`` (the status
        shows none while loading) the last is 0 and the library's ids are not looked up:
        the corpus changes with each batch of papers loaded."""
        snap = self.library.snapshot
        papers = self.corpus.papers
        sections = (snap.read, snap.bookmarks, snap.tags, snap.notes, snap.metadata, papers)
        cached = self._counts
        if (
            cached is not None
            and cached[1] == len(papers)
            and all(a is b for a, b in zip(cached[0], sections, strict=True))
            and (cached[2][2] >= 0 or not orphans)
        ):
            read, bookmarked, missing = cached[2]
            return read, bookmarked, max(0, missing)
        # marks of loaded papers only; one vectorised look-up each, no Paper built
        rows_of = papers.rows_of
        missing = -1  # (not counted)
        if orphans:
            saved = snap.paper_ids()
            missing = len(saved) - len(rows_of(saved))
        counts = (len(rows_of(snap.read)), len(rows_of(snap.bookmarks)), missing)
        self._counts = (sections, len(papers), counts)
        return counts[0], counts[1], max(0, missing)
