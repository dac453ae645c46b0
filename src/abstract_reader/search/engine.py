"""Searching: SearchIndex (matching, ranking, phrases, state filters) and lazy results.

Two vocabularies: accent-folded lower case (the default) and accent-folded case-kept (for
smart-case terms). Titles have their own small index, for ranking, ``^word`` and ``title:``.
"""

from __future__ import annotations

import bisect
import contextlib
import functools
import re
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, overload

import numpy as np
import numpy.typing as npt
from rapidfuzz import process
from rapidfuzz.distance import Levenshtein

from ..corpus import MIN_PREFIX, Corpus, Paper
from ..metadata import venue_matches
from ..text import fold, fold_accents, render, shown_title
from . import postings as _postings
from .cache import load_cache as _load_cache
from .cache import save_cache as _save_cache
from .fuzzy import TypoFinder
from .pool import ArrayPool
from .postings import (
    U32,
    IntArray,
    Progress,
    RawTexts,
    _Build,
    _build_with_titles,
    _Postings,
    release_free_memory,
    use_helper,
)
from .query import (
    _WORD_RE,
    ID_WORD_RE,
    MAX_WORD,
    Query,
    Term,
    Word,
    _positive_words,
    _without_typos,
    parse_query,
)
from .rank import RankedOrder, top_positions

if TYPE_CHECKING:
    import mmap

    from .similar import Ranking

EXACT, PREFIX, TYPO = 4.0, 2.0, 1.0
TITLE_BONUS = 1.5
#: Phrases are checked in at most this many candidates per search (the best-ranked): a
#: few milliseconds however common the words (all 100,000 papers have "of" and "the").
PHRASE_CHECK_LIMIT = 2_000


#: Derived titles' first words found per step, between pauses (`prepare_title_words`).
FIRST_WORDS_STEP = 2_000
#: At most this many prefix masks are made ahead (`SearchIndex.prepare_prefix_masks`).
PREPARED_MASKS = 256
#: Postings scattered per step while making masks ahead (a few milliseconds at a time).
_SCATTER_STEP = 1 << 20

#: Words having more than 1/this of the papers get their papers kept as bits, made ahead
#: (`prepare_prefix_masks`): at most `HEAVY_WORDS` per vocabulary, the commonest.
_HEAVY_FRACTION = 16
HEAVY_WORDS = 256

#: Up to this many runs of words' postings are scattered one by one (more: joined, then at
#: once).
_SCATTERED_ONE_BY_ONE = 8

#: Title scores are merged paper by paper when at most 1/this of the papers have one.
_SPARSE_TITLES = 16

#: From this many matches (and a quarter of the papers) on, a search's order starts from its
#: mask (`RankedOrder.of_mask`): the list of the matches is made only if read past its head.
_DENSE_FROM = 1 << 16

#: Query words whose papers and scores are kept between keystrokes.
_WORD_TERMS_KEPT = 8


@dataclass(frozen=True, slots=True)
class _WordTerm:
    """One query word's papers (``mask``) and score per paper (read-only: shared)."""

    mask: npt.NDArray[np.bool_]
    base: npt.NDArray[np.float32]  #: exact/prefix/typo score, + TITLE_BONUS in the title
    idf: np.float32
    score: npt.NDArray[np.float32]  #: base × idf, rounded once
    typo_forms: frozenset[str]


@dataclass(frozen=True, slots=True)
class _HeavyWords:
    """The commonest words of a vocabulary, each one's papers as bits (one row per word):
    OR-ing a few rows and unpacking them is a few short passes, where scattering their
    postings (up to a million each at 1M papers) costs milliseconds."""

    ids: list[int]  #: vocabulary indices, ascending
    counts: list[int]  #: the words' numbers of papers
    bits: npt.NDArray[np.uint8]  #: row i: `np.packbits` of word ``ids[i]``'s papers

    def split(self, runs: list[tuple[int, int]]) -> tuple[list[tuple[int, int]], list[int]]:
        """Vocabulary runs [start, stop) as (the runs of the other words, the rows of the
        words here)."""
        light: list[tuple[int, int]] = []
        rows: list[int] = []
        ids = self.ids
        for start, stop in runs:
            at = start
            for row in range(bisect.bisect_left(ids, start), bisect.bisect_left(ids, stop)):
                word = ids[row]
                if word > at:
                    light.append((at, word))
                rows.append(row)
                at = word + 1
            if stop > at:
                light.append((at, stop))
        return light, rows


@dataclass(slots=True)
class _Scratch:
    """Arrays of one value per paper that a search writes and gives back (`_scratch`)."""

    title: npt.NDArray[np.float32]  #: all zeros when handed out and when given back
    spare: npt.NDArray[np.float32]
    flags: npt.NDArray[np.bool_]

    @classmethod
    def fresh(cls, n: int) -> _Scratch:
        return cls(np.zeros(n, np.float32), np.empty(n, np.float32), np.empty(n, bool))


@dataclass(frozen=True, slots=True)
class WordMatch:
    exact: int
    prefix: tuple[int, int]
    typos: tuple[tuple[int, int], ...]


class LibraryState(Protocol):
    """What search needs from the library: the state filters (`#tag`, `is:`)."""

    def ids_with_tag(self, tag: str) -> set[str]: ...
    def ids_with_state(self, state: str) -> set[str]: ...

    # and, optionally, ``tag_names() -> list[str]``: the tags papers have (for "did you
    # mean" when a query's tag is on no paper)


@dataclass(slots=True)
class _Matcher:
    """Decides whether a displayed word matches the positive words of a query (for spans)."""

    words: tuple[Word, ...]
    typo_words: frozenset[str]
    #: token → whether it matches (titles on screen share many words: "the", "of", …)
    _known: dict[str, bool] = field(default_factory=dict, repr=False, compare=False)

    def matches(self, token: str) -> bool:
        known = self._known.get(token)
        if known is None:
            if len(self._known) > 65536:
                self._known.clear()
            known = self._known[token] = self._matches(token)
        return known

    def _matches(self, token: str) -> bool:
        lowered = fold(token)[:MAX_WORD]
        cased = fold_accents(token)[:MAX_WORD]
        for w in self.words:
            form = cased if w.case_sensitive else lowered
            if form == w.text or (w.prefix and form.startswith(w.text)):
                return True
        return (lowered in self.typo_words) or (cased in self.typo_words)

    def spans(self, text: str) -> list[tuple[int, int]]:
        if not self.words:
            return []
        return [(m.start(), m.end()) for m in _WORD_RE.finditer(text) if self.matches(m.group())]


@dataclass
class Hit:
    paper: Paper
    score: float
    _matcher: _Matcher = field(repr=False)
    _title: str = field(repr=False, default="")

    @cached_property
    def title_spans(self) -> list[tuple[int, int]]:
        return self._matcher.spans(self._title or self.paper.title)

    @cached_property
    def text_spans(self) -> list[tuple[int, int]]:
        """Spans in the rendered text (math rendered) that the view shows."""
        return self._matcher.spans(render(self.paper.abstract).text)


class SearchResult(Sequence[Hit]):
    """Hits in rank order, created on demand (a result may hold 100,000 papers)."""

    def __init__(
        self,
        index: SearchIndex,
        query: Query,
        order: IntArray | RankedOrder,
        scores: npt.NDArray[np.float32] | None,
        matcher: _Matcher,
        *,
        notes: tuple[str, ...] = (),
        ranked_like: str = "",
        like_words: tuple[str, ...] = (),
    ) -> None:
        self.source = index
        self.query = query
        #: the order, sorted as far as asked for (a search matching most of a million
        #: papers sorts only the best few hundred until the rest are asked for)
        self._ranked = order if isinstance(order, RankedOrder) else None
        self._order = order if not isinstance(order, RankedOrder) else None
        self._scores = scores
        self.matcher = matcher
        self.notes = notes  #: what this search left out (a bounded phrase check)
        #: what ``like:`` ranks by, for the status line ("ranked like #robust"); "" if none
        self.ranked_like = ranked_like
        #: the words that drove a ``like:`` ranking, strongest first
        self.like_words = like_words

    @property
    def ignored(self) -> tuple[str, ...]:
        """What the user should be told: parts of the query not used, work bounded."""
        return self.query.ignored + self.notes

    @property
    def order(self) -> IntArray:
        """Every hit's paper position, in rank order (sorts them all: `head` sorts less)."""
        if self._order is None:
            assert self._ranked is not None
            self._order = self._ranked.full()
        return self._order

    def head(self, k: int) -> IntArray:
        """The first ``k`` hits' paper positions, in rank order."""
        if self._order is None:
            assert self._ranked is not None
            return self._ranked.head(k)
        return self._order[:k]

    def _doc_at(self, i: int) -> int:
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError("hit index out of range")
        if self._order is None:
            assert self._ranked is not None
            return self._ranked.at(i)
        return int(self._order[i])

    def __len__(self) -> int:
        if self._order is None:
            assert self._ranked is not None
            return len(self._ranked)
        return int(self._order.size)

    @overload
    def __getitem__(self, i: int) -> Hit: ...
    @overload
    def __getitem__(self, i: slice) -> list[Hit]: ...
    def __getitem__(self, i: int | slice) -> Hit | list[Hit]:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        doc = self._doc_at(i)
        score = float(self._scores[doc]) if self._scores is not None else 0.0
        paper = self.source.corpus.papers[doc]
        return Hit(paper, score, self.matcher, self.source.title_of(doc))

    def __iter__(self) -> Iterator[Hit]:
        for i in range(len(self)):
            yield self[i]

    def matching_nothing(self) -> SearchResult:
        """The same search with no hits (a query naming an unknown saved search)."""
        return SearchResult(
            self.source, self.query, np.zeros(0, np.int64), self._scores, self.matcher
        )

    def position_of(self, paper_id: str) -> int | None:
        try:
            doc = self.source.corpus.index_of(paper_id)
        except KeyError:
            return None
        if self._order is None:
            assert self._ranked is not None
            return self._ranked.position(doc)
        found = np.nonzero(self._order == doc)[0]
        return int(found[0]) if found.size else None

    def paper_at(self, i: int) -> Paper:
        return self.source.corpus.papers[self._doc_at(i)]

    def brief_at(self, i: int) -> Paper:
        """`paper_at` with an empty abstract (`PaperTable.without_abstract`): a list row."""
        return self.source.corpus.papers.without_abstract(self._doc_at(i))


class SearchIndex:
    """The index over a corpus. ``search(query)`` returns ranked hits with match spans."""

    def __init__(
        self,
        corpus: Corpus,
        *,
        cache_dir: Path | None = None,
        cache_key: str | None = None,
        progress: Progress | None = None,
        defer_save: bool = False,
        early: EarlyIndex | None = None,
    ) -> None:
        """``progress(papers done, papers)`` is called as a build goes (from this thread).
        With ``defer_save``, a freshly built index is written to the cache only by
        `save_cache` (call it after handing the index over: saving never delays it).
        ``early``: the abstracts' index begun while ``corpus`` was loading (carried on
        if nothing it read has moved since; closed in any case)."""
        self.corpus = corpus
        self.n = len(corpus.papers)
        self.loaded_from_cache = False
        self._unsaved: tuple[Path, str] | None = None
        self._saved: tuple[Path, str] | None = None  #: saved, not read from there yet
        self._title_overrides: dict[int, str] = {}
        #: case-sensitive? → (the overrides it was built for, their words → papers)
        self._override_words: dict[bool, tuple[dict[int, str], _OverrideWords]] = {}
        self._override_building = threading.Lock()  #: held while one of those is built
        #: years set in the library: (their papers' rows, those years), for ``year:``
        self._year_overrides: tuple[IntArray, IntArray] | None = None
        self._year_of: dict[int, int] = {}  #: the same, row → year (what updates patch)
        #: venues found by ``match``: (their papers' rows, codes into the names), for ``venue:``
        self._venue_overrides: tuple[IntArray, IntArray, list[str]] | None = None
        self._venue_of: dict[int, int] = {}  #: the same, row → code (what updates patch)
        self._venue_codes: dict[str, int] = {}  #: lowercase venue → its code (names: keys)
        #: counts every change of the overrides: a caller that keeps them in step with a
        #: library (`Session.sync_metadata`) sees whether someone else set them meanwhile
        self.overrides_version = 0
        try:
            data = _load_cache(cache_dir, cache_key, corpus) if cache_dir and cache_key else None
            started = early.take() if early is not None and data is None else None
        finally:
            if early is not None:
                early.close()  # (nothing, if taken: the build closes it)
        #: the mapped index cache the arrays read (None: built here): `release_pages`
        self._mapped: mmap.mmap | None = None
        if data is not None:
            self.text, self.titles, self._mapped = data
            self.loaded_from_cache = True
        else:
            table = corpus.papers
            if started is None:
                started = _Build(
                    use_helper(self.n),
                    reread=lambda start, stop: table.abstracts()[start:stop],
                    raw=table.abstract_bytes,
                    release=table.release_pages,
                )
            release_free_memory()  # what the loading before left in the heap
            # the abstracts (carried on from ``early``), then the titles: tokenised by the
            # helper process, if there is one, while this one makes the abstracts' arrays
            self.text, self.titles = _build_with_titles(
                started,
                _abstracts(corpus),
                self.n,
                _titles(corpus),
                lambda start, stop: table.titles()[start:stop],
                progress=progress,
            )
            if cache_dir and cache_key:
                self._unsaved = (cache_dir, cache_key)
        table = corpus.papers
        names = [*table.venue_names, ""]  # code -1 (no venue) is the last one
        venues = sorted({v.lower() for v in names})
        self._venue_names = venues
        codes = {v: i for i, v in enumerate(venues)}
        to_sorted = np.array([codes[v.lower()] for v in names], np.int32)
        self._venues = to_sorted[table.venue_codes()]
        self._years = table.years()
        self._word_cache: dict[tuple[str, bool, Word], WordMatch] = {}
        self._first_ids: dict[str, IntArray] = {}
        self._prefix_masks: dict[tuple[int, int, int], npt.NDArray[np.bool_]] = {}
        self._phrase_cache: dict[tuple[Word, ...], npt.NDArray[np.int8]] = {}
        self._scratch_lock = threading.Lock()
        self._scratch_arrays: _Scratch | None = None
        #: held while the built postings give way to the saved file's (`save_and_map`): a
        #: pass over every posting (the similarity model's build) takes it too, so that it
        #: never reads the built arrays while the file's pages come in (both resident)
        self.settling = threading.Lock()
        if not defer_save:
            self.save_cache()

    def release_pages(self) -> None:
        """The pages of the mapped index cache leave the resident set (they stay in the page
        cache; a search faults back what it reads): after a scan of every posting (the
        similarity model's build), RSS keeps only what searches touch."""
        if self._mapped is not None:
            from ..cachefile import drop_pages

            drop_pages(self._mapped)

    def save_cache(self, pause: Callable[[], object] | None = None) -> None:
        """Write a freshly built index to its cache (once; nothing if it came from there).
        ``pause`` is called between pieces of the work (the reader waits there while a
        query is typed: at a million papers the save takes seconds)."""
        if self._unsaved is not None:
            cache_dir, cache_key = self._unsaved
            self._unsaved = None
            _save_cache(cache_dir, cache_key, self.corpus, self.text, self.titles, pause=pause)
            self._saved = (cache_dir, cache_key)

    def save_and_map(self, pause: Callable[[], object] | None = None) -> None:
        """`save_cache`, then `map_saved`, holding `settling` (the reader calls it once
        the index is handed over: searches go on meanwhile, reading equal values)."""
        with self.settling:
            self.save_cache(pause)
            self.map_saved(pause)

    @property
    def map_pending(self) -> bool:
        """Saved by `save_cache`, and still read from the built arrays (`map_saved`)."""
        return self._saved is not None

    def map_saved(self, pause: Callable[[], object] | None = None) -> None:
        """After `save_cache`: read the postings from the file written (see `_map_saved`).
        Call it once the background passes over every posting (prefix masks, similarity
        model) are done, so that none reads the built arrays and the file's pages at once."""
        if self._saved is not None:
            cache_dir, cache_key = self._saved
            self._saved = None
            self._map_saved(cache_dir, cache_key, pause)

    def _map_saved(
        self, cache_dir: Path, cache_key: str, pause: Callable[[], object] | None = None
    ) -> None:
        """The postings just saved, mapped from the cache file, take the built ones' place
        once compared equal to them (nothing else to check: the built arrays are ours): the
        index then lives in the page cache, as after a warm start, not in this process's
        anonymous memory (~65 MB at 100,000 papers). Compared a block at a time, each
        block's pages dropped after it, so the file never enters the resident set whole.
        Searches under way still read the built arrays: the same values."""
        from ..cachefile import drop_pages, open_mapped

        try:
            from .cache import SUFFIX, _sections

            mapped = open_mapped(cache_dir / f"{cache_key}{SUFFIX}")
            if mapped is None:
                return
            _digest, data = _sections(memoryview(mapped), self.n)
        except Exception:  # a file we cannot read as an index: the built arrays stay
            return

        def dropped() -> None:
            drop_pages(mapped)
            if pause is not None:
                pause()

        swaps: list[tuple[_Postings, Any, Any]] = []
        for prefix, built in (("text", self.text), ("title", self.titles)):
            for name, mine in (("folded", built.folded), ("cased", built.cased)):
                offsets = data.get(f"{prefix}_{name}_offsets")
                docs = data.get(f"{prefix}_{name}_docs")
                if not (_same(offsets, mine.offsets, dropped) and _same(docs, mine.docs, dropped)):
                    return
                swaps.append((mine, offsets, docs))
        # The same `_Postings` objects (masks made ahead are keyed by them) read the file's
        # arrays now; a search reading both halves meanwhile sees equal values either way.
        for mine, offsets, docs in swaps:
            mine.offsets, mine.docs = offsets, docs
        self._mapped = mapped
        self.clear_query_caches()  # (what earlier searches kept may be views of the built)
        release_free_memory()

    # -- metadata overrides (real titles from the library) -----------------------------
    def _loaded_rows(self, paper_ids: Iterable[str]) -> list[tuple[str, int]]:
        """(id, row) of the ids of this index's papers (rows loaded after it was built are
        left out, as in `_rows_of`): one vectorised look-up (an `index_of` each took
        ~20 µs: 2 s for the titles of 100,000 matched papers)."""
        ids = list(paper_ids)
        if not ids:
            return []
        rows = self.corpus.papers.rows_for(ids).tolist()
        n = self.n
        return [(pid, row) for pid, row in zip(ids, rows, strict=True) if 0 <= row < n]

    def set_title_overrides(self, titles: Mapping[str, str]) -> None:
        """Real titles set by the user: used for ranking, ``^word`` and ``title:``."""
        self._title_overrides = {row: titles[pid] for pid, row in self._loaded_rows(titles)}
        self._titles_changed()

    def _override_table(self, case_sensitive: bool) -> _OverrideWords | None:
        """The words of the titles set in the library (None: there are none), built when
        first needed after they were all set; `update_overrides` patches it."""
        overrides = self._title_overrides  # (replaced, never changed: one for this search)
        if not overrides:
            return None
        words = self._override_words.get(case_sensitive)
        if words is not None and words[0] is overrides:
            return words[1]
        # One build at a time: a search that needs the table while the background thread
        # builds it (`prepare_title_words`) waits for that build instead of making a second
        # one beside it (two builds sharing the GIL: both twice as long; ~1 s at 50,000).
        with self._override_building:
            words = self._override_words.get(case_sensitive)
            if words is None or words[0] is not overrides:
                words = (overrides, _OverrideWords.build(overrides, case_sensitive))
                if self._title_overrides is overrides:  # (not set anew meanwhile)
                    self._override_words[case_sensitive] = words
        return words[1]

    def prepare_title_words(self, pause: Callable[[], None] | None = None) -> None:
        """Make ahead (in a background thread) the words of the titles set in the library,
        case-insensitive (as a query typed in lower case matches them), and the derived
        titles' first words, so that the first key typed does not wait for them (~1 s at
        50,000 titles set; the first ``^word`` ~1 s at 100,000 papers). ``pause``: called
        between steps of the first words (`FIRST_WORDS_STEP` titles): the background's
        wait while keys are typed (`similar.prepare`). The titles' words are one step: a
        search that needs them waits for them (`_override_table`), so they never pause."""
        self._override_table(False)
        self._first_title_ids(False, pause)

    def _titles_changed(self) -> None:
        self._phrase_cache.clear()  # phrases are also checked in titles
        self._word_terms.clear()  # and words scored in them
        self.overrides_version += 1

    def set_year_overrides(self, years: Mapping[str, int]) -> None:
        """Years set in the library (`metadata.year_overrides`): ``year:`` matches them
        instead of the papers' own (the year order and the rows show them too)."""
        self._set_years({row: years[pid] for pid, row in self._loaded_rows(years)})

    def _set_years(self, year_of: dict[int, int]) -> None:
        self._year_of = year_of
        self._year_overrides = (
            (np.fromiter(year_of, np.int64, len(year_of)),
             np.fromiter(year_of.values(), np.int64, len(year_of)))
            if year_of
            else None
        )  # fmt: skip
        self.overrides_version += 1

    def set_venue_overrides(self, venues: Mapping[str, str]) -> None:
        """Venues ``match`` found for papers (`metadata.VenueOverrides`): ``venue:`` matches
        them instead of the papers' own (as the rows and the paper view show them)."""
        self._venue_codes = {}
        self._set_venues(
            {row: self._venue_code(venues[pid]) for pid, row in self._loaded_rows(venues)}
        )

    def _venue_code(self, venue: str) -> int:
        codes = self._venue_codes
        return codes.setdefault(venue.lower(), len(codes))

    def _set_venues(self, venue_of: dict[int, int]) -> None:
        self._venue_of = venue_of
        self._venue_overrides = (
            (np.fromiter(venue_of, np.int64, len(venue_of)),
             np.fromiter(venue_of.values(), np.int64, len(venue_of)),
             list(self._venue_codes))
            if venue_of
            else None
        )  # fmt: skip
        self.overrides_version += 1

    def update_overrides(
        self,
        *,
        titles: Mapping[str, str | None] | None = None,
        years: Mapping[str, int | None] | None = None,
        venues: Mapping[str, str | None] | None = None,
    ) -> None:
        """Change the overrides of these papers only (None: the paper has none any more; a
        paper not named keeps its own): what `Session.sync_metadata` gives after a change,
        in time for the papers changed, not for every overridden one. The others' lookups
        and the caches are left alone when a kind has no change. A search running in
        another thread keeps the overrides it started with (each is replaced, not edited)."""
        if titles:
            before = self._title_overrides
            title_of = dict(before)
            changes: dict[int, tuple[str | None, str | None]] = {}
            for pid, row in self._loaded_rows(titles):
                title = titles[pid]
                if before.get(row) != title:
                    changes[row] = (before.get(row), title)
                _put(title_of, row, title)
            if changes:
                # the words of the titles, patched for the few that changed (a search
                # after a title edit built them anew: ~1.7 s at 50,000 titles)
                for case, (built_for, words) in list(self._override_words.items()):
                    if built_for is before and len(changes) <= _PATCH_TITLES_MAX:
                        self._override_words[case] = (title_of, words.patched(changes, title_of))
                self._title_overrides = title_of
                self._titles_changed()
        if years:
            year_of = dict(self._year_of)
            for pid, row in self._loaded_rows(years):
                _put(year_of, row, years[pid])
            self._set_years(year_of)
        if venues:
            venue_of = dict(self._venue_of)
            for pid, row in self._loaded_rows(venues):
                venue = venues[pid]
                _put(venue_of, row, None if venue is None else self._venue_code(venue))
            self._set_venues(venue_of)

    def title_of(self, doc: int) -> str:
        over = self._title_overrides.get(doc)
        return over if over is not None else self.corpus.papers.title(doc)

    # -- searching ----------------------------------------------------------------------
    def search(
        self,
        query: str | Query,
        library: LibraryState | None = None,
        *,
        typos: bool = True,
        phrase_limit: int | None = PHRASE_CHECK_LIMIT,
    ) -> SearchResult:
        """Ranked papers matching ``query``.

        Phrases are checked against the texts (there are no word positions in the index),
        so the work is bounded: a phrase is checked in the ``phrase_limit`` best-ranked
        papers having all its words (None: in all of them); when that leaves some out,
        ``result.ignored`` says so."""
        q = parse_query(query) if isinstance(query, str) else query
        if not typos:
            q = _without_typos(q)
        positives = _positive_words(q)
        matcher = _Matcher(positives, frozenset())
        if q.empty:
            return SearchResult(self, q, np.arange(self.n, dtype=np.int64), None, matcher)
        mask: npt.NDArray[np.bool_] | None = None  # None: every paper, so far
        total: npt.NDArray[np.float32] | None = None  # None: zeros, so far
        typo_words: set[str] = set()
        phrases: list[Term] = []  # checked last, on the candidates that all terms leave
        pinned: list[int] = []  # papers whose id was pasted as a word: shown first
        for term in dict.fromkeys(q.terms):  # a term typed twice counts once
            term_mask, score = self._term(term, library, typo_words, phrases)
            pasted = self._pasted_ids(term)
            if pasted:
                term_mask = term_mask.copy()
                term_mask[pasted] = True
                pinned.extend(pasted)
            if term.negated:  # (a & ~b is a > b, for booleans: no array for ~b)
                mask = (
                    np.logical_not(term_mask, out=self._pool.take(np.bool_))
                    if mask is None
                    else np.greater(mask, term_mask, out=mask)
                )
            else:
                if mask is None:
                    mask = self._pool.take(np.bool_)
                    np.copyto(mask, term_mask)
                else:
                    np.logical_and(mask, term_mask, out=mask)
                if score is not None:  # a kept (read-only) score is shared until added to
                    total = score if total is None else self._added(total, score)
        if mask is None:
            mask = np.ones(self.n, dtype=bool)
        likes = [t for t in q.terms if t.kind == "like"]
        if total is None and (phrases or likes):
            total = np.zeros(self.n, dtype=np.float32)
        matcher.typo_words = frozenset(typo_words)
        notes: tuple[str, ...] = ()
        if phrases and total is not None:
            if not total.flags.writeable:
                total = total.copy()  # the a-b bonus is added to it
            notes = self._check_phrases(phrases, mask, total, phrase_limit)
        notes = self._id_notes(q.terms) + self._tag_notes(q.terms, library) + notes
        if likes and total is not None:
            return self._ranked_like(q, likes, mask, total, matcher, library=library, notes=notes)
        pins = np.array([d for d in dict.fromkeys(pinned) if mask[d]], dtype=np.int64)
        if pins.size:
            mask = mask.copy()
            mask[pins] = False
        if total is None:  # no word scored: all tied, pins first, then in paper order
            docs = np.flatnonzero(mask)
            plain = np.concatenate([pins, docs]) if pins.size else docs
            return SearchResult(self, q, plain, None, matcher, notes=notes)
        count = int(np.count_nonzero(mask))
        if count >= _DENSE_FROM and count > self.n // 4:  # no list of them made yet
            order = RankedOrder.of_mask(mask, total, pins, count)
        else:
            docs = np.flatnonzero(mask)
            order = RankedOrder(docs, total[docs], pins)
        return SearchResult(self, q, order, total, matcher, notes=notes)

    @functools.cached_property
    def _pool(self) -> ArrayPool:
        """Arrays of one value per paper, reused by the searches (see `ArrayPool`)."""
        return ArrayPool(self.n)

    def _added(
        self, total: npt.NDArray[np.float32], score: npt.NDArray[np.float32]
    ) -> npt.NDArray[np.float32]:
        """``total + score``, in place when ``total`` is this search's own array."""
        if total.flags.writeable:
            return np.add(total, score, out=total)
        return np.add(total, score, out=self._pool.take(np.float32))

    def _pasted_ids(self, term: Term) -> list[int]:
        """The paper whose id a bare word of 8–16 lower-case hex digits is a prefix of
        (when exactly one paper's is), in the term or its alternatives: a pasted id shows
        its paper first."""
        if term.negated:
            return []
        if term.kind == "or":
            return [d for alt in term.alternatives for d in self._pasted_ids(alt)]
        if term.kind != "words" or len(term.words) != 1:
            return []
        word = term.words[0]
        if word.case_sensitive or not ID_WORD_RE.fullmatch(word.text):
            return []
        doc = self._doc_with_prefix(word.text)
        return [] if doc is None else [doc]

    def _id_notes(self, terms: Sequence[Term]) -> tuple[str, ...]:
        """What the user is told about ``id:`` terms that name no paper or several."""
        notes: list[str] = []
        for term in terms:
            if term.kind == "or":
                notes.extend(self._id_notes(term.alternatives))
            elif term.kind == "id":
                found = self._docs_with_prefix(term.value)
                if not found:
                    notes.append(f"id:{term.value} matches no paper in the loaded dumps")
                elif len(found) > 1:
                    shown = ", ".join(self.corpus.papers.id(d)[:12] for d in found[:3])
                    more = ", …" if len(found) > 3 else ""
                    notes.append(
                        f"id:{term.value} is ambiguous ({len(found):,} papers: {shown}{more})"
                    )
        return tuple(notes)

    def _tag_notes(self, terms: Sequence[Term], library: LibraryState | None) -> tuple[str, ...]:
        """What the user is told about ``#tag`` and ``like:#tag`` terms naming a tag no
        loaded paper has (a typo matched nothing, or ranked by nothing, silently), with the
        nearest tag names papers have."""
        if library is None:
            return ()
        wanted: dict[str, str] = {}  # folded → as typed, in order, each once

        def walk(found: Sequence[Term]) -> None:
            for term in found:
                if term.kind == "or":
                    walk(term.alternatives)
                elif term.kind == "tag":
                    wanted.setdefault(term.value.casefold(), term.value)
                elif term.kind == "like" and term.value.startswith("#"):
                    wanted.setdefault(term.value[1:].casefold(), term.value[1:])

        walk(terms)
        notes: list[str] = []
        for tag in wanted.values():
            ids = library.ids_with_tag(tag)
            if ids and self._rows_of(ids).size:
                continue
            from ..tagnames import no_paper_tagged

            names = getattr(library, "tag_names", None)  # (a test's stand-in may lack it)
            known: Iterable[str] = names() if callable(names) else ()
            notes.append(no_paper_tagged(tag, known, loaded=bool(ids)))
        return tuple(notes)

    def _check_phrases(
        self,
        phrases: list[Term],
        mask: npt.NDArray[np.bool_],
        total: npt.NDArray[np.float32],
        limit: int | None,
    ) -> tuple[str, ...]:
        """Apply the phrase terms to ``mask`` (and the a-b bonus to ``total``), in place,
        checking at most ``limit`` candidates: the best-ranked."""
        docs = np.flatnonzero(mask)
        left_out = 0
        if limit is not None and docs.size > limit:
            left_out = docs.size - limit
            docs = docs[top_positions(total[docs], limit)]
        notes: list[str] = []
        for term in phrases:
            found = self._phrase_found(term.words, docs)
            if term.kind == "phrase_loose":  # a-b typed as one token: a bonus when adjacent
                total[docs[found]] += 0.5
                continue
            if left_out:
                mask[:] = False
                mask[docs[found]] = True
                notes.append(
                    f'"{term.value}" was checked in the {limit:,} best-ranked of'
                    f" {docs.size + left_out:,} papers with its words"
                )
                left_out = 0
            else:
                mask[docs[~found]] = False
            docs = docs[found]
        return tuple(notes)

    def _ranked_like(
        self,
        q: Query,
        likes: list[Term],
        mask: npt.NDArray[np.bool_],
        total: npt.NDArray[np.float32],
        matcher: _Matcher,
        *,
        library: LibraryState | None,
        notes: tuple[str, ...] = (),
    ) -> SearchResult:
        """The other terms filter; ``like:`` orders (its seeds left out). A ``like:`` whose
        paper cannot be found is ignored, as a bad term is; several ``like:`` add up."""
        from .similar import for_index

        model = for_index(self)
        rankings: list[Ranking] = []
        names: list[str] = []
        words: list[str] = []
        ignored = list(q.ignored)
        reasons = [*q.reasons[: len(ignored)], *[""] * (len(ignored) - len(q.reasons))]
        for term in likes:
            value = term.value
            if value.startswith(("#", "is:")):
                if library is None:
                    ids: set[str] = set()
                elif value.startswith("#"):
                    ids = library.ids_with_tag(value[1:])
                else:
                    ids = library.ids_with_state(value[3:])
                seeds = sorted(self.corpus.papers.rows_of(ids))
                if not seeds and value.startswith("#"):
                    # a tag no loaded paper has (a typo): no ranking, and no paper rather
                    # than every paper ranked by nothing; `_tag_notes` says why
                    mask[:] = False
                    continue
                ranking = model.like_set_cached(seeds)
                name = value if value.startswith("#") else f"{value[3:]} papers"
                names.append(name if seeds else f"{name} (none)")
            else:
                doc = self._doc_with_prefix(value)
                if doc is None:
                    ignored.append(f"like:{value}")
                    reasons.append(self._why_no_doc(value))
                    continue
                ranking = model.like_paper_cached(doc)
                names.append(_short(shown_title(self.title_of(doc))))
            rankings.append(ranking)
            mask[ranking.seeds] = False
            words.extend(w for w in ranking.words if w not in words)
        if len(ignored) != len(q.ignored):
            q = Query(q.terms, tuple(ignored), q.limits, tuple(reasons))
        if not rankings:
            docs = np.nonzero(mask)[0]
            order = docs[np.argsort(-total[docs], kind="stable")]
            return SearchResult(self, q, order, total, matcher, notes=notes)
        if len(rankings) == 1:  # the ranking's own order, filtered: no sort
            similarity = rankings[0].scores
            order = rankings[0].order[mask[rankings[0].order]]
        else:  # several like: add up
            similarity = np.zeros(self.n, np.float32)
            for ranking in rankings:
                similarity += np.where(np.isfinite(ranking.scores), ranking.scores, 0)
            docs = np.nonzero(mask)[0]
            order = docs[np.argsort(-similarity[docs], kind="stable")]
        description = f"ranked like {' + '.join(names)}" if names else ""
        return SearchResult(
            self,
            q,
            order,
            similarity,
            matcher,
            notes=notes,
            ranked_like=description,
            like_words=tuple(words[:5]),
        )

    def _term(
        self,
        term: Term,
        library: LibraryState | None,
        typo_words: set[str],
        phrases: list[Term] | None = None,
    ) -> tuple[npt.NDArray[np.bool_], npt.NDArray[np.float32] | None]:
        """(papers matching, their scores). Phrase terms that are not negated and not in an
        alternative go to ``phrases`` (checked later, on the remaining candidates)."""
        kind = term.kind
        if kind == "or":
            mask = np.zeros(self.n, dtype=bool)
            best = np.zeros(self.n, dtype=np.float32)
            for alt in term.alternatives:
                alt_mask, alt_score = self._term(alt, library, typo_words)
                if alt.negated:
                    alt_mask = ~alt_mask
                mask |= alt_mask
                if alt_score is not None:
                    np.maximum(best, alt_score, out=best)
            return mask, best
        if kind in ("words", "phrase", "phrase_loose"):
            if len(term.words) == 1:  # the kept arrays themselves (read-only)
                part = self._word_term(term.words[0], typo_words, term.negated)
                mask, score = part.mask, part.score
            else:
                mask = np.ones(self.n, dtype=bool)
                score = np.zeros(self.n, dtype=np.float32)
                for word in term.words:
                    part = self._word_term(word, typo_words, term.negated)
                    mask &= part.mask
                    # the product in float64, rounded once when added (as it always was)
                    score += np.multiply(part.base, part.idf, dtype=np.float64)
            if kind in ("phrase", "phrase_loose") and phrases is not None and not term.negated:
                phrases.append(term)
            elif kind == "phrase":
                mask &= self._phrase_mask(term, mask)
            elif kind == "phrase_loose":  # a-b typed as one token: both words, near each other
                score += 0.5 * self._phrase_mask(term, mask)
            return mask, score
        if kind == "title":
            mask = np.ones(self.n, dtype=bool)
            score = np.zeros(self.n, dtype=np.float32)
            for word in term.words:
                title_score = self._word_scores(word, typo_words, term.negated, title=True)
                mask &= title_score > 0
                score += title_score + TITLE_BONUS
            return mask, score
        if kind == "title_start":
            return self._title_start(term.words[0]), np.full(self.n, TITLE_BONUS, np.float32)
        if kind == "venue":
            # (over the distinct venue names, a few: "neurips" also finds NeurIPS's long name)
            codes = [i for i, v in enumerate(self._venue_names) if venue_matches(v, term.value)]
            mask = np.isin(self._venues, codes)
            venues = self._venue_overrides
            if venues is not None:  # the venues match found over the papers' own
                docs, found, names = venues
                mask[docs] = np.isin(
                    found, [i for i, v in enumerate(names) if venue_matches(v, term.value)]
                )
            return mask, None
        if kind == "year":
            first, _, last = term.value.partition("-")
            lo, hi = int(first), int(last or first)
            mask = (self._years >= lo) & (self._years <= hi)
            overrides = self._year_overrides
            if overrides is not None:  # the library's years over the papers' own
                docs, years = overrides
                mask[docs] = (years >= lo) & (years <= hi)
            return mask, None
        if kind in ("tag", "is"):
            return self._library_mask(term, library), None
        if kind == "id":  # the one paper with that id prefix (none if unknown or ambiguous)
            mask = np.zeros(self.n, dtype=bool)
            doc = self._doc_with_prefix(term.value)
            if doc is not None:
                mask[doc] = True
            return mask, None
        if kind == "like":  # orders, filters nothing (see _ranked_like)
            return np.ones(self.n, dtype=bool), None
        raise AssertionError(kind)

    def _library_mask(self, term: Term, library: LibraryState | None) -> npt.NDArray[np.bool_]:
        mask = np.zeros(self.n, dtype=bool)
        if library is None:
            return mask if term.value != "unread" else ~mask
        if term.kind == "tag":
            ids = library.ids_with_tag(term.value)
        elif term.value == "unread":
            ids = library.ids_with_state("read")
            mask[:] = True
            mask[self._rows_of(ids)] = False
            return mask
        else:
            ids = library.ids_with_state(term.value)
        mask[self._rows_of(ids)] = True
        return mask

    def _rows_of(self, ids: Iterable[str]) -> IntArray:
        """The positions of these papers (the loaded ones; rows past this index's papers,
        loaded after it was built, are left out)."""
        rows = np.array(self.corpus.papers.rows_of(ids), dtype=np.int64)
        return rows[rows < self.n]

    def _doc_with_prefix(self, prefix: str) -> int | None:
        """The one paper whose id starts with ``prefix`` (at least 4 digits), else None."""
        found = self._docs_with_prefix(prefix)
        return found[0] if len(found) == 1 else None

    def _why_no_doc(self, prefix: str) -> str:
        """Why ``_doc_with_prefix(prefix)`` found no paper, in a few words."""
        if len(prefix) < MIN_PREFIX:
            return f"an id prefix is {MIN_PREFIX} or more hex digits"
        if self._docs_with_prefix(prefix):
            return "the id prefix is ambiguous: several papers' ids start with it"
        return "no paper's id starts with it"

    def _docs_with_prefix(self, prefix: str) -> list[int]:
        """The papers whose id starts with ``prefix`` (none below 4 digits), sorted by id:
        from the table's own index of its ids' keys (a numpy search; sorting a million id
        strings here held the GIL ~0.45 s at the first `m` or `id:`)."""
        if len(prefix) < MIN_PREFIX:
            return []
        return [row for row in self.corpus.papers.with_prefix(prefix) if row < self.n]

    def match_word(self, word: Word, title: bool = False) -> WordMatch:
        key = ("t" if title else "a", title, word)
        cached = self._word_cache.get(key)
        if cached is not None:
            return cached
        field_index = self.titles if title else self.text
        postings = field_index.cased if word.case_sensitive else field_index.folded
        exact = postings.find(word.text)
        prefix = postings.prefix_range(word.text) if word.prefix else (0, 0)
        typos = tuple(self._typos.candidates(postings, word.text, word.typos, word.prefix))
        result = WordMatch(exact, prefix, typos)
        if len(self._word_cache) > 4096:
            self._word_cache.clear()
        self._word_cache[key] = result
        return result

    @functools.cached_property
    def _typos(self) -> TypoFinder:
        return TypoFinder()

    @functools.cached_property
    def _word_terms(self) -> dict[tuple[Word, bool], _WordTerm]:
        """A query word's papers and score, kept for the next keystrokes (each key changes
        one word: the others are not computed again)."""
        return {}

    def clear_query_caches(self) -> None:
        """Forget what earlier queries computed (words, typo candidates and pools, phrases,
        prefix masks made while typing — not those made ahead): the next search starts as
        in a new session (for benchmarks; results never depend on these caches)."""
        self._word_cache.clear()
        self._word_terms.clear()
        self._phrase_cache.clear()
        self._prefix_masks.clear()
        self._typos.clear()

    def prepared_masks_bytes(self) -> int:
        """Memory held by the prefix masks and common words' bits made ahead
        (`prepare_prefix_masks`)."""
        words = sum(int(heavy.bits.nbytes) for heavy in list(self._heavy_words.values()))
        return words + sum(int(mask.nbytes) for mask in list(self._packed_masks.values()))

    def _word_term(self, word: Word, typo_words: set[str], negated: bool) -> _WordTerm:
        """Papers having ``word`` (in the text or the title) and its score in each:
        ``base × idf``, base = the exact/prefix/typo score (+ TITLE_BONUS in the title)."""
        key = (word, negated)
        cached = self._word_terms.get(key)
        if cached is None:
            forms: set[str] = set()
            with self._scratch() as scratch:
                combined = self._pool.zeros(np.float32)  # (kept: not scratch)
                self._scores_into(combined, scratch, word, forms, negated, listed=False)
                title_score = scratch.title
                touched = self._scores_into(title_score, scratch, word, forms, negated, title=True)
                if touched is not None and touched.size <= self.n // _SPARSE_TITLES:
                    # titles are short: few papers have the word there, so they are merged
                    # one by one, not by passes over every paper (``touched``: the papers
                    # given a title score, some twice — fancy indexing does each once)
                    in_title = touched[title_score[touched] != 0]
                    combined[in_title] = np.maximum(combined[in_title], title_score[in_title])
                    title_score[touched] = 0
                    mask = np.greater(combined, 0, out=self._pool.take(np.bool_))
                    present = np.count_nonzero(mask)
                    idf = np.float32(np.log1p(self.n / (1 + present)))
                    combined[in_title] += np.float32(TITLE_BONUS)  # exact: few bits
                else:  # many: in passes over every paper, branch-free (scores are ≥ 0)
                    in_titles = np.not_equal(title_score, 0, out=scratch.flags)
                    np.maximum(combined, title_score, out=combined)
                    mask = np.greater(combined, 0, out=self._pool.take(np.bool_))
                    present = np.count_nonzero(mask)
                    idf = np.float32(np.log1p(self.n / (1 + present)))
                    # + TITLE_BONUS in the title, + 0.0 elsewhere (x + 0.0 is x)
                    bonus = np.multiply(in_titles, np.float32(TITLE_BONUS), out=title_score)
                    np.add(combined, bonus, out=combined)
                    title_score.fill(0)
            # float32 × float32 is rounded once, as the float64 product cast to float32
            score = np.multiply(combined, idf, out=self._pool.take(np.float32))
            for array in (mask, combined, score):
                array.flags.writeable = False  # shared by the searches that use it
            cached = _WordTerm(mask, combined, idf, score, frozenset(forms))
            if len(self._word_terms) >= _WORD_TERMS_KEPT:
                self._word_terms.pop(next(iter(self._word_terms)))
            self._word_terms[key] = cached
        else:  # the newest last: the oldest is dropped first
            self._word_terms[key] = self._word_terms.pop(key)
        typo_words |= cached.typo_forms
        return cached

    @contextlib.contextmanager
    def _scratch(self) -> Iterator[_Scratch]:
        """Arrays of one per paper reused by every search (a fresh one at 1M papers is
        ~1,000 page faults, each key several): this index's own, or fresh ones while another
        thread uses them. ``title`` is all zeros whenever handed out and given back."""
        lock = self._scratch_lock
        if not lock.acquire(blocking=False):
            yield _Scratch.fresh(self.n)
            return
        try:
            if self._scratch_arrays is None:
                self._scratch_arrays = _Scratch.fresh(self.n)
            yield self._scratch_arrays
        except BaseException:
            self._scratch_arrays = None  # (left half-written: made afresh next time)
            raise
        finally:
            lock.release()

    def _word_scores(
        self, word: Word, typo_words: set[str], negated: bool, title: bool = False
    ) -> npt.NDArray[np.float32]:
        """The exact/prefix/typo score of ``word`` in each paper's text (or title)."""
        score = np.zeros(self.n, dtype=np.float32)
        with self._scratch() as scratch:
            self._scores_into(score, scratch, word, typo_words, negated, title=title)
        return score

    def _scores_into(
        self,
        score: npt.NDArray[np.float32],
        scratch: _Scratch,
        word: Word,
        typo_words: set[str],
        negated: bool,
        *,
        title: bool = False,
        listed: bool = True,
    ) -> npt.NDArray[np.intp] | None:
        """`_word_scores` into ``score`` (all zeros), using ``scratch.spare``. Returns the
        papers given a score, some maybe twice (None: too many to list, a pass set them, or
        not ``listed``: not asked for)."""
        field_index = self.titles if title else self.text
        postings = field_index.cased if word.case_sensitive else field_index.folded
        match = self.match_word(word, title)
        lo, hi = match.prefix
        touched: list[npt.NDArray[np.intp]] = []
        dense = False  # set by a pass over every paper: no list of papers
        # the typos' papers by number of edits, fewer last (they win); not those of words
        # in the prefix range or the word itself: PREFIX and EXACT are set over them
        by_edits: dict[int, list[int]] = {}
        for vocab_i, edits in match.typos:
            if not lo <= vocab_i < hi and vocab_i != match.exact:
                by_edits.setdefault(edits, []).append(vocab_i)
            if not negated:
                typo_words.add(postings.words[vocab_i])
        # each value is set over its papers in rising order (typos by fewer edits, then
        # PREFIX, then EXACT), so that setting one is taking the better of the two
        set_over = functools.partial(
            self._set_over,
            heavy=None if listed else self._heavy_words.get(id(postings)),
            touched=touched if listed else None,
            spare=scratch.spare,
        )
        for edits in sorted(by_edits, reverse=True):
            runs = postings.word_runs(np.array(by_edits[edits], np.int64))
            set_over(score, postings, runs, TYPO / edits)
        if hi > lo:
            if postings.offsets[hi] - postings.offsets[lo] > self.n:  # a short, common prefix
                # PREFIX beats every typo: its mask × PREFIX, the better of the two, in
                # branch-free passes (assigning through a mask of most papers in no
                # pattern costs ~10 ms at 1M papers)
                mask = self._prefix_mask(postings, lo, hi)
                prefix = np.multiply(mask, np.float32(PREFIX), out=scratch.spare)
                np.maximum(score, prefix, out=score)
                dense = True
            else:  # (not the word itself: EXACT is set over its papers next)
                exact = match.exact
                parts = [(lo, exact), (exact + 1, hi)] if lo <= exact < hi else [(lo, hi)]
                runs = [(start, stop) for start, stop in parts if stop > start]
                set_over(score, postings, runs, PREFIX)
        if match.exact >= 0:
            exact_run = [(match.exact, match.exact + 1)]
            set_over(score, postings, exact_run, EXACT)
        table = self._override_table(word.case_sensitive) if title else None
        if table is not None:
            touched.append(table.score_into(score, word, match, postings))
        if dense or not listed:
            return None
        return np.concatenate(touched) if touched else np.zeros(0, np.intp)

    def _set_over(
        self,
        score: npt.NDArray[np.float32],
        postings: _Postings,
        runs: list[tuple[int, int]],
        value: float,
        *,
        heavy: _HeavyWords | None,
        touched: list[npt.NDArray[np.intp]] | None,
        spare: npt.NDArray[np.float32],
    ) -> None:
        """``value`` over the papers of vocabulary runs ``runs`` (at least every value set
        so far: setting it is taking the better). Words next to each other in the
        vocabulary have their postings next to each other: one slice per run, nothing
        gathered. The common words among them (``heavy``) set it from their bits instead,
        in passes (then ``touched`` must be None: the papers are not listed)."""
        rows: list[int] = []
        if heavy is not None:
            light, rows = heavy.split(runs)
            # the passes cost what scattering ~n/4 postings does: fewer, scattered
            if rows and sum(heavy.counts[row] for row in rows) >= self.n // 4:
                runs = light
            else:
                rows = []
        if len(runs) <= _SCATTERED_ONE_BY_ONE:
            for start, stop in runs:
                docs = _indices(postings.docs_of_range(start, stop))
                score[docs] = value
                if touched is not None:
                    touched.append(docs)
        else:
            docs = _indices(postings.docs_of_ranges(runs))
            score[docs] = value
            if touched is not None:
                touched.append(docs)
        if rows:
            assert heavy is not None and touched is None
            bits = heavy.bits[rows[0]] if len(rows) == 1 else np.bitwise_or.reduce(heavy.bits[rows])
            papers = np.unpackbits(bits, count=self.n).view(np.bool_)
            # branch-free (assigning through a mask of many papers in no pattern is slow)
            np.maximum(score, np.multiply(papers, np.float32(value), out=spare), out=score)

    def _prefix_mask(self, postings: _Postings, lo: int, hi: int) -> npt.NDArray[np.bool_]:
        """Papers having any word of vocabulary range [lo, hi): for prefixes such as "r" the
        postings outnumber the papers many times over, so the mask is kept for the next
        keystroke (and the next query) instead of scattering them again each time — or was
        made ahead by `prepare_prefix_masks` (kept as bits: unpacking is one short pass)."""
        key = (id(postings), lo, hi)
        mask = self._prefix_masks.get(key)
        if mask is None:
            packed = self._packed_masks.get(key)
            if packed is not None:
                return np.unpackbits(packed, count=self.n).view(np.bool_)
            mask = self._scattered(postings, lo, hi)
            if len(self._prefix_masks) >= 64:
                self._prefix_masks.pop(next(iter(self._prefix_masks)))
            self._prefix_masks[key] = mask
        return mask

    def _scattered(
        self, postings: _Postings, lo: int, hi: int, step: int | None = None
    ) -> npt.NDArray[np.bool_]:
        """The mask of vocabulary range [lo, hi), its postings scattered ``step`` at a time
        (None: at once); between steps other threads may take the GIL."""
        mask = np.zeros(self.n, dtype=bool)
        start, stop = int(postings.offsets[lo]), int(postings.offsets[hi])
        if step is None:
            mask[_indices(postings.docs[start:stop])] = True
            return mask
        for at in range(start, stop, step):
            mask[_indices(postings.docs[at : min(stop, at + step)])] = True
            time.sleep(0)  # a key typed meanwhile is echoed and searched first
        return mask

    @property
    def _packed_masks(self) -> dict[tuple[int, int, int], npt.NDArray[np.uint8]]:
        """Prefix masks made ahead (`prepare_prefix_masks`), as bits; read by any thread."""
        found: dict[tuple[int, int, int], npt.NDArray[np.uint8]] | None = self.__dict__.get(
            "_packed_masks_made"
        )
        if found is None:
            found = self.__dict__.setdefault("_packed_masks_made", {})
        return found

    @property
    def _heavy_words(self) -> dict[int, _HeavyWords]:
        """The abstracts' commonest words as bits, by ``id(postings)`` (made ahead by
        `prepare_prefix_masks`); read by any thread."""
        found: dict[int, _HeavyWords] | None = self.__dict__.get("_heavy_words_made")
        if found is None:
            found = self.__dict__.setdefault("_heavy_words_made", {})
        return found

    def _prepare_heavy_words(self, stop: Callable[[], bool] | None) -> int:
        """Make `_heavy_words` (of the abstracts' two vocabularies): returns the words
        made. Stopped early, the words made so far are kept (the rest are scattered)."""
        made = 0
        for postings in (self.text.folded, self.text.cased):
            if id(postings) in self._heavy_words:
                continue
            counts = np.diff(postings.offsets)
            common = np.flatnonzero(counts > self.n // _HEAVY_FRACTION)
            if common.size > HEAVY_WORDS:  # the commonest
                common = common[np.argsort(-counts[common], kind="stable")[:HEAVY_WORDS]]
            ids = sorted(common.tolist())
            bits = np.empty((len(ids), (self.n + 7) // 8), np.uint8)
            done = 0
            for row, word in enumerate(ids):
                if stop is not None and stop():
                    break
                bits[row] = np.packbits(
                    self._scattered(postings, word, word + 1, step=_SCATTER_STEP)
                )
                done = row + 1
            if done:
                kept = ids[:done]
                rows = bits if done == len(ids) else bits[:done].copy()  # (stopped early)
                self._heavy_words[id(postings)] = _HeavyWords(kept, counts[kept].tolist(), rows)
            made += done
            if done < len(ids):
                break
        return made

    def prepare_prefix_masks(
        self, *, limit: int = PREPARED_MASKS, stop: Callable[[], bool] | None = None
    ) -> int:
        """Make ahead (call it in a background thread once the index is ready) the masks of
        the prefixes whose postings outnumber the papers — the first letters of every word
        typed, and common beginnings such as "co" or "pro" — so that the first keys of a
        session cost what the later ones do. Shortest prefixes first; at most ``limit``
        masks, each n/8 bytes (~12 MB for ~100 prefixes at 1M papers); the postings are
        scattered a slice at a time, so a search or the screen waits at most a few
        milliseconds for the GIL. ``stop()`` true: stop early. Then (all masks made) the
        papers of the abstracts' commonest words as bits (`_HeavyWords`: words in more
        than 1/16 of the papers, at most `HEAVY_WORDS` per vocabulary, ~33 MB at 1M
        papers), so that a word typed that covers them ("model", "robust") ORs their bits
        instead of scattering up to a million postings. Returns the masks and words made.
        Searches give the same results with or without them."""
        made, done = self._prepare_prefix_masks(limit, stop)
        if not done:
            return made
        return made + self._prepare_heavy_words(stop)

    def _prepare_prefix_masks(
        self, limit: int, stop: Callable[[], bool] | None
    ) -> tuple[int, bool]:
        """The prefix masks of `prepare_prefix_masks`: (masks made, whether all were
        made — not stopped, nor at ``limit``)."""
        made = 0
        fields = (self.text.folded, self.text.cased, self.titles.folded, self.titles.cased)
        level: list[tuple[_Postings, str, int, int]] = [(p, "", 0, len(p.words)) for p in fields]
        while level:
            deeper: list[tuple[_Postings, str, int, int]] = []
            for postings, prefix, lo, hi in level:
                for child, c_lo, c_hi in _longer_prefixes(postings, prefix, lo, hi):
                    if postings.offsets[c_hi] - postings.offsets[c_lo] <= self.n:
                        continue  # scattered when asked for: fast enough
                    deeper.append((postings, child, c_lo, c_hi))
                    key = (id(postings), c_lo, c_hi)
                    if key in self._packed_masks:
                        continue
                    if made >= limit or (stop is not None and stop()):
                        return made, False
                    mask = self._scattered(postings, c_lo, c_hi, step=_SCATTER_STEP)
                    self._packed_masks[key] = np.packbits(mask)
                    made += 1
            level = deeper
        return made, True

    def _title_start(self, word: Word) -> npt.NDArray[np.bool_]:
        """Papers whose title's first word matches: one numpy range test per query, then
        the titles set in the library, by their first words' table."""
        postings = self.titles.cased if word.case_sensitive else self.titles.folded
        first = self._first_title_ids(word.case_sensitive)
        if word.prefix:
            lo, hi = postings.prefix_range(word.text)
            mask = (first >= lo) & (first < hi)
        else:
            exact = postings.find(word.text)
            mask = first == exact if exact >= 0 else np.zeros(self.n, dtype=bool)
        table = self._override_table(word.case_sensitive)
        if table is not None:
            table.title_start(mask, word)
        return mask

    def _first_title_ids(
        self, case_sensitive: bool, pause: Callable[[], None] | None = None
    ) -> IntArray:
        """Vocabulary id of each derived title's first word (-1: none); computed once.
        ``pause``: called every `FIRST_WORDS_STEP` titles (a pass in Python holding the GIL:
        ~1–4 s at 100,000 papers, which slowed every key typed meanwhile ~2×)."""
        key = "cased" if case_sensitive else "folded"
        cached = self._first_ids.get(key)
        if cached is None:
            postings = self.titles.cased if case_sensitive else self.titles.folded
            norm = fold_accents if case_sensitive else fold
            search = _WORD_RE.search
            titles = self.corpus.papers.titles(between=pause)
            # each title's first word numbered by first appearance, then each distinct word
            # looked up in the vocabulary once, all together (one at a time, a look-up
            # bisected the vocabulary in Python: ~1 s for 100,000 titles)
            number: dict[str, int] = {}
            first = np.full(self.n, -1, np.int64)
            for start in range(0, len(titles), FIRST_WORDS_STEP):
                if pause is not None and start:
                    pause()
                stop = min(len(titles), start + FIRST_WORDS_STEP)
                first[start:stop] = [
                    number.setdefault(m.group(), len(number)) if m else -1
                    for m in map(search, titles[start:stop])
                ]
            words = [norm(word)[:MAX_WORD] for word in number]
            ids = np.array([*postings.words.find_many(words), -1], np.int64)
            made = ids[first]  # (-1 picks the last: no word, no id)
            cached = self._first_ids.setdefault(key, made)  # (one made meanwhile: kept)
        return cached

    def _phrase_mask(self, term: Term, candidates: npt.NDArray[np.bool_]) -> npt.NDArray[np.bool_]:
        """Candidates where the words stand next to each other, in order (all of them: for
        negated phrases and alternatives)."""
        out = np.zeros(self.n, dtype=bool)
        docs = np.flatnonzero(candidates)
        out[docs[self._phrase_found(term.words, docs)]] = True
        return out

    def _phrase_found(self, words: tuple[Word, ...], docs: IntArray) -> npt.NDArray[np.bool_]:
        """For each of ``docs``: do the words stand next to each other, in order?

        Checked on the lower-cased source (``\\mu estimator`` matches "mu estimator": the
        backslash is not a word character), folded only when it is not ASCII; never
        rendered. One short regex search per paper (stopping at the first match), so other
        threads get the GIL between papers; answers are kept per phrase (-1: not known yet)
        for the following keystrokes."""
        known = self._phrase_cache.get(words)
        if known is None:
            known = np.full(self.n, -1, np.int8)
            if len(self._phrase_cache) >= 32:
                self._phrase_cache.pop(next(iter(self._phrase_cache)))
            self._phrase_cache[words] = known
        todo = docs[known[docs] < 0]
        if todo.size:
            pattern = _phrase_pattern(words)
            abstract = self.corpus.papers.abstract
            title_of = self.title_of

            def found(text: str) -> bool:
                return _phrase_in(pattern, _fold_long(text))

            answers = np.fromiter(
                (found(abstract(d)) or found(title_of(d)) for d in todo.tolist()),
                bool,
                todo.size,
            )
            known[todo] = answers
        return np.asarray(known[docs] == 1)

    # -- sizes ---------------------------------------------------------------------------
    def nbytes(self) -> int:
        return sum(
            p.nbytes()
            for p in (
                self.text.folded,
                self.text.cased,
                self.titles.folded,
                self.titles.cased,
            )
        )


def _indices(docs: U32) -> npt.NDArray[np.intp]:
    """Paper positions as numpy's index type: assigning through ``uint32`` indices casts them
    on the way, a block at a time (~5 ms for a million at 1M papers); cast at once
    beforehand, ~3.4 ms."""
    return docs.astype(np.intp)


def _same(
    x: npt.NDArray[np.generic] | None, y: npt.NDArray[np.generic], step: Callable[[], object]
) -> bool:
    """Equal arrays (shape and dtype too)? Compared a block at a time (``step`` after each:
    the mapped side's pages are dropped, never all resident at once)."""
    if x is None or x.dtype != y.dtype or x.shape != y.shape:
        return False
    block = 1 << 20
    for at in range(0, x.size, block):
        if not np.array_equal(x[at : at + block], y[at : at + block]):
            return False
        step()
    return True


def _longer_prefixes(
    postings: _Postings, prefix: str, lo: int, hi: int
) -> Iterator[tuple[str, int, int]]:
    """The prefixes one letter longer than ``prefix`` in its vocabulary range [lo, hi),
    with their ranges, in order: one bisection per prefix, no word decoded but the first
    of each."""
    words = postings.words
    size = len(prefix) + 1
    while lo < hi:
        word = words[lo]
        if len(word) < size:  # the prefix itself, as a word
            lo += 1
            continue
        child = word[:size]
        c_lo, c_hi = words.prefix_range(child)
        yield child, c_lo, c_hi
        lo = max(c_hi, lo + 1)


class EarlyIndex:
    """The abstracts' index begun while a corpus is still loading: each full chunk of rows
    (`postings.CHUNK_DOCS`) goes to the tokenising helper process as soon as it is in, so that the
    helper (its own core, its own GIL) tokenises while this process parses; `SearchIndex`
    then carries the build on (``early=``) from the first row not handed out.

    Only the abstracts' bytes as kept in the table's spill file are handed out (the texts
    of rows parsed here: `PaperTable.abstract_bytes`), and the build is carried on only if
    every chunk handed out still reads the very same bytes once the corpus is final: rows
    never change their abstract, but `CorpusBuilder.finish` may drop rows (records merged
    into dump papers) and renumber the rest — then this build is dropped, and the index
    built afresh. Either way the index equals a build after loading."""

    def __init__(self, corpus: Corpus) -> None:
        self._corpus = corpus
        table = corpus.papers
        self._run: _Build | None = _Build(
            True,
            reread=lambda start, stop: table.abstracts()[start:stop],
            raw=table.abstract_bytes,
            release=table.release_pages,
        )
        if self._run.helper is None:  # no helper process here: nothing to begin early
            self._run = None
        self._sent: list[RawTexts] = []  #: each chunk handed out, as it was read

    def offer(self) -> None:
        """Rows came (call from the loading thread): finished chunks are taken back from the
        helper, and new full chunks handed to it (while it has fewer than two queued). Never
        waits; a chunk costs this process a write of bytes it already has."""
        run = self._run
        if run is None:
            return
        run.collect_ready()
        table = self._corpus.papers
        size = _postings.CHUNK_DOCS
        while run.can_send() and len(table) - run.doc0 >= size:
            pieces = table.abstract_bytes(run.doc0, run.doc0 + size)
            if pieces is None or not run.send_raw(pieces, size):
                self.close()  # (texts we cannot vouch for, or no helper: after loading)
                return
            self._sent.append(pieces)
            table.release_pages()  # (the pages just written to the helper)

    def take(self) -> _Build | None:
        """The build begun, once the corpus is final — None (closed) if any chunk handed out
        no longer reads the same bytes (rows dropped or moved)."""
        run, self._run = self._run, None
        if run is None:
            return None
        table = self._corpus.papers
        size = _postings.CHUNK_DOCS
        for k, pieces in enumerate(self._sent):
            now = table.abstract_bytes(k * size, (k + 1) * size)
            if now is None or not _same_pieces(pieces, now):
                run.close()
                self._sent = []
                return None
        self._sent = []
        return run

    def close(self) -> None:
        """Stop the helper (if the build was not taken): the reader quit, or it failed."""
        run, self._run = self._run, None
        self._sent = []
        if run is not None:
            run.close()


def _same_pieces(before: RawTexts, now: RawTexts) -> bool:
    """The same buffers (objects: their bytes never change) at the same offsets?"""
    return len(before) == len(now) and all(
        data is data_now and list(cut) == list(cut_now)
        for (data, cut), (data_now, cut_now) in zip(before, now, strict=True)
    )


def _abstracts(corpus: Corpus) -> Iterator[str]:
    """The texts the index reads, in corpus order (the one place it reads the papers)."""
    return corpus.papers.iter_abstracts()


def _titles(corpus: Corpus) -> Iterator[str]:
    return iter(corpus.papers.titles())


def _short(title: str, width: int = 40) -> str:
    return title if len(title) <= width else title[: width - 1].rstrip() + "…"


#: at most this many titles changed at once are patched into the words of the titles; more
#: are built anew (on the next search that needs them)
_PATCH_TITLES_MAX = 2_000


class _OverrideWords:
    """The words of the titles set in the library → their papers (one table per case
    mode): a query word's score in them is set per matching word (as `_score_in_text`
    scores one title), not per title (100,000 papers, 50,000 titles set: ~0.8 s a key);
    ``^word`` finds the titles starting with it by their first words. Built once, then
    patched for the titles that change (`patched`: a new table, this one is left as it is
    for a search reading it in another thread); rebuilding it for one changed title took
    ~1.7 s at 50,000 titles."""

    def __init__(
        self,
        *,
        case_sensitive: bool,
        rows: npt.NDArray[np.intp],
        papers: dict[str, list[int]],
        forms: list[str],
        by_length: dict[int, list[str]],
        first: dict[str, list[int]],
        first_forms: list[str],
    ) -> None:
        self.case_sensitive = case_sensitive
        self.rows = rows  #: every paper with a title set
        self.papers = papers  #: each word form → the papers whose title has it
        self.forms = forms  #: those forms, sorted
        self.by_length = by_length  #: form length → the forms
        self.first = first  #: each title's first word form → its papers
        self.first_forms = first_forms  #: those forms, sorted
        self._groups: dict[str, npt.NDArray[np.intp]] = {}

    @staticmethod
    def forms_of(title: str, case_sensitive: bool) -> tuple[list[str], str]:
        """A title's distinct word forms (in order) and its first one ("" for none)."""
        if title.isascii() and len(title) <= MAX_WORD:
            # (folding an ASCII word is lowering it; no word can be longer than MAX_WORD)
            tokens = _WORD_RE.findall(title if case_sensitive else title.lower())
        else:
            norm = fold_accents if case_sensitive else fold
            tokens = [norm(token)[:MAX_WORD] for token in _WORD_RE.findall(title)]
        return list(dict.fromkeys(tokens)), tokens[0] if tokens else ""

    @staticmethod
    def build(overrides: Mapping[int, str], case_sensitive: bool) -> _OverrideWords:
        papers: dict[str, list[int]] = {}
        first: dict[str, list[int]] = {}
        forms_of = _OverrideWords.forms_of
        for doc, title in overrides.items():
            forms, head = forms_of(title, case_sensitive)
            for form in forms:
                docs = papers.get(form)
                if docs is None:
                    papers[form] = [doc]
                else:
                    docs.append(doc)
            if head:
                first.setdefault(head, []).append(doc)
        by_length: dict[int, list[str]] = {}
        for form in papers:
            by_length.setdefault(len(form), []).append(form)
        return _OverrideWords(
            case_sensitive=case_sensitive,
            rows=np.fromiter(overrides, np.intp, len(overrides)),
            papers=papers,
            forms=sorted(papers),
            by_length=by_length,
            first=first,
            first_forms=sorted(first),
        )

    def patched(
        self, changes: Mapping[int, tuple[str | None, str | None]], overrides: Mapping[int, str]
    ) -> _OverrideWords:
        """This table after these papers' titles changed (paper → (old title, new title);
        None: it had / has none), as `build` would make it for the new titles,
        ``overrides``."""
        papers, first = dict(self.papers), dict(self.first)
        touched: set[str] = set()  # forms some paper gained or lost
        touched_first: set[str] = set()
        for doc, (old, now) in changes.items():
            old_forms, old_head = self.forms_of(old, self.case_sensitive) if old else ([], "")
            now_forms, now_head = self.forms_of(now, self.case_sensitive) if now else ([], "")
            lost, gained = set(old_forms) - set(now_forms), set(now_forms) - set(old_forms)
            for form in lost:
                _without(papers, form, doc)
            for form in gained:
                papers[form] = [*papers.get(form, ()), doc]
            touched |= lost | gained
            if old_head != now_head:
                if old_head:
                    _without(first, old_head, doc)
                if now_head:
                    first[now_head] = [*first.get(now_head, ()), doc]
                touched_first.update(f for f in (old_head, now_head) if f)
        forms, by_length = self.forms, self.by_length
        born = {f for f in touched if f in papers and f not in self.papers}
        died = {f for f in touched if f not in papers and f in self.papers}
        if born or died:
            forms = list(forms)
            for form in died:
                del forms[bisect.bisect_left(forms, form)]
            for form in born:
                bisect.insort(forms, form)
            by_length = dict(by_length)
            for size in {len(f) for f in born | died}:
                same = [f for f in by_length.get(size, ()) if f not in died]
                same += [f for f in born if len(f) == size]
                by_length[size] = same
        first_forms = self.first_forms
        if any((f in first) != (f in self.first) for f in touched_first):
            first_forms = sorted(first)
        rows = self.rows
        if any((old is None) != (now is None) for old, now in changes.values()):
            rows = np.fromiter(overrides, np.intp, len(overrides))
        table = _OverrideWords(
            case_sensitive=self.case_sensitive,
            rows=rows,
            papers=papers,
            forms=forms,
            by_length=by_length,
            first=first,
            first_forms=first_forms,
        )
        # (the papers of a form no title gained or lost are the same)
        table._groups = {f: g for f, g in self._groups.items() if f not in touched}
        return table

    def group(self, form: str) -> npt.NDArray[np.intp]:
        """The papers whose title has this form (made when first asked for)."""
        docs = self._groups.get(form)
        if docs is None:
            docs = self._groups[form] = np.array(self.papers.get(form, ()), np.intp)
        return docs

    def title_start(self, mask: npt.NDArray[np.bool_], word: Word) -> None:
        """Set ``mask`` for these papers: does the title's first word match ``word``?"""
        mask[self.rows] = False
        text, heads = word.text, self.first_forms
        if word.prefix:
            i = bisect.bisect_left(heads, text)
            while i < len(heads) and heads[i].startswith(text):
                mask[self.first[heads[i]]] = True
                i += 1
        elif text in self.first:
            mask[self.first[text]] = True

    def score_into(
        self, score: npt.NDArray[np.float32], word: Word, match: WordMatch, postings: _Postings
    ) -> npt.NDArray[np.intp]:
        """Set these papers' scores of ``word`` as `_score_in_text` gives them (the best of
        its words'); returns the papers."""
        score[self.rows] = 0.0
        text, forms = word.text, self.forms
        values: list[tuple[float, str]] = []  # (score, form): set rising, so the best wins
        if word.typos:
            typo_forms = {postings.words[i]: edits for i, edits in match.typos}
            for length in range(len(text) - word.typos, len(text) + word.typos + 1):
                same_length = self.by_length.get(length)
                if not same_length:
                    continue
                # (one pass in C over the forms of a length: one call a form, in Python,
                # took ~15 ms a key at 50,000 titles set)
                for form, _edits, _at in process.extract(
                    text,
                    same_length,
                    scorer=Levenshtein.distance,
                    score_cutoff=word.typos,
                    limit=None,
                ):
                    values.append((TYPO / max(1, typo_forms.get(form, 1)), form))
        if word.prefix:
            i = bisect.bisect_left(forms, text)
            while i < len(forms) and forms[i].startswith(text):
                values.append((PREFIX, forms[i]))
                i += 1
        if text in self.papers:
            values.append((EXACT, text))
        for value, form in sorted(values):
            score[self.group(form)] = value
        return self.rows


def _score_in_text(word: Word, text: str, match: WordMatch, postings: _Postings) -> float:
    best = 0.0
    typo_forms = {postings.words[i]: edits for i, edits in match.typos}
    for token in _WORD_RE.findall(text):
        form = (fold_accents(token) if word.case_sensitive else fold(token))[:MAX_WORD]
        if form == word.text:
            return EXACT
        if word.prefix and form.startswith(word.text):
            best = max(best, PREFIX)
        elif word.typos and Levenshtein.distance(form, word.text) <= word.typos:
            best = max(best, TYPO / max(1, typo_forms.get(form, 1)))
    return best


@functools.lru_cache(maxsize=256)
def _phrase_pattern(words: tuple[Word, ...]) -> re.Pattern[str]:
    """The words with only non-word characters between them. It starts with a literal, so
    the regex engine can scan fast; word boundaries are checked by `_phrase_starts`."""
    return re.compile(
        r"[\W_]+".join(
            re.escape(w.text.lower()) + (r"[^\W_]*" if len(w.text) >= MAX_WORD else "")
            for w in words
        )
    )


def _phrase_in(pattern: re.Pattern[str], text: str) -> bool:
    """Does the phrase stand in ``text`` as whole words (not inside longer words)?"""
    for match in pattern.finditer(text):
        start, end = match.span()
        if (start == 0 or not text[start - 1].isalnum()) and (
            end == len(text) or not text[end].isalnum()
        ):
            return True
    return False


def _phrase_starts(pattern: re.Pattern[str], text: str, first: bool = False) -> list[int]:
    """Where the phrase stands as whole words (not inside longer words)."""
    found: list[int] = []
    for match in pattern.finditer(text):
        start, end = match.span()
        before = text[start - 1 : start]
        after = text[end : end + 1]
        if (not before or not (before.isalnum())) and (not after or not after.isalnum()):
            found.append(start)
            if first:
                break
    return found


_NON_ASCII_RE = re.compile(r"[^\x00-\x7f]")


def _fold_long(text: str) -> str:
    """Lower case, accents and Greek letters folded, for a whole text (not memoised)."""
    if text.isascii():
        return text.lower()
    return _NON_ASCII_RE.sub(lambda m: fold_accents(m.group()), text).lower()


_K = TypeVar("_K")
_V = TypeVar("_V")


def _without(table: dict[str, list[int]], form: str, doc: int) -> None:
    """``doc`` no longer in ``table[form]`` (a new list; the form gone when it was the last)."""
    docs = [d for d in table.get(form, ()) if d != doc]
    if docs:
        table[form] = docs
    else:
        table.pop(form, None)


def _put(mapping: dict[_K, _V], key: _K, value: _V | None) -> None:
    """``mapping[key] = value``, or no ``key`` when ``value`` is None."""
    if value is None:
        mapping.pop(key, None)
    else:
        mapping[key] = value
