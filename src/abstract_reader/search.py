"""Word-level, typo-tolerant search with fzf's query syntax.

The index is a sorted vocabulary with postings in CSR form (one numpy array of paper
positions, one array of offsets). Because the vocabulary is sorted, every prefix is one
contiguous slice of it — and so one contiguous slice of the postings: a prefix query costs
one numpy fancy-index, whatever the number of words it covers. Typo candidates come from
rapidfuzz over the words with the same first letter and a similar length.

Two vocabularies: accent-folded lower case (the default) and accent-folded case-kept (for
smart-case terms). Titles have their own small index, for ranking, ``^word`` and ``title:``.
"""

from __future__ import annotations

import bisect
import functools
import itertools
import os
import re
import zlib
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Protocol, overload

import numpy as np
import numpy.typing as npt
from rapidfuzz import process
from rapidfuzz.distance import Levenshtein

from .corpus import Corpus, Paper
from .text import GREEK_NAMES, TEXT_COMMANDS, fold, fold_accents, render
from .tokens import tokenise_chunk as _tokenise_chunk

INDEX_FORMAT = 5
IntArray = npt.NDArray[np.int64]
U32 = npt.NDArray[np.uint32]

#: A word; a LaTeX command keeps its backslash so it can be told apart from prose.
_TOKEN_RE = re.compile(r"\\?[^\W_]+")
_WORD_RE = re.compile(r"[^\W_]+")

EXACT, PREFIX, TYPO = 4.0, 2.0, 1.0
TITLE_BONUS = 1.5


def typo_budget(word: str) -> int:
    """Edits allowed for a query word: none up to 4 letters, one up to 8, two from 9."""
    n = len(word)
    return 0 if n <= 4 else 1 if n <= 8 else 2


# ---------------------------------------------------------------------------------------
# Vocabulary + postings
# ---------------------------------------------------------------------------------------


@dataclass(slots=True)
class _Postings:
    """A sorted vocabulary with CSR postings."""

    words: list[str]
    offsets: IntArray  #: len(words) + 1
    docs: U32
    lengths: npt.NDArray[np.int16] = field(init=False)
    _letters: dict[str, tuple[int, int]] = field(init=False)

    def __post_init__(self) -> None:
        self.lengths = np.fromiter((len(w) for w in self.words), np.int16, len(self.words))
        self._letters = {}
        start = 0
        for i in range(1, len(self.words) + 1):
            if i == len(self.words) or self.words[i][:1] != self.words[start][:1]:
                self._letters[self.words[start][:1]] = (start, i)
                start = i

    def find(self, word: str) -> int:
        i = bisect.bisect_left(self.words, word)
        return i if i < len(self.words) and self.words[i] == word else -1

    def prefix_range(self, prefix: str) -> tuple[int, int]:
        lo = bisect.bisect_left(self.words, prefix)
        hi = bisect.bisect_left(self.words, prefix + "\U0010ffff")
        return lo, hi

    def docs_of(self, i: int) -> U32:
        return self.docs[self.offsets[i] : self.offsets[i + 1]]

    def docs_of_range(self, lo: int, hi: int) -> U32:
        return self.docs[self.offsets[lo] : self.offsets[hi]]

    def typo_candidates(self, word: str, budget: int, as_prefix: bool) -> list[tuple[int, int]]:
        """(vocabulary index, edits) of words within ``budget`` edits (of their prefix)."""
        if budget <= 0 or not word:
            return []
        lo, hi = self._letters.get(word[:1], (0, 0))
        if hi <= lo:
            return []
        lengths = self.lengths[lo:hi].astype(np.int32)
        n = len(word)
        if as_prefix:
            mask = lengths >= n - budget
        else:
            mask = np.abs(lengths - n) <= budget
        idx = np.nonzero(mask)[0] + lo
        if idx.size == 0:
            return []
        best: dict[int, int] = {}
        words = self.words
        cut_lengths = (n - 1, n, n + 1) if as_prefix else (0,)
        for cut in cut_lengths:
            if cut < 0:
                continue
            choices = [words[i][:cut] if as_prefix else words[i] for i in idx]
            for _choice, dist, pos in process.extract(
                word, choices, scorer=Levenshtein.distance, score_cutoff=budget, limit=None
            ):
                vocab_i = int(idx[pos])
                if dist > 0 and dist < best.get(vocab_i, budget + 1):
                    best[vocab_i] = int(dist)
        ranked = sorted(best.items(), key=lambda item: (item[1], item[0]))
        return ranked[:256]

    def nbytes(self) -> int:
        return int(self.docs.nbytes + self.offsets.nbytes + sum(len(w) + 50 for w in self.words))


def _normalise_vocab(raw: list[str]) -> tuple[list[str], list[str]]:
    """Raw tokens → (case-kept form, folded form); '' for LaTeX commands that show no text."""
    case_forms: list[str] = []
    folded: list[str] = []
    for token in raw:
        if token.startswith("\\"):
            name = token[1:]
            token = name if name.lower() in GREEK_NAMES or name in TEXT_COMMANDS else ""
            if token.startswith("var"):
                token = token[3:]
        form = fold_accents(token) if token else ""
        case_forms.append(form)
        folded.append(form.lower())
    return case_forms, folded


def _csr(word_ids: IntArray, docs: npt.NDArray[np.int32], n_words: int) -> tuple[IntArray, U32]:
    """Postings pairs → (offsets, docs sorted by word then doc, duplicates removed)."""
    keep = word_ids >= 0  # -1: a piece with no word in this vocabulary ("=", or lower case)
    if not keep.all():  # first: the case-kept vocabulary keeps only a small share of pairs
        word_ids, docs = word_ids[keep], docs[keep]
    keys = word_ids << 32
    keys |= docs
    keys.sort()  # a plain sort: np.unique's hashing is several times slower here
    if keys.size:
        distinct = np.empty(keys.size, dtype=bool)
        distinct[0] = True
        np.not_equal(keys[1:], keys[:-1], out=distinct[1:])
        keys = keys[distinct]
    offsets = np.zeros(n_words + 1, np.int64)
    np.cumsum(np.bincount(keys >> 32, minlength=n_words), out=offsets[1:])
    return offsets, keys.astype(np.uint32)  # the low 32 bits: the documents


#: Corpora at least this large are tokenised by two processes (the second core).
PARALLEL_MIN_DOCS = 40_000


def _tokenise(
    texts: Sequence[str], while_waiting: Callable[[], object] | None = None
) -> tuple[dict[str, int], IntArray, IntArray]:
    """(piece → id, the piece id of every (document, piece) pair, pieces per document)."""
    if len(texts) >= PARALLEL_MIN_DOCS and (os.cpu_count() or 1) >= 2:
        try:
            return _tokenise_in_two(texts, while_waiting)
        except Exception:  # no second process here (sandbox, limits): do it alone
            pass
    pieces, ids, lengths = _tokenise_chunk(texts)
    if while_waiting is not None:
        while_waiting()
    return pieces, np.frombuffer(ids, np.int64), np.frombuffer(lengths, np.int64)


def _tokenise_in_two(
    texts: Sequence[str], while_waiting: Callable[[], object] | None = None
) -> tuple[dict[str, int], IntArray, IntArray]:
    """Tokenise the second half in a child Python (a plain subprocess, not multiprocessing:
    nothing of the parent is re-imported) while this process does the first half."""
    import subprocess
    import sys
    import tempfile

    half = len(texts) // 2
    with tempfile.TemporaryDirectory(prefix="abstract-reader-") as tmp:
        source, answer = Path(tmp) / "in", Path(tmp) / "out"
        # Files, not pipes: streaming through a pipe from a thread would fight this
        # process's own tokenising for the GIL. Sanitised text never holds a NUL.
        source.write_bytes("\0".join(texts[half:]).encode("utf-8"))
        child = subprocess.Popen(
            [
                sys.executable,
                "-c",
                "from abstract_reader.tokens import worker; worker()",
                str(source),
                str(answer),
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            pieces, ids_a, lengths_a = _tokenise_chunk(texts[:half])
            if while_waiting is not None:
                while_waiting()
        finally:
            returncode = child.wait()
        if returncode != 0:
            raise RuntimeError("tokeniser process failed")
        replies = [answer.read_bytes()]
    sizes = np.frombuffer(replies[0][:24], "<i8")
    body = memoryview(replies[0])[24:]
    other = bytes(body[: sizes[0]]).decode("utf-8").split("\0") if sizes[0] else []
    ids_b = np.frombuffer(body[sizes[0] : sizes[0] + sizes[1]], np.int64)
    lengths_b = np.frombuffer(body[sizes[0] + sizes[1] : sizes[0] + sizes[1] + sizes[2]], np.int64)
    if lengths_b.size != len(texts) - half:
        raise RuntimeError("tokeniser process answered for the wrong documents")
    merged: defaultdict[str, int] = defaultdict(itertools.count(len(pieces)).__next__, pieces)
    remap = np.fromiter(map(merged.__getitem__, other), np.int64, len(other))
    piece_ids = np.concatenate([np.frombuffer(ids_a, np.int64), remap[ids_b]])
    lengths = np.concatenate([np.frombuffer(lengths_a, np.int64), lengths_b])
    return dict(merged), piece_ids, lengths


@dataclass(slots=True)
class _FieldIndex:
    folded: _Postings
    cased: _Postings

    @classmethod
    def build(
        cls, texts: Sequence[str], while_waiting: Callable[[], object] | None = None
    ) -> _FieldIndex:
        """``while_waiting`` runs while a helper process tokenises (or after, if none)."""
        pieces, piece_ids, lengths = _tokenise(texts, while_waiting)
        piece_docs = np.repeat(np.arange(len(texts), dtype=np.int32), lengths)
        # piece → its word tokens: usually exactly one ("robust,"), sometimes none ("="),
        # a few ("Split-RL," gives two)
        vocab: defaultdict[str, int] = defaultdict(itertools.count().__next__)
        single = np.full(len(pieces), -1, np.int64)
        multi: dict[int, list[int]] = {}
        findall = _TOKEN_RE.findall
        for i, piece in enumerate(pieces):
            words = findall(piece)
            if len(words) == 1:
                single[i] = vocab[words[0]]
            elif words:
                multi[i] = [vocab[w] for w in words]
        raw_words = list(vocab)
        case_forms, folded_forms = _normalise_vocab(raw_words)
        # Case-kept postings only for words with a capital: a query word in lower case is
        # case-insensitive (smart-case), so only capitalised query words look there.
        cased_only = [f if f != f.lower() else "" for f in case_forms]

        def postings_for(forms: list[str]) -> _Postings:
            words = sorted({f for f in forms if f})
            position = {w: i for i, w in enumerate(words)}
            # raw word → id in this vocabulary (-1: not in it), then composed per *piece*
            # (a few hundred thousand entries), so the pairs are gathered only once
            to_vocab = np.fromiter((position.get(f, -1) for f in forms), np.int64, len(forms))
            per_piece = np.where(single >= 0, to_vocab[np.maximum(single, 0)], -1)
            pair_ids, pair_docs = per_piece[piece_ids], piece_docs
            if multi:  # pieces with several words: the first in place, one pair per other
                keys = np.fromiter(multi, np.int64, len(multi))  # ascending: ids in order
                counts = np.fromiter((len(v) for v in multi.values()), np.int64, len(multi))
                flat = to_vocab[
                    np.fromiter(itertools.chain.from_iterable(multi.values()), np.int64)
                ]
                starts = np.zeros(len(keys), np.int64)
                np.cumsum(counts[:-1], out=starts[1:])
                is_multi = np.zeros(len(pieces), dtype=bool)
                is_multi[keys] = True
                where = np.flatnonzero(is_multi[piece_ids])
                slot = np.searchsorted(keys, piece_ids[where])
                pair_ids[where] = flat[starts[slot]]
                extra = counts[slot] - 1
                first_extra = np.repeat(starts[slot] + 1, extra)
                rank = np.arange(int(extra.sum()), dtype=np.int64) - np.repeat(
                    np.cumsum(extra) - extra, extra
                )
                pair_ids = np.concatenate([pair_ids, flat[first_extra + rank]])
                pair_docs = np.concatenate([piece_docs, np.repeat(piece_docs[where], extra)])
            offsets, posting_docs = _csr(pair_ids, pair_docs, len(words))
            return _Postings(words, offsets, posting_docs)

        # numpy releases the GIL in its sorts and array passes: the two vocabularies overlap
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(max_workers=1) as pool:
            cased = pool.submit(postings_for, cased_only)
            folded = postings_for(folded_forms)
            return cls(folded=folded, cased=cased.result())

    def arrays(self, prefix: str) -> dict[str, npt.NDArray[np.generic]]:
        out: dict[str, npt.NDArray[np.generic]] = {}
        for name, p in (("folded", self.folded), ("cased", self.cased)):
            blob = "\n".join(p.words).encode("utf-8")
            out[f"{prefix}_{name}_words"] = np.frombuffer(blob, dtype=np.uint8)
            out[f"{prefix}_{name}_offsets"] = p.offsets
            out[f"{prefix}_{name}_docs"] = p.docs
        return out

    @classmethod
    def from_arrays(cls, data: dict[str, npt.NDArray[np.generic]], prefix: str) -> _FieldIndex:
        parts: list[_Postings] = []
        for name in ("folded", "cased"):
            blob = bytes(data[f"{prefix}_{name}_words"].tobytes()).decode("utf-8")
            words = blob.split("\n") if blob else []
            offsets = np.asarray(data[f"{prefix}_{name}_offsets"], dtype=np.int64)
            docs = np.asarray(data[f"{prefix}_{name}_docs"], dtype=np.uint32)
            if len(offsets) != len(words) + 1 or (len(offsets) and offsets[-1] != len(docs)):
                raise ValueError("inconsistent index arrays")
            if words != sorted(words):
                raise ValueError("vocabulary not sorted")
            parts.append(_Postings(words, offsets, docs))
        return cls(parts[0], parts[1])


# ---------------------------------------------------------------------------------------
# Queries
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Word:
    """One query word with how it may match."""

    text: str  #: folded (or, for smart-case, accent-folded with case kept)
    case_sensitive: bool
    prefix: bool  #: may match as a prefix (the word being typed)
    typos: int  #: edits allowed


@dataclass(frozen=True, slots=True)
class Term:
    """A positive or negative condition on a paper."""

    kind: str  # "words" | "phrase" | "title_start" | "title" | "tag" | "is" | "venue" | "year"
    words: tuple[Word, ...] = ()
    value: str = ""
    negated: bool = False
    alternatives: tuple[Term, ...] = ()  # for kind == "or"


@dataclass(frozen=True, slots=True)
class Query:
    terms: tuple[Term, ...]
    ignored: tuple[str, ...]  #: parts of the query that could not be used

    @property
    def empty(self) -> bool:
        return not self.terms


_IS_VALUES = {"bookmarked", "bookmark", "unread", "read", "marked", "noted", "tagged"}
_LEXER = re.compile(r'!?#"[^"]*"?|"[^"]*"?|\||[^\s"|]+')


def _words(raw: str, *, exact: bool, last: bool) -> tuple[Word, ...]:
    words: list[Word] = []
    tokens = _WORD_RE.findall(raw)
    for n, token in enumerate(tokens):
        case_sensitive = any(ch.isupper() for ch in token)
        text = fold_accents(token) if case_sensitive else fold(token)
        is_last = last and n == len(tokens) - 1
        words.append(
            Word(
                text=text,
                case_sensitive=case_sensitive,
                prefix=is_last and not exact,
                typos=0 if exact else typo_budget(text),
            )
        )
    return tuple(words)


def parse_query(text: str) -> Query:
    """Parse the fzf-like query language. Never raises; unusable parts go to ``ignored``."""
    ignored: list[str] = []
    tokens = _LEXER.findall(text)
    typing_last = bool(text) and not text[-1].isspace()
    groups: list[list[Term]] = []
    pending_or = False
    for n, token in enumerate(tokens):
        if token == "|":
            if groups:
                pending_or = True
            else:
                ignored.append("|")
            continue
        last = typing_last and n == len(tokens) - 1
        term = _parse_token(token, last, ignored)
        if term is None:
            continue
        if pending_or and groups:
            groups[-1].append(term)
        else:
            groups.append([term])
        pending_or = False
    if pending_or:
        ignored.append("|")
    terms: list[Term] = []
    for group in groups:
        if len(group) == 1:
            terms.append(group[0])
        else:
            terms.append(Term("or", alternatives=tuple(group)))
    return Query(tuple(terms), tuple(ignored))


def _parse_token(token: str, last: bool, ignored: list[str]) -> Term | None:
    negated = False
    raw = token
    if token.startswith("!"):
        negated = True
        token = token[1:]
    if token.startswith('"'):
        closed = len(token) > 1 and token.endswith('"')
        inner = token[1:-1] if closed else token[1:]
        words = _words(inner, exact=True, last=False)
        if not words:
            ignored.append(raw)
            return None
        if len(words) == 1:
            return Term("words", words, negated=negated)
        return Term("phrase", words, value=inner, negated=negated)
    lowered = token.lower()
    if lowered.startswith("is:"):
        value = lowered[3:]
        value = "bookmarked" if value == "bookmark" else value
        if value not in _IS_VALUES:
            ignored.append(raw)
            return None
        return Term("is", value=value, negated=negated)
    if token.startswith("#"):
        tag = token[1:]
        if tag.startswith('"'):  # #"reading list": a tag with spaces
            tag = tag.strip('"')
        if not tag.strip():
            ignored.append(raw)
            return None
        return Term("tag", value=" ".join(tag.split()), negated=negated)
    for name in ("venue", "year", "title"):
        if lowered.startswith(name + ":"):
            value = token[len(name) + 1 :]
            if not value:
                ignored.append(raw)
                return None
            if name == "year" and not re.fullmatch(r"\d{4}(?:-\d{4})?", value):
                ignored.append(raw)
                return None
            if name == "title":
                words = _words(value, exact=False, last=last)
                if not words:
                    ignored.append(raw)
                    return None
                return Term("title", words, negated=negated)
            return Term(name, value=value.lower(), negated=negated)
    exact = False
    if token.startswith("'"):
        exact = True
        token = token[1:]
    title_start = False
    if token.startswith("^"):
        title_start = True
        token = token[1:]
    if token.endswith("$"):
        token = token[:-1]
    words = _words(token, exact=exact or negated, last=last and not negated)
    if not words:
        ignored.append(raw)
        return None
    if negated:  # !word: no word that starts with it (like fzf's substring negation);
        # !'word: not the exact word
        words = tuple(Word(w.text, w.case_sensitive, not exact, 0) for w in words)
    if title_start:
        return Term("title_start", words[:1], negated=negated)
    if len(words) > 1 and not negated:
        return Term("phrase_loose", words, value=token, negated=negated)
    return Term("words", words, negated=negated)


# ---------------------------------------------------------------------------------------
# Matching words against the vocabulary
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class WordMatch:
    exact: int
    prefix: tuple[int, int]
    typos: tuple[tuple[int, int], ...]


class LibraryState(Protocol):
    """What search needs from the library: the state filters (`#tag`, `is:`)."""

    def ids_with_tag(self, tag: str) -> set[str]: ...
    def ids_with_state(self, state: str) -> set[str]: ...


@dataclass(slots=True)
class _Matcher:
    """Decides whether a displayed word matches the positive words of a query (for spans)."""

    words: tuple[Word, ...]
    typo_words: frozenset[str]

    def matches(self, token: str) -> bool:
        lowered = fold(token)
        cased = fold_accents(token)
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
        order: IntArray,
        scores: npt.NDArray[np.float32] | None,
        matcher: _Matcher,
    ) -> None:
        self.source = index
        self.query = query
        self.order = order
        self._scores = scores
        self.matcher = matcher

    @property
    def ignored(self) -> tuple[str, ...]:
        return self.query.ignored

    def __len__(self) -> int:
        return int(self.order.size)

    @overload
    def __getitem__(self, i: int) -> Hit: ...
    @overload
    def __getitem__(self, i: slice) -> list[Hit]: ...
    def __getitem__(self, i: int | slice) -> Hit | list[Hit]:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        doc = int(self.order[i])
        score = float(self._scores[doc]) if self._scores is not None else 0.0
        paper = self.source.corpus.papers[doc]
        return Hit(paper, score, self.matcher, self.source.title_of(doc))

    def __iter__(self) -> Iterator[Hit]:
        for i in range(len(self)):
            yield self[i]

    def position_of(self, paper_id: str) -> int | None:
        try:
            doc = self.source.corpus.index_of(paper_id)
        except KeyError:
            return None
        found = np.nonzero(self.order == doc)[0]
        return int(found[0]) if found.size else None

    def paper_at(self, i: int) -> Paper:
        return self.source.corpus.papers[int(self.order[i])]


class SearchIndex:
    """The index over a corpus. ``search(query)`` returns ranked hits with match spans."""

    def __init__(
        self,
        corpus: Corpus,
        *,
        cache_dir: Path | None = None,
        cache_key: str | None = None,
    ) -> None:
        self.corpus = corpus
        self.n = len(corpus.papers)
        self.loaded_from_cache = False
        self._title_overrides: dict[int, str] = {}
        data = _load_cache(cache_dir, cache_key, corpus) if cache_dir and cache_key else None
        if data is not None:
            self.text, self.titles = data
            self.loaded_from_cache = True
        else:
            titles: list[_FieldIndex] = []
            self.text = _FieldIndex.build(
                [p.abstract for p in corpus.papers],
                while_waiting=lambda: titles.append(
                    _FieldIndex.build([p.title for p in corpus.papers])
                ),
            )
            self.titles = titles[0]
            if cache_dir and cache_key:
                _save_cache(cache_dir, cache_key, corpus, self.text, self.titles)
        venues = sorted({(p.venue or "").lower() for p in corpus.papers})
        self._venue_names = venues
        codes = {v: i for i, v in enumerate(venues)}
        self._venues = np.fromiter(
            (codes[(p.venue or "").lower()] for p in corpus.papers), np.int32, self.n
        )
        self._years = np.fromiter((p.year or 0 for p in corpus.papers), np.int32, self.n)
        self._word_cache: dict[tuple[str, bool, Word], WordMatch] = {}
        self._first_ids: dict[str, IntArray] = {}
        self._prefix_masks: dict[tuple[int, int, int], npt.NDArray[np.bool_]] = {}
        self._phrase_cache: dict[tuple[Word, ...], npt.NDArray[np.bool_]] = {}

    # -- metadata overrides (real titles from the library) -----------------------------
    def set_title_overrides(self, titles: dict[str, str]) -> None:
        """Real titles set by the user: used for ranking, ``^word`` and ``title:``."""
        overrides: dict[int, str] = {}
        for paper_id, title in titles.items():
            try:
                overrides[self.corpus.index_of(paper_id)] = title
            except KeyError:
                continue
        self._title_overrides = overrides
        self._phrase_cache.clear()  # phrases are also checked in titles

    def title_of(self, doc: int) -> str:
        return self._title_overrides.get(doc, self.corpus.papers[doc].title)

    # -- searching ----------------------------------------------------------------------
    def search(
        self, query: str | Query, library: LibraryState | None = None, *, typos: bool = True
    ) -> SearchResult:
        q = parse_query(query) if isinstance(query, str) else query
        if not typos:
            q = _without_typos(q)
        positives = _positive_words(q)
        matcher = _Matcher(positives, frozenset())
        if q.empty:
            return SearchResult(self, q, np.arange(self.n, dtype=np.int64), None, matcher)
        mask = np.ones(self.n, dtype=bool)
        total = np.zeros(self.n, dtype=np.float32)
        typo_words: set[str] = set()
        for term in q.terms:
            term_mask, score = self._term(term, library, typo_words)
            if term.negated:
                mask &= ~term_mask
            else:
                mask &= term_mask
                if score is not None:
                    total += score
        matcher.typo_words = frozenset(typo_words)
        docs = np.nonzero(mask)[0]
        order = docs[np.argsort(-total[docs], kind="stable")]
        return SearchResult(self, q, order, total, matcher)

    def _term(
        self, term: Term, library: LibraryState | None, typo_words: set[str]
    ) -> tuple[npt.NDArray[np.bool_], npt.NDArray[np.float32] | None]:
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
            mask = np.ones(self.n, dtype=bool)
            score = np.zeros(self.n, dtype=np.float32)
            for word in term.words:
                word_score = self._word_scores(word, typo_words, term.negated)
                title_score = self._word_scores(word, typo_words, term.negated, title=True)
                combined = np.maximum(word_score, title_score)
                mask &= combined > 0
                present = np.count_nonzero(combined)
                idf = np.float32(np.log1p(self.n / (1 + present)))
                score += (combined + TITLE_BONUS * (title_score > 0)) * idf
            if kind == "phrase":
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
            codes = [i for i, v in enumerate(self._venue_names) if v.startswith(term.value)]
            return np.isin(self._venues, codes), None
        if kind == "year":
            lo, _, hi = term.value.partition("-")
            return (self._years >= int(lo)) & (self._years <= int(hi or lo)), None
        if kind in ("tag", "is"):
            return self._library_mask(term, library), None
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
            for paper_id in ids:
                pos = self._position(paper_id)
                if pos is not None:
                    mask[pos] = False
            return mask
        else:
            ids = library.ids_with_state(term.value)
        for paper_id in ids:
            pos = self._position(paper_id)
            if pos is not None:
                mask[pos] = True
        return mask

    def _position(self, paper_id: str) -> int | None:
        try:
            return self.corpus.index_of(paper_id)
        except KeyError:
            return None

    def match_word(self, word: Word, title: bool = False) -> WordMatch:
        key = ("t" if title else "a", title, word)
        cached = self._word_cache.get(key)
        if cached is not None:
            return cached
        field_index = self.titles if title else self.text
        postings = field_index.cased if word.case_sensitive else field_index.folded
        exact = postings.find(word.text)
        prefix = postings.prefix_range(word.text) if word.prefix else (0, 0)
        typos = tuple(postings.typo_candidates(word.text, word.typos, word.prefix))
        result = WordMatch(exact, prefix, typos)
        if len(self._word_cache) > 4096:
            self._word_cache.clear()
        self._word_cache[key] = result
        return result

    def _word_scores(
        self, word: Word, typo_words: set[str], negated: bool, title: bool = False
    ) -> npt.NDArray[np.float32]:
        field_index = self.titles if title else self.text
        postings = field_index.cased if word.case_sensitive else field_index.folded
        match = self.match_word(word, title)
        score = np.zeros(self.n, dtype=np.float32)
        for vocab_i, edits in reversed(match.typos):  # fewer edits last: they win
            score[postings.docs_of(vocab_i)] = TYPO / edits
            if not negated:
                typo_words.add(postings.words[vocab_i])
        lo, hi = match.prefix
        if hi > lo:
            if postings.offsets[hi] - postings.offsets[lo] > self.n:  # a short, common prefix
                score[self._prefix_mask(postings, lo, hi)] = PREFIX
            else:
                score[postings.docs_of_range(lo, hi)] = PREFIX
        if match.exact >= 0:
            score[postings.docs_of(match.exact)] = EXACT
        if title and self._title_overrides:
            for doc, override in self._title_overrides.items():
                score[doc] = _score_in_text(word, override, match, postings)
        return score

    def _prefix_mask(self, postings: _Postings, lo: int, hi: int) -> npt.NDArray[np.bool_]:
        """Papers having any word of vocabulary range [lo, hi): for prefixes such as "r" the
        postings outnumber the papers many times over, so the mask is kept for the next
        keystroke (and the next query) instead of scattering them again each time."""
        key = (id(postings), lo, hi)
        mask = self._prefix_masks.get(key)
        if mask is None:
            mask = np.zeros(self.n, dtype=bool)
            mask[postings.docs_of_range(lo, hi)] = True
            if len(self._prefix_masks) >= 64:
                self._prefix_masks.pop(next(iter(self._prefix_masks)))
            self._prefix_masks[key] = mask
        return mask

    def _title_start(self, word: Word) -> npt.NDArray[np.bool_]:
        """Papers whose title's first word matches: one numpy range test per query, then
        the few titles the user set by hand, checked directly."""
        postings = self.titles.cased if word.case_sensitive else self.titles.folded
        first = self._first_title_ids(word.case_sensitive)
        if word.prefix:
            lo, hi = postings.prefix_range(word.text)
            mask = (first >= lo) & (first < hi)
        else:
            exact = postings.find(word.text)
            mask = first == exact if exact >= 0 else np.zeros(self.n, dtype=bool)
        for doc, title in self._title_overrides.items():
            m = _WORD_RE.search(title)
            form = (
                (fold_accents(m.group()) if word.case_sensitive else fold(m.group())) if m else ""
            )
            mask[doc] = bool(form) and (
                form == word.text or (word.prefix and form.startswith(word.text))
            )
        return mask

    def _first_title_ids(self, case_sensitive: bool) -> IntArray:
        """Vocabulary id of each derived title's first word (-1: none); computed once."""
        key = "cased" if case_sensitive else "folded"
        cached = self._first_ids.get(key)
        if cached is None:
            postings = self.titles.cased if case_sensitive else self.titles.folded
            cached = np.full(self.n, -1, np.int64)
            for doc, paper in enumerate(self.corpus.papers):
                m = _WORD_RE.search(paper.title)
                if m:
                    form = fold_accents(m.group()) if case_sensitive else fold(m.group())
                    cached[doc] = postings.find(form)
            self._first_ids[key] = cached
        return cached

    def _phrase_mask(self, term: Term, candidates: npt.NDArray[np.bool_]) -> npt.NDArray[np.bool_]:
        """Candidates where the words stand next to each other, in order.

        Checked on the lower-cased source (``\\mu estimator`` matches "mu estimator": the
        backslash is not a word character), folded only when it is not ASCII; never
        rendered. Results are kept per phrase for the following keystrokes."""
        key = term.words  # the candidates (papers with all the words) follow from the words
        cached = self._phrase_cache.get(key)
        if cached is not None:
            return cached
        out = np.zeros(self.n, dtype=bool)
        pattern = _phrase_pattern(term.words)
        papers = self.corpus.papers
        docs = np.flatnonzero(candidates)
        if docs.size > 2000:  # one regex pass over all of them beats thousands of calls
            # "\n0\n" between texts: a word character, so no phrase can run across two
            texts = [
                _fold_long(f"{papers[d].abstract}\n0\n{self.title_of(d)}") for d in docs.tolist()
            ]
            ends = np.cumsum(np.fromiter((len(t) + 3 for t in texts), np.int64, len(texts)))
            starts = _phrase_starts(pattern, "\n0\n".join(texts))
            out[docs[np.searchsorted(ends, np.asarray(starts, np.int64), side="right")]] = True
            docs = docs[:0]
        for doc in docs.tolist():
            text = f"{papers[doc].abstract}\n0\n{self.title_of(doc)}"
            if _phrase_starts(pattern, _fold_long(text), first=True):
                out[doc] = True
        if len(self._phrase_cache) >= 32:
            self._phrase_cache.pop(next(iter(self._phrase_cache)))
        self._phrase_cache[key] = out
        return out

    # -- sizes ---------------------------------------------------------------------------
    def nbytes(self) -> int:
        return sum(
            p.nbytes()
            for p in (self.text.folded, self.text.cased, self.titles.folded, self.titles.cased)
        )


def _score_in_text(word: Word, text: str, match: WordMatch, postings: _Postings) -> float:
    best = 0.0
    typo_forms = {postings.words[i]: edits for i, edits in match.typos}
    for token in _WORD_RE.findall(text):
        form = fold_accents(token) if word.case_sensitive else fold(token)
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
    return re.compile(r"[\W_]+".join(re.escape(w.text.lower()) for w in words))


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


def _positive_words(query: Query) -> tuple[Word, ...]:
    words: list[Word] = []

    def visit(term: Term) -> None:
        if term.negated:
            return
        if term.kind == "or":
            for alt in term.alternatives:
                visit(alt)
        else:
            words.extend(term.words)

    for term in query.terms:
        visit(term)
    return tuple(words)


def _without_typos(query: Query) -> Query:
    def strip(term: Term) -> Term:
        return Term(
            term.kind,
            tuple(Word(w.text, w.case_sensitive, w.prefix, 0) for w in term.words),
            term.value,
            term.negated,
            tuple(strip(a) for a in term.alternatives),
        )

    return Query(tuple(strip(t) for t in query.terms), query.ignored)


# ---------------------------------------------------------------------------------------
# The on-disk cache
# ---------------------------------------------------------------------------------------


def cache_key_for(files: Sequence[str]) -> str | None:
    """The index cache's key: the dumps' paths, sizes and mtimes, and this format."""
    from .paths import files_key

    return files_key(f"format={INDEX_FORMAT}", files)


def _ids_digest(corpus: Corpus) -> int:
    crc = 0
    for paper in corpus.papers:
        crc = zlib.crc32(paper.id.encode() + paper.title.encode(), crc)
    return crc


def _save_cache(
    cache_dir: Path, key: str, corpus: Corpus, text: _FieldIndex, titles: _FieldIndex
) -> None:
    try:
        cache_dir.mkdir(parents=True, exist_ok=True)
        arrays = {**text.arrays("text"), **titles.arrays("title")}
        arrays["meta"] = np.array([INDEX_FORMAT, len(corpus.papers), _ids_digest(corpus)], np.int64)
        tmp = cache_dir / f".{key}.{os.getpid()}.tmp.npz"
        with open(tmp, "wb") as handle:
            np.savez(handle, **arrays)  # type: ignore[arg-type]
        os.replace(tmp, cache_dir / f"{key}.npz")
        entries = sorted(cache_dir.glob("*.npz"), key=lambda p: p.stat().st_mtime, reverse=True)
        for old in entries[4:]:  # the newest four indexes
            old.unlink(missing_ok=True)
    except OSError:
        pass  # a cache is an optimisation: failing to write it is not an error


def _load_cache(
    cache_dir: Path | None, key: str | None, corpus: Corpus
) -> tuple[_FieldIndex, _FieldIndex] | None:
    if cache_dir is None or key is None:
        return None
    path = cache_dir / f"{key}.npz"
    if not path.is_file():
        return None
    try:
        with np.load(path, allow_pickle=False) as npz:
            data = {name: npz[name] for name in npz.files}
        meta = data["meta"]
        if list(meta) != [INDEX_FORMAT, len(corpus.papers), _ids_digest(corpus)]:
            return None
        text = _FieldIndex.from_arrays(data, "text")
        titles = _FieldIndex.from_arrays(data, "title")
        for p in (text.folded, text.cased, titles.folded, titles.cased):
            if p.docs.size and int(p.docs.max()) >= len(corpus.papers):
                return None
        return text, titles
    except Exception:  # corrupt or foreign file: rebuild, never trust it
        return None


def default_cache_dir() -> Path:
    from .paths import cache_dir

    return cache_dir() / "index"
