"""Papers like a paper, or like a set of papers: tf-idf over the search index's postings.

Each paper is a tf-idf vector over the words of its abstract: the index keeps which words a
paper has (not how often), so the term frequency is binary and a word weighs its smoothed
idf, ``log((1 + n) / (1 + df)) + 1``, the vector scaled to unit length. Words that cannot tell
papers apart are left out: stop words, numbers, single letters, words in one paper only, and
words in more than ``max_df`` of the papers (arxiv-sanity's 10 %).

Nothing is built until the first ``like:`` query, or until ``prepare`` (the reader calls it
in a worker once the index is ready): then each word's idf, each paper's norm and each
paper's useful words (the postings of the words that count, turned around: paper → words,
half a million postings at a time, so that the build's temporaries stay ~20 MB) are derived
once from the index's arrays, numpy only, and kept with the index. A set's centroid then reads only its papers'
rows — no scan of every posting (that scan, ~13M postings at 100,000 papers, was most of a
tag's first ranking), no Python loop per paper.

Scoring is sparse in the query: the query vector's words select postings, ``np.bincount``
adds them up per paper. For a set of papers (``like:#tag``) two models are offered and
measured in ``benchmarks/eval_like.py``: the centroid of the set (Rocchio without
negatives) and a ridge-regression classifier (positives = the set, negatives = an evenly
spaced, deterministic sample of the rest, features = the set's strongest words), as
arxiv-sanity trains a linear SVM per tag.
"""

from __future__ import annotations

import functools
import threading
import time
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import numpy as np
import numpy.typing as npt

from .postings import _ranges

if TYPE_CHECKING:
    from .engine import SearchIndex

F32 = npt.NDArray[np.float32]
F64 = npt.NDArray[np.float64]
I64 = npt.NDArray[np.int64]

SetModel = Literal["centroid", "ridge"]
#: The model ``like:#tag`` uses; picked by the numbers in benchmarks/eval_like.py.
DEFAULT_SET_MODEL: SetModel = "centroid"
RIDGE_ALPHA = 1.0

#: English function words and the boilerplate of abstracts ("we propose a novel method").
_STOP_TEXT = """
    a about above across after again against all almost along also although always am among
    an and another any are around as at be because been before being below between both but
    by can cannot could did do does doing done down due during each either else enough etc
    even ever every few for from further had has have having he her here hers herself him
    himself his how however i ie eg if in into is it its itself just least less many may me
    might more most much must my neither no nor not now of off often on once one only onto
    or other others our ours ourselves out over own per rather same several she should
    since so some such than that the their theirs them themselves then there these they
    this those though through thus to too toward towards under until up upon us very via
    was we were what when where whether which while who whom whose why will with within
    without would yet you your yours
    paper papers propose proposed proposes present presents introduce introduces show shows
    shown demonstrate demonstrates novel new approach approaches method methods based using
    use used uses work works result results existing however furthermore moreover
    additionally first second third two three well significantly significant
    """
STOP_WORDS = frozenset(_STOP_TEXT.split())


def _useful(word: str) -> bool:
    return len(word) >= 2 and not word.isdigit() and word not in STOP_WORDS


@dataclass(frozen=True)
class Ranking:
    """Similarity of every paper to the seeds (the seeds themselves get -inf)."""

    scores: F32
    seeds: I64
    words: tuple[str, ...]  #: the words that drove the ranking, strongest first

    @functools.cached_property
    def order(self) -> I64:
        """Every paper but the seeds, most similar first; papers sharing no word with the
        seeds last, in corpus order. Kept, so a filter typed after ``like:`` only selects
        from it (no sort)."""
        related = np.flatnonzero(self.scores > 0)
        ranked = related[_descending(self.scores[related])]
        unrelated = np.flatnonzero(self.scores == 0)
        return np.concatenate([ranked, unrelated]).astype(np.int64)


class Similarity:
    """tf-idf vectors of a corpus, derived from a sorted vocabulary's CSR postings."""

    def __init__(
        self,
        words: Sequence[str],
        offsets: I64,
        docs: npt.NDArray[np.uint32],
        n: int,
        words_of: Callable[[int], I64] | None = None,
        *,
        min_df: int = 2,
        max_df: float = 0.1,
        min_max_df: int = 50,
        pause: Callable[[], None] | None = None,
    ) -> None:
        """``words_of(doc)``: the vocabulary ids of a paper's words, by tokenising it again
        (kept for checks; the model reads the postings). ``max_df``: the share of papers a
        word may appear in and still count; never below ``min_max_df`` papers, so that a
        small corpus keeps its topic words. ``pause``: called between the build's steps (it
        may wait: see `prepare`)."""
        self.n = n
        self.words = words
        self.words_of = words_of
        self.offsets: I64 = np.asarray(offsets, np.int64)
        self.docs = docs
        df = np.diff(self.offsets)
        useful = np.fromiter((_useful(w) for w in words), bool, len(words))
        limit = max(max_df * n, float(min_max_df))
        keep = useful & (df >= min_df) & (df <= limit)
        self.idf: F32 = np.zeros(len(words), np.float32)
        self.idf[keep] = (np.log((1.0 + n) / (1.0 + df[keep])) + 1.0).astype(np.float32)
        squares = self.idf * self.idf
        if pause is not None:
            pause()
        self.doc_offsets, self.doc_terms, sums = _by_paper(
            self.offsets, docs, keep, n, squares, pause=pause
        )
        # |paper|² = the sum of its kept words' idf² (the others weigh 0), added up per paper
        # while the postings are turned around: no array the size of all the postings
        norms = np.sqrt(sums)
        del sums
        norms[norms == 0] = 1.0
        self.inv_norms: F32 = (1.0 / norms).astype(np.float32)
        self._recent: dict[bytes, Ranking] = {}

    def nbytes(self) -> int:
        """Memory of its own (the postings belong to the index)."""
        arrays = (self.idf, self.inv_norms, self.doc_terms, self.doc_offsets)
        return int(sum(a.nbytes for a in arrays))

    def terms_of(self, doc: int) -> I64:
        """A paper's words that count (idf > 0), sorted."""
        return self.doc_terms[self.doc_offsets[doc] : self.doc_offsets[doc + 1]].astype(np.int64)

    # -- vectors ----------------------------------------------------------------------
    def vector(self, doc: int) -> tuple[I64, F32]:
        """(word ids, unit-length weights) of one paper."""
        terms = self.terms_of(doc)
        return terms, self.idf[terms] * self.inv_norms[doc]

    def centroid(self, docs: I64) -> tuple[I64, F32]:
        """The mean of the papers' unit vectors, sparse: their rows of ``doc_terms`` only."""
        starts, ends = self.doc_offsets[docs], self.doc_offsets[docs + 1]
        terms = self.doc_terms[_ranges(starts, ends - starts)]
        weights = self.idf[terms] * np.repeat(self.inv_norms[docs], ends - starts)
        dense = np.bincount(terms, weights=weights, minlength=len(self.words))
        nonzero = np.flatnonzero(dense)
        return nonzero, (dense[nonzero] / max(1, docs.size)).astype(np.float32)

    def scores(self, terms: I64, weights: F32) -> F32:
        """Cosine similarity of every paper to a sparse query vector (up to its norm)."""
        starts, ends = self.offsets[terms], self.offsets[terms + 1]
        # the words' postings: one slice each (a few hundred words), copied, rather than a
        # (postings,)-sized array of positions to gather with
        parts = [self.docs[a:b] for a, b in zip(starts.tolist(), ends.tolist(), strict=True)]
        docs = np.concatenate(parts) if parts else np.zeros(0, np.uint32)
        contributions = np.repeat(weights * self.idf[terms], ends - starts)
        totals = np.bincount(docs, weights=contributions, minlength=self.n)
        return (totals * self.inv_norms).astype(np.float32)

    # -- rankings ---------------------------------------------------------------------
    def like_paper(self, doc: int) -> Ranking:
        terms, weights = self.vector(doc)
        scores = self.scores(terms, weights)
        seeds = np.array([doc], np.int64)
        scores[seeds] = -np.inf
        return self._ranking(terms, weights, scores, seeds)

    def like_set_cached(self, docs: Sequence[int] | I64) -> Ranking:
        """``like_set`` with the default model, remembered for the last few sets (typing
        more filter words after ``like:#tag`` ranks the same set again)."""
        seeds = np.unique(np.asarray(docs, np.int64))
        key = seeds.tobytes()
        found = self._recent.get(key)
        if found is None:
            found = self.like_set(seeds)
            if len(self._recent) >= 8:
                self._recent.pop(next(iter(self._recent)))
            self._recent[key] = found
        return found

    def like_paper_cached(self, doc: int) -> Ranking:
        key = b"doc:%d" % doc
        found = self._recent.get(key)
        if found is None:
            found = self.like_paper(doc)
            if len(self._recent) >= 8:
                self._recent.pop(next(iter(self._recent)))
            self._recent[key] = found
        return found

    def like_set(self, docs: Sequence[int] | I64, model: SetModel = DEFAULT_SET_MODEL) -> Ranking:
        seeds = np.unique(np.asarray(docs, np.int64))
        if seeds.size == 0:
            return Ranking(np.zeros(self.n, np.float32), seeds, ())
        terms, weights = self.centroid(seeds)
        if model == "ridge" and seeds.size < self.n:
            terms, weights = self._ridge(seeds, terms, weights)
        terms, weights = _strongest(terms, weights, 400)
        scores = self.scores(terms, weights)
        scores[seeds] = -np.inf
        return self._ranking(terms, weights, scores, seeds)

    def _ridge(
        self,
        seeds: I64,
        terms: I64,
        weights: F32,
        *,
        features: int = 800,
        negatives: int = 1500,
        alpha: float | None = None,
    ) -> tuple[I64, F32]:
        """A class-balanced ridge regression on the seeds (+1) against an evenly spaced
        sample of the other papers (-1), over the seeds' strongest words. Deterministic."""
        alpha = RIDGE_ALPHA if alpha is None else alpha
        feats, _ = _strongest(terms, weights, features)
        feats = np.sort(feats)
        others = np.setdiff1d(np.arange(self.n, dtype=np.int64), seeds, assume_unique=True)
        step = max(1, others.size // negatives)
        sample = others[::step][:negatives]
        rows = np.concatenate([seeds, sample])
        x = self._dense_rows(rows, feats)
        y = np.concatenate([np.ones(seeds.size), -np.ones(sample.size)])
        balance = np.concatenate(
            [np.full(seeds.size, 0.5 / seeds.size), np.full(sample.size, 0.5 / max(1, sample.size))]
        )
        xw = x * balance[:, None]
        # (Xᵀ W X + αI) w = Xᵀ W y, scaled so that α is relative to one sample's weight
        gram = (xw.T @ x) * rows.size
        gram[np.diag_indices_from(gram)] += alpha
        coef = np.linalg.solve(gram, (xw.T @ y) * rows.size)
        return feats, coef.astype(np.float32)

    def _dense_rows(self, rows: I64, feats: I64) -> F64:
        """The papers' unit vectors restricted to ``feats`` (sorted word ids), dense."""
        per_row = [self.terms_of(int(d)) for d in rows.tolist()]
        lengths = np.fromiter((t.size for t in per_row), np.int64, len(per_row))
        terms = np.concatenate(per_row)
        row_of = np.repeat(np.arange(rows.size), lengths)
        slot = np.searchsorted(feats, terms)
        slot[slot >= feats.size] = 0
        hit = feats[slot] == terms
        out = np.zeros((rows.size, feats.size), np.float64)
        values = self.idf[terms[hit]] * np.repeat(self.inv_norms[rows], lengths)[hit]
        out[row_of[hit], slot[hit]] = values
        return out

    def _ranking(self, terms: I64, weights: F32, scores: F32, seeds: I64) -> Ranking:
        """The ranking with its words; its order is made once, for the words too (the best
        papers are its first ones)."""
        ranking = Ranking(scores, seeds, ())
        words = self._explain(terms, weights, scores, best=ranking.order[:5])
        explained = Ranking(scores, seeds, words)
        explained.__dict__["order"] = ranking.order  # what cached_property would store
        return explained

    def _explain(
        self,
        terms: I64,
        weights: F32,
        scores: F32,
        *,
        best: I64 | None = None,
        top: int = 5,
        k: int = 5,
    ) -> tuple[str, ...]:
        """The query's words that the best matches share: each word's weight in the query
        times its presence in the first ``top`` papers, each worth a fifth of the one
        before (so a rare word shared with the best match beats a common word shared with
        all of them, and the next matches break ties)."""
        if terms.size == 0:
            return ()
        best = top_k(scores, top) if best is None else best[:top]
        best = best[scores[best] > 0]
        if best.size == 0:
            return ()
        # which of the query's words each best paper has: its row of words (query words
        # all count, so all are in the rows), not the words' postings
        shared = np.zeros(terms.size, np.float64)
        for rank, doc in enumerate(best.tolist()):
            shared += 0.2**rank * np.isin(terms, self.terms_of(doc))
        strength = shared * weights * self.idf[terms]
        order = np.argsort(-strength, kind="stable")[:k]
        return tuple(self.words[int(terms[i])] for i in order if strength[i] > 0)


#: Postings per block of turning the postings around: bounds the temporary arrays (a block
#: holds its own postings' papers, words and positions, ~40 bytes each, not all of them).
_BY_PAPER_BLOCK = 1 << 19


def _by_paper(
    offsets: I64,
    docs: npt.NDArray[np.uint32],
    keep: npt.NDArray[np.bool_],
    n: int,
    squares: F32 | None = None,
    *,
    block: int = _BY_PAPER_BLOCK,
    pause: Callable[[], None] | None = None,
) -> tuple[I64, npt.NDArray[np.uint32], F64]:
    """The postings of the ``keep`` words turned around: (offsets, words) in CSR form, each
    paper's words sorted; and, with ``squares`` (a weight per word), each paper's sum of its
    kept words' weights (in float64, added in the order of its words).

    Numpy only, and bounded: the postings are read a block of whole words (about ``block``
    postings) at a time, twice — first to count each paper's kept words (and add up their
    weights), then to put each block's postings in their papers' rows. A block is put in
    paper order by a stable sort (so a paper's words stay in the vocabulary's order, and
    the blocks come in that order too); no temporary array has the size of all the
    postings. ``pause`` is called before each block."""
    assert block > 0
    bounds = _blocks(offsets, block)
    counts: I64 = np.zeros(n, np.int64)
    sums: F64 = np.zeros(n, np.float64)
    for span in bounds:
        if pause is not None:
            pause()
        kept_docs, kept_terms = _kept(offsets, docs, keep, span)
        counts += np.bincount(kept_docs, minlength=n)[:n]
        if squares is not None:
            sums += np.bincount(kept_docs, weights=squares[kept_terms], minlength=n)[:n]
    doc_offsets: I64 = np.zeros(n + 1, np.int64)
    np.cumsum(counts, out=doc_offsets[1:])
    del counts
    doc_terms = np.empty(int(doc_offsets[-1]), np.uint32)
    cursor = doc_offsets[:-1].copy()  # where each paper's next words go
    for span in bounds:
        if pause is not None:
            pause()
        kept_docs, kept_terms = _kept(offsets, docs, keep, span)
        if kept_docs.size == 0:
            continue
        order = _stable_order(kept_docs, n)
        by_doc = kept_docs[order]
        del kept_docs
        starts = np.empty(by_doc.size, bool)  # where each paper's run begins
        starts[0] = True
        np.not_equal(by_doc[1:], by_doc[:-1], out=starts[1:])
        first = np.flatnonzero(starts)
        del starts
        papers = by_doc[first].astype(np.int64)
        lengths = np.diff(first, append=by_doc.size)
        del by_doc
        at = np.repeat(cursor[papers] - first, lengths)
        at += np.arange(at.size, dtype=np.int64)
        doc_terms[at] = kept_terms[order]
        cursor[papers] += lengths
    return doc_offsets, doc_terms, sums


def _blocks(offsets: I64, block: int) -> list[tuple[int, int]]:
    """Word ranges of about ``block`` postings each (a word is never split)."""
    words = offsets.size - 1
    cuts = np.searchsorted(offsets, np.arange(block, int(offsets[-1]), block), "right") - 1
    edges = np.unique(np.concatenate([[0], np.clip(cuts, 0, words), [words]]))
    return [
        (int(a), int(b))
        for a, b in zip(edges[:-1].tolist(), edges[1:].tolist(), strict=True)
        if b > a
    ]


def _kept(
    offsets: I64, docs: npt.NDArray[np.uint32], keep: npt.NDArray[np.bool_], words: tuple[int, int]
) -> tuple[npt.NDArray[np.uint32], npt.NDArray[np.uint32]]:
    """The kept postings of the words ``words`` (lo, hi): (papers, word ids), word by word."""
    lo, hi = words
    df = np.diff(offsets[lo : hi + 1])
    part = docs[offsets[lo] : offsets[hi]]
    wanted = keep[lo:hi]
    kept_docs = part[np.repeat(wanted, df)]
    ids = np.flatnonzero(wanted)
    kept_terms = np.repeat((ids + lo).astype(np.uint32), df[ids])
    return kept_docs, kept_terms


def _stable_order(keys: npt.NDArray[np.uint32], n: int) -> I64:
    """A stable argsort of paper numbers: numpy's radix sort on 16-bit halves (one pass
    below 65,536 papers)."""
    low = np.argsort((keys & np.uint32(0xFFFF)).astype(np.uint16), kind="stable")
    if n <= 1 << 16:
        return low
    high = np.argsort((keys[low] >> np.uint32(16)).astype(np.uint16), kind="stable")
    return low[high]


def top_k(scores: F32, k: int) -> I64:
    """The positions of the k highest finite scores, best first; deterministic."""
    keys = np.where(np.isfinite(scores), -scores, np.inf)
    part = np.argpartition(keys, k - 1)[:k] if keys.size > k else np.arange(keys.size)
    part = part[np.isfinite(keys[part])]
    return part[np.lexsort((part, keys[part]))].astype(np.int64)


def _descending(values: F32) -> I64:
    """The order of positive floats, largest first, ties in their given order. A positive
    float32's bits rise with its value, so this is a stable sort of 32-bit integers: two
    passes of numpy's radix sort on 16-bit halves (3-4x quicker than sorting the floats at
    100,000 papers)."""
    keys = np.uint32(0xFFFFFFFF) - values.view(np.uint32)  # descending
    first = np.argsort((keys & np.uint32(0xFFFF)).astype(np.uint16), kind="stable")
    then = np.argsort((keys[first] >> np.uint32(16)).astype(np.uint16), kind="stable")
    return first[then].astype(np.int64)


def _strongest(terms: I64, weights: F32, k: int) -> tuple[I64, F32]:
    if terms.size <= k:
        return terms, weights
    keep = np.sort(np.argpartition(-np.abs(weights), k)[:k])
    return terms[keep], weights[keep]


def prepare(index: SearchIndex, busy: Callable[[], bool] | None = None) -> None:
    """Build the index's similarity model now (in a worker, once the index is ready), so
    that the first ``like:`` costs what the next ones do — after the words of the titles
    set in the library and the masks of common prefixes, so that the first keys typed cost
    what the later ones do. The builds read every posting: the index cache's pages they
    brought in leave the resident set again.

    Between steps (a few milliseconds to ~0.1 s of work each; the titles' words, one step,
    ~0.5 s at 50,000 titles set) it waits while ``busy()``
    says so — the reader's says so while the user is typing, so that this work, which holds
    the GIL much of the time, does not share the CPU with the searches and frames of their
    keys — but not while a search waits for the model (`for_index`)."""
    pause = None if busy is None else functools.partial(wait_while, busy)
    if pause is not None:
        pause()
    index.prepare_title_words(pause)
    index.prepare_prefix_masks()
    for_index(index, pause)
    index.release_pages()


def for_index(index: SearchIndex, pause: Callable[[], None] | None = None) -> Similarity:
    """The index's similarity model, built on first use (once, whichever thread asks first:
    the others wait for it) and kept with the index. ``pause``: called between the build's
    steps (see `prepare`); without it, a search needs the model now, and a build that
    pauses stops pausing until it has it."""
    found = _BUILT.get(index)
    if found is not None:
        return found
    if pause is not None:
        with _BUILDING:
            return _build(index, pause)
    with _WANTED, _BUILDING:
        return _build(index)


def wait_while(busy: Callable[[], bool]) -> None:
    """Wait while ``busy()`` — unless a search is waiting for the model. Background work
    that can wait (this model's build, a large index's cache save: `MainScreen`) waits so
    while the user types a query."""
    while not _WANTED.count and busy():
        time.sleep(0.02)


def _build(index: SearchIndex, pause: Callable[[], None] | None = None) -> Similarity:
    found = _BUILT.get(index)
    if found is None:
        postings = index.text.folded

        def words_of(doc: int) -> I64:
            """Vocabulary ids of a paper's abstract words, tokenised as the index does."""
            from .postings import _TOKEN_RE, _normalise_vocab

            raw = {
                t
                for piece in set(index.corpus.papers.abstract(doc).split())
                for t in _TOKEN_RE.findall(piece)
            }
            _cased, folded = _normalise_vocab(sorted(raw))
            ids = {postings.find(f) for f in folded if f}
            ids.discard(-1)
            return np.fromiter(ids, np.int64, len(ids))

        with index.settling:  # (not while the postings move to the cache file's pages)
            found = Similarity(
                postings.words, postings.offsets, postings.docs, index.n, words_of, pause=pause
            )
        _BUILT[index] = found
        from .postings import release_free_memory

        release_free_memory()  # the build's temporaries
    return found


_BUILT: weakref.WeakKeyDictionary[SearchIndex, Similarity] = weakref.WeakKeyDictionary()
_BUILDING = threading.Lock()


class _Waiting:
    """How many searches wait for a model being built (`for_index` without ``pause``):
    ``with _WANTED:`` counts one while it lasts."""

    def __init__(self) -> None:
        self.count = 0
        self._lock = threading.Lock()

    def __enter__(self) -> None:
        with self._lock:
            self.count += 1

    def __exit__(self, *_exc: object) -> None:
        with self._lock:
            self.count -= 1


_WANTED = _Waiting()
