"""Papers like a paper, or like a set of papers: tf-idf over the search index's postings.

Each paper is a tf-idf vector over the words of its abstract: the index keeps which words a
paper has (not how often), so the term frequency is binary and a word weighs its smoothed
idf, ``log((1 + n) / (1 + df)) + 1``, the vector scaled to unit length. Words that cannot tell
papers apart are left out: stop words, numbers, single letters, words in one paper only, and
words in more than ``max_df`` of the papers (arxiv-sanity's 10 %).

Nothing is built until the first ``like:`` query: then the kept words' postings, each
paper's norm and a paper → words index (the postings transposed) are derived once from the
index's arrays, numpy only, and kept with the index.

Scoring is sparse in the query: the query vector's words select postings, ``np.bincount``
adds them up per paper. For a set of papers (``like:#tag``) two models are offered and
measured in ``benchmarks/eval_like.py``: the centroid of the set (Rocchio without
negatives) and a ridge-regression classifier (positives = the set, negatives = an evenly
spaced, deterministic sample of the rest, features = the set's strongest words), as
arxiv-sanity trains a linear SVM per tag.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

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


@dataclass(frozen=True, slots=True)
class Ranking:
    """Similarity of every paper to the seeds (the seeds themselves get -inf)."""

    scores: F32
    seeds: I64
    words: tuple[str, ...]  #: the words that drove the ranking, strongest first


class Similarity:
    """tf-idf vectors of a corpus, derived from a sorted vocabulary's CSR postings."""

    def __init__(
        self,
        words: Sequence[str],
        offsets: I64,
        docs: npt.NDArray[np.uint32],
        n: int,
        *,
        min_df: int = 2,
        max_df: float = 0.1,
        min_max_df: int = 50,
    ) -> None:
        """``max_df``: the share of papers a word may appear in and still count; never
        below ``min_max_df`` papers, so a small corpus keeps its topic words."""
        self.n = n
        self.words = words
        offsets = np.asarray(offsets, np.int64)
        df = np.diff(offsets)
        useful = np.fromiter((_useful(w) for w in words), bool, len(words))
        limit = max(max_df * n, float(min_max_df))
        keep = useful & (df >= min_df) & (df <= limit)
        self.idf: F32 = np.zeros(len(words), np.float32)
        self.idf[keep] = (np.log((1.0 + n) / (1.0 + df[keep])) + 1.0).astype(np.float32)
        # the kept words' postings, still sorted by word then paper
        kept_df = np.where(keep, df, 0)
        self.offsets: I64 = np.zeros(len(words) + 1, np.int64)
        np.cumsum(kept_df, out=self.offsets[1:])
        word_of = np.repeat(np.arange(len(words), dtype=np.int32), df)
        in_kept = keep[word_of]
        self.docs: npt.NDArray[np.int32] = docs[in_kept].astype(np.int32)
        terms = word_of[in_kept]
        weights = self.idf[terms]
        norms = np.sqrt(np.bincount(self.docs, weights=weights * weights, minlength=n))
        norms[norms == 0] = 1.0
        self.inv_norms: F32 = (1.0 / norms).astype(np.float32)
        # paper → its words: the postings transposed (a stable sort keeps words in order)
        order = np.argsort(self.docs, kind="stable")
        self.doc_terms: npt.NDArray[np.int32] = terms[order]
        self.doc_offsets: I64 = np.zeros(n + 1, np.int64)
        np.cumsum(np.bincount(self.docs, minlength=n), out=self.doc_offsets[1:])

    def nbytes(self) -> int:
        arrays = (self.idf, self.offsets, self.docs, self.inv_norms, self.doc_terms)
        return int(sum(a.nbytes for a in arrays) + self.doc_offsets.nbytes)

    # -- vectors ----------------------------------------------------------------------
    def vector(self, doc: int) -> tuple[I64, F32]:
        """(word ids, unit-length weights) of one paper."""
        terms = self.doc_terms[self.doc_offsets[doc] : self.doc_offsets[doc + 1]].astype(np.int64)
        return terms, self.idf[terms] * self.inv_norms[doc]

    def centroid(self, docs: I64) -> tuple[I64, F32]:
        """The mean of the papers' unit vectors, sparse."""
        starts, ends = self.doc_offsets[docs], self.doc_offsets[docs + 1]
        positions = _ranges(starts, ends)
        terms = self.doc_terms[positions]
        weights = self.idf[terms] * np.repeat(self.inv_norms[docs], ends - starts)
        dense = np.bincount(terms, weights=weights, minlength=len(self.words))
        nonzero = np.flatnonzero(dense)
        return nonzero, (dense[nonzero] / max(1, docs.size)).astype(np.float32)

    def scores(self, terms: I64, weights: F32) -> F32:
        """Cosine similarity of every paper to a sparse query vector (up to its norm)."""
        starts, ends = self.offsets[terms], self.offsets[terms + 1]
        positions = _ranges(starts, ends)
        contributions = np.repeat(weights * self.idf[terms], ends - starts)
        totals = np.bincount(self.docs[positions], weights=contributions, minlength=self.n)
        return (totals * self.inv_norms).astype(np.float32)

    # -- rankings ---------------------------------------------------------------------
    def like_paper(self, doc: int) -> Ranking:
        terms, weights = self.vector(doc)
        scores = self.scores(terms, weights)
        seeds = np.array([doc], np.int64)
        scores[seeds] = -np.inf
        return Ranking(scores, seeds, self._explain(terms, weights, scores))

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
        return Ranking(scores, seeds, self._explain(terms, weights, scores))

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
        starts, ends = self.doc_offsets[rows], self.doc_offsets[rows + 1]
        positions = _ranges(starts, ends)
        terms = self.doc_terms[positions].astype(np.int64)
        row_of = np.repeat(np.arange(rows.size), ends - starts)
        slot = np.searchsorted(feats, terms)
        slot[slot >= feats.size] = 0
        hit = feats[slot] == terms
        out = np.zeros((rows.size, feats.size), np.float64)
        values = self.idf[terms[hit]] * np.repeat(self.inv_norms[rows], ends - starts)[hit]
        out[row_of[hit], slot[hit]] = values
        return out

    def _explain(
        self, terms: I64, weights: F32, scores: F32, top: int = 5, k: int = 5
    ) -> tuple[str, ...]:
        """The query's words that the best matches share: each word's weight in the query
        times its presence in the first ``top`` papers, each worth a fifth of the one
        before (so a rare word shared with the best match beats a common word shared with
        all of them, and the next matches break ties)."""
        if terms.size == 0:
            return ()
        finite = np.where(np.isfinite(scores), scores, -1.0)
        best = np.argsort(-finite, kind="stable")[:top]
        best = best[finite[best] > 0]
        if best.size == 0:
            return ()
        shared = np.zeros(terms.size, np.float64)
        for rank, doc in enumerate(best.tolist()):
            words = self.doc_terms[self.doc_offsets[doc] : self.doc_offsets[doc + 1]]
            shared += np.isin(terms, words) * 0.2**rank
        strength = shared * weights * self.idf[terms]
        order = np.argsort(-strength, kind="stable")[:k]
        return tuple(self.words[int(terms[i])] for i in order if strength[i] > 0)


def _strongest(terms: I64, weights: F32, k: int) -> tuple[I64, F32]:
    if terms.size <= k:
        return terms, weights
    keep = np.sort(np.argpartition(-np.abs(weights), k)[:k])
    return terms[keep], weights[keep]


def _ranges(starts: I64, ends: I64) -> I64:
    """Concatenated ``arange(start, end)`` for each pair, without a Python loop."""
    lengths = ends - starts
    total = int(lengths.sum())
    if total == 0:
        return np.zeros(0, np.int64)
    shifts: I64 = np.repeat(starts - (np.cumsum(lengths) - lengths), lengths)
    shifts += np.arange(total, dtype=np.int64)
    return shifts
