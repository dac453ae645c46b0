"""Is this record the same paper as that abstract? Normalise, then compare sentence by sentence.

The same paper's abstract differs between sources: hard wraps and whitespace, Markdown
emphasis (``**Resilience**``), curly vs straight quotes, LaTeX vs Unicode (``M\\"uller`` /
``Müller``, ``$\\mu$`` / ``μ``), hyphenation, and sometimes a sentence added or dropped in the
camera-ready version. A different paper can share its opening sentences (a shared
motivation, a template). So the score is *coverage*: the share of each abstract's text (by
characters) found as a near-identical sentence in the other, and the smaller of the two
shares. One added sentence in nine costs ~11 points; two shared sentences out of eight give
~25. A wrong match is far worse than a missed one:

- ``MATCH_AT`` (70) and above, and every record that high is the same paper (their
  abstracts match each other, e.g. its OpenReview and arXiv records): matched;
- ``CONSIDER_AT`` (40) up to ``MATCH_AT``, or several different records above it: ambiguous
  — listed with scores, never written;
- below ``CONSIDER_AT``: unmatched.

The thresholds were calibrated on ``tests/data/match/`` (see README: precision 100%).

``Matcher`` indexes the papers to match (word 4-gram shingles, so that a 3M-record arXiv
snapshot is streamed past it at the cost of tokenising each record once) and collects
candidates; ``candidates(abstract, records)`` is the one-paper form the reader's editor uses.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from rapidfuzz import fuzz, process

from .metadata import (
    PROVENANCE_PREFIX,
    Provenance,
    arxiv_id_from_url,
    provenance,
    record_pair_wins,
    set_by_hand,
)
from .sources import MetaRecord, RecordProblem, read_records
from .text import fold_accents

if TYPE_CHECKING:
    from .corpus import Corpus, Paper
    from .library import Library, Metadata, Snapshot

MATCH_AT = 70.0
CONSIDER_AT = 40.0
SENTENCE_SAME = 85.0  #: rapidfuzz ratio at which two sentences count as the same sentence
_SHINGLE = 4
_STEP = 4  #: a streamed record's 4-grams are sampled every _STEP words

_MATH_RE = re.compile(r"(?<!\\)\$\$?([^$]+?)(?<!\\)\$\$?|\\\((.+?)\\\)", re.DOTALL)
#: an accent: a symbol one (``\\"u``, ``\\'{e}``), or a letter one (``\\c{c}``, ``\\v s``) that
#: is a command of its own — ``\\kappa`` is not ``\\k`` on ``a``
_LATEX_ACCENT_RE = re.compile(
    r"(?:\\[`'^\"~=.]|\\[uvHckrb](?![A-Za-z]))\s*\{?\s*\\?([A-Za-z])\s*\}?"
)
#: commands that only style or decorate their argument (whole names: ``\\dots`` is not
#: ``\\dot`` on ``s``, ``\\textasciitilde`` not ``\\text``)
_LATEX_TEXT_CMD_RE = re.compile(
    r"\\(?:emph|textbf|textit|textsc|texttt|textrm|mathrm|mathbf|mathit|mathcal|mathbb|"
    r"text|operatorname|boldsymbol|hat|bar|tilde|widetilde|widehat|vec|dot|ddot|overline|"
    r"left|right|big|Big|bigg|Bigg|frac|dfrac|tfrac)(?![A-Za-z])\s*"
)
_LATEX_CMD_RE = re.compile(r"\\([A-Za-z]+)")
#: text-mode letters as folding writes them (pylatexenc's ``\\o`` is ``ø``, which does not
#: fold), and math commands the symbol table lacks as Unicode writes them
_LATEX_SYMBOLS = {
    "ell": "l",
    "ss": "ss",
    "ae": "ae",
    "o": "o",
    "l": "l",
    "i": "i",
    "sqrt": "√",
}
_QUOTES_RE = re.compile(r"[\"'`´‘’‚‛“”„‟«»‹›]")
_DASHES_RE = re.compile(r"---|--|[‐‑‒–—―−]")
_WRAP_HYPHEN_RE = re.compile(r"(?<=\w)-[ \t]*\n\s*(?=\w)")
_HYPHEN_RE = re.compile(r"(?<=\w)-(?=\w)")
_EMPHASIS_RE = re.compile(r"[*_]+")
_SPACE_PUNCT_RE = re.compile(r"\s+([.,;:!?)\]])")
_SENTENCE_RE = re.compile(r"(?<=[.!?])\s+(?=\S)")
_WORD_RE = re.compile(r"[^\W_]+")
_NOT_ALNUM_RE = re.compile(r"[\W_]+")


def normalise(text: str) -> str:
    """The form two versions of the same abstract share. Idempotent (the steps are applied
    until nothing changes: folding an accent can make a new LaTeX-looking or hyphenated
    sequence; real text settles on the second pass).

    Hard wraps (and a hyphen at a wrap) joined, whitespace collapsed; LaTeX accents and
    math turned to letters (``$\\mu$`` and ``μ`` both ``mu``); Markdown emphasis, quotes and
    word-joining hyphens dropped; dashes unified; accents folded; case folded."""
    for _ in range(8):
        again = _normalise_once(text)
        if again == text:
            break
        text = again
    return text


def _normalise_once(text: str) -> str:
    text = _WRAP_HYPHEN_RE.sub("", text) if "\n" in text else text
    text = _MATH_RE.sub(lambda m: " " + (m.group(1) or m.group(2) or "") + " ", text)
    text = _LATEX_ACCENT_RE.sub(r"\1", text)
    text = _LATEX_TEXT_CMD_RE.sub("", text)
    text = _LATEX_CMD_RE.sub(_latex_symbol, text)
    text = text.replace("{", "").replace("}", "").replace("~", " ").replace("^", "")
    text = unicodedata.normalize("NFKC", text)
    text = _QUOTES_RE.sub("", text)
    text = _DASHES_RE.sub(" - ", text)
    text = _HYPHEN_RE.sub("", text)
    text = _EMPHASIS_RE.sub("", text)
    text = " ".join(w for w in (fold_accents(word) for word in text.split()) if w)
    text = _SPACE_PUNCT_RE.sub(r"\1", text.replace("\\", "")).casefold()
    return " ".join(text.split())


def _latex_symbol(found: re.Match[str]) -> str:
    """A LaTeX command as the Unicode another source writes (``\\pm`` → ``±``, ``\\mu`` →
    ``μ``, then folded to ``mu``), else its name."""
    from .text.latex import symbol_table

    name = found.group(1)
    return _LATEX_SYMBOLS.get(name) or symbol_table().get(name) or name


def merge_key(text: str) -> str:
    """The form in which two abstracts are the same paper when loaded side by side
    (`Corpus`'s merge of records into dump papers): `normalise`, then only the letters and
    digits. Spacing and punctuation inside math differ between LaTeX and its Unicode
    rendering (``$O(\\sqrt{d/n})$`` / ``O(√(d/n))``, ``$k$-input`` / ``k-input``), as does
    a hard wrap at a hyphen (``training-\\n  free``, stored as ``training- free``)."""
    return _NOT_ALNUM_RE.sub("", normalise(text))


def sentences(normalised: str) -> list[str]:
    """Sentences of a normalised abstract; fragments under 25 characters join the previous
    one (``e.g.``, ``Fig. 2``), so that one sentence is not counted as several."""
    out: list[str] = []
    for part in _SENTENCE_RE.split(normalised):
        if out and (len(part) < 25 or len(out[-1]) < 25):
            out[-1] += " " + part
        else:
            out.append(part)
    return [s for s in out if s]


def _coverage(mine: list[str], theirs: list[str]) -> float:
    total = sum(len(s) for s in mine)
    if not total or not theirs:
        return 0.0
    covered = 0
    for sentence in mine:
        best = process.extractOne(sentence, theirs, scorer=fuzz.ratio, score_cutoff=SENTENCE_SAME)
        if best is not None:
            covered += len(sentence)
    return covered / total


def score_normalised(a: str, b: str) -> float:
    """0–100: the smaller of the two coverages (see the module doc)."""
    if a == b:
        return 100.0
    sa, sb = sentences(a), sentences(b)
    return round(100.0 * min(_coverage(sa, sb), _coverage(sb, sa)), 1)


def score(a: str, b: str) -> float:
    """How surely two abstracts are the same paper's, 0–100."""
    return score_normalised(normalise(a), normalise(b))


def _words(text: str) -> list[str]:
    """Lowercase words, accents folded word by word (``fold_accents`` memoises words; a
    whole abstract would fill its cache)."""
    lowered = text.lower()
    words: list[str] = _WORD_RE.findall(lowered)
    if lowered.isascii():
        return words
    return [w if w.isascii() else fold_accents(w).lower() for w in words]


def _shingles(text: str, step: int = 1) -> set[int]:
    """Hashes of the word 4-grams starting every ``step`` words."""
    words = _words(text)
    return {hash(tuple(words[i : i + _SHINGLE])) for i in range(0, len(words) - 3, step)}


@dataclass(frozen=True, slots=True)
class Candidate:
    record: MetaRecord
    score: float


@dataclass(slots=True)
class Verdict:
    """What matching found for one paper."""

    paper_id: str
    status: str  #: "matched", "ambiguous", "unmatched"
    candidates: list[Candidate] = field(default_factory=list)  #: best first

    @property
    def best(self) -> Candidate | None:
        return self.candidates[0] if self.candidates else None


def decide(paper_id: str, found: Iterable[Candidate]) -> Verdict:
    """Apply the thresholds: one distinct record at ``MATCH_AT`` or above is a match (the
    same paper from two sources — records whose abstracts match each other — counts once); several, or only scores
    between ``CONSIDER_AT`` and ``MATCH_AT``, are ambiguous."""
    ranked = sorted(
        (c for c in found if c.score >= CONSIDER_AT),
        key=lambda c: (-c.score, c.record.source, c.record.record_id),
    )
    if not ranked:
        return Verdict(paper_id, "unmatched")
    strong = [c for c in ranked if c.score >= MATCH_AT]
    if strong and all(
        score(strong[0].record.abstract or "", c.record.abstract or "") >= MATCH_AT
        for c in strong[1:]
    ):
        return Verdict(paper_id, "matched", ranked[:5])
    return Verdict(paper_id, "ambiguous", ranked[:5])


class Matcher:
    """Candidates for many papers from a stream of records.

    ``feed`` each record (any number, streamed); records without an abstract are skipped.
    A record is scored in full only against papers sharing enough word 4-grams with it."""

    def __init__(self, papers: Iterable[tuple[str, str]]) -> None:
        self._ids: list[str] = []
        self._norm: list[str] = []
        self._sizes: list[int] = []
        self._index: dict[int, list[int]] = {}
        self.found: dict[str, list[Candidate]] = {}
        for pid, abstract in papers:
            n = len(self._ids)
            self._ids.append(pid)
            self._norm.append(normalise(abstract))
            shingles = _shingles(abstract)
            self._sizes.append(len(shingles))
            for key in shingles:
                self._index.setdefault(key, []).append(n)
            self.found[pid] = []
        self.scored = 0

    def feed(self, record: MetaRecord) -> None:
        if not record.abstract or not self._ids:
            return
        # a record's 4-grams every 4 words (the papers' index has them all): a quarter of
        # the work per record, and a real match still shares most of them
        shingles = _shingles(record.abstract, _STEP)
        if not shingles:
            return
        hits: Counter[int] = Counter()
        index = self._index
        for key in shingles:
            papers = index.get(key)
            if papers is not None:
                hits.update(papers)
        if not hits:
            return
        norm: str | None = None
        for n, count in hits.items():
            # at least a quarter of the smaller side's 4-grams: far below any real match
            # (a sentence added or dropped), far above chance
            if count < max(2, 0.25 * min(len(shingles), self._sizes[n] / _STEP)):
                continue
            if norm is None:
                norm = normalise(record.abstract)
            self.scored += 1
            value = score_normalised(self._norm[n], norm)
            if value >= CONSIDER_AT:
                self.found[self._ids[n]].append(Candidate(record, value))

    def verdicts(self) -> list[Verdict]:
        return [decide(pid, self.found[pid]) for pid in self._ids]


def candidates(abstract: str, records: Iterable[MetaRecord]) -> Verdict:
    """The one-paper form (the reader's editor): the verdict with its scored candidates."""
    matcher = Matcher([("paper", abstract)])
    for rec in records:
        matcher.feed(rec)
    return matcher.verdicts()[0]


def feed_file(
    matcher: Matcher, path: Path, on_problem: Callable[[RecordProblem], None] | None = None
) -> None:
    """Feed every record of one metadata file to ``matcher``; a malformed record goes to
    ``on_problem`` and the rest loads. Raises ``SourceError`` when the file is unreadable."""
    for item in read_records(path):
        if isinstance(item, RecordProblem):
            if on_problem is not None:
                on_problem(item)
            continue
        matcher.feed(item)


def read_file_records(path: Path) -> list[MetaRecord]:
    """The well-formed records of one metadata file (``SourceError`` when unreadable)."""
    return [item for item in read_records(path) if not isinstance(item, RecordProblem)]


def plan_files(
    corpus: Corpus,
    snapshot: Snapshot,
    files: Sequence[str],
    *,
    force: bool = False,
    on_problem: Callable[[RecordProblem], None] | None = None,
) -> list[Outcome]:
    """Match the corpus's papers against metadata files (the reader's "Match metadata"):
    what each paper's verdict means for the library, nothing written yet."""
    todo, kept = targets(corpus, snapshot, force)
    matcher = Matcher((p.id, p.abstract) for p in todo)
    for name in files:
        feed_file(matcher, Path(name), on_problem)
    verdicts = {v.paper_id: v for v in matcher.verdicts()}
    return outcomes(todo, verdicts, snapshot, kept)


# ---------------------------------------------------------------------------------------
# The `match` command's plan: what would be written, and writing it
# ---------------------------------------------------------------------------------------


@dataclass(slots=True)
class Outcome:
    """One paper's result: its verdict, and what (if anything) to write."""

    paper: Paper
    verdict: Verdict
    status: str  #: "matched", "ambiguous", "unmatched", "kept" (set by hand)
    changed: bool = False  #: a write is due (False: unchanged, or nothing to write)
    meta: Metadata | None = None
    prov: Provenance | None = None
    #: why a match was made ambiguous (its record names an arXiv id or DOI another paper
    #: has, or is matched to in the same run): one clause, or ""
    reason: str = ""


def metadata_of(record: MetaRecord, paper: Paper | None = None) -> Metadata:
    """What a match with ``record`` writes for ``paper``. The year only when the record's
    venue goes with it (`venue_of`): an arXiv posting's year beside the dump's NeurIPS would
    cite "NeurIPS 2025" for a NeurIPS 2026 paper, so the paper keeps its dump's pair."""
    from .library import Metadata

    return Metadata(
        title=record.title,
        authors=record.authors,
        url=record.url,
        doi=record.doi,
        year=record.year if _record_pair(record, paper) else None,
    )


def venue_of(record: MetaRecord, paper: Paper | None = None) -> str | None:
    """The venue a match with ``record`` stores for ``paper`` (its provenance): the record's
    when its year goes with it (see `metadata_of`), else none (the paper keeps its own)."""
    return record.venue if _record_pair(record, paper) else None


def _record_pair(record: MetaRecord, paper: Paper | None) -> bool:
    if paper is None:
        return True
    return record_pair_wins(paper.venue, paper.year, record.venue, record.year)


def targets(corpus: Corpus, snapshot: Snapshot, force: bool) -> tuple[list[Paper], list[Paper]]:
    """(papers to match, papers kept because their metadata was set by hand). The dump
    papers are matched: those whose title is derived, and those that took the title of a
    record loaded with them (the same abstract in a metadata file given beside the dumps,
    as the reader's ``M`` and ``match -d`` have it: that title is only in memory until
    matched and written). Records alone are not."""
    todo: list[Paper] = []
    kept: list[Paper] = []
    table = corpus.papers
    for row in dump_rows(corpus):
        paper = table[row]
        meta = snapshot.metadata.get(paper.id)
        if not force and set_by_hand(meta, provenance(snapshot, paper.id)):
            kept.append(paper)
        else:
            todo.append(paper)
    return todo, kept


def dump_rows(corpus: Corpus) -> list[int]:
    """The rows of the papers a dump gave, in corpus order: a derived title, or a record's
    title with a dump among the paper's sources (a paper with a record has more than one
    source then: few rows to look at, even beside the 3M-record arXiv snapshot)."""
    from .infile import is_metadata_file

    table = corpus.papers
    rows = table.derived_rows()
    adopted = [
        row
        for row in table.more_sources
        if not table.is_derived(row)
        and any(not is_metadata_file(s.file) for s in table[row].sources)
    ]
    return sorted(rows + adopted) if adopted else rows


def outcomes(
    papers: list[Paper], verdicts: dict[str, Verdict], snapshot: Snapshot, kept: list[Paper]
) -> list[Outcome]:
    """What each paper's verdict means for the library (idempotent: what is already there
    is not written again)."""
    result: list[Outcome] = []
    for paper in papers:
        verdict = verdicts[paper.id]
        best = verdict.best
        if verdict.status != "matched" or best is None:
            result.append(Outcome(paper, verdict, verdict.status))
            continue
        rec = best.record
        meta = metadata_of(rec, paper)
        prov = Provenance(
            source=rec.source,
            record=rec.record_id,
            location=rec.file,
            score=best.score,
            venue=venue_of(rec, paper),
            primary_class=rec.primary_class,
        )
        current = snapshot.metadata.get(paper.id)
        old = provenance(snapshot, paper.id)
        same = (
            current is not None
            and old is not None
            and old.written == current.as_dict()
            and (old.source, old.record, old.venue) == (prov.source, prov.record, prov.venue)
            and _same_fields(current, meta)
        )
        result.append(Outcome(paper, verdict, "matched", not same, meta, prov))
    _shared_identities(result, snapshot)
    for paper in kept:
        result.append(Outcome(paper, Verdict(paper.id, "kept"), "kept"))
    return result


_ARXIV_VERSION_RE = re.compile(r"v\d+$")


def identities(doi: str | None, url: str | None, eprint: str | None = None) -> set[str]:
    """What names one paper outside this program: "DOI 10.…" (case-insensitive) and
    "arXiv id NNNN.NNNNN" (without its version), from a DOI, an arXiv URL or an eprint."""
    found: set[str] = set()
    if doi and doi.strip():
        found.add("DOI " + doi.strip().casefold())
    arxiv = (eprint or "").strip() or arxiv_id_from_url(url)
    if arxiv:
        found.add("arXiv id " + _ARXIV_VERSION_RE.sub("", arxiv))
    return found


def _shared_identities(result: list[Outcome], snapshot: Snapshot) -> None:
    """Matches whose record names a paper (arXiv id, DOI) that another paper is matched to
    in this run, or that the library gives another paper, become ambiguous (nothing written
    for them): two abstracts cannot both be that paper, and a citation of the wrong one
    would link to it."""
    matched = {o.paper.id: o for o in result if o.status == "matched" and o.verdict.best}
    if not matched:
        return
    named: dict[str, list[str]] = {}  # paper → the identities its record names
    claims: dict[str, list[str]] = {}  # identity → the papers matched to it in this run
    for pid, o in matched.items():
        best = o.verdict.best
        assert best is not None
        rec = best.record
        named[pid] = sorted(identities(rec.doi, rec.url, rec.eprint))
        for ident in named[pid]:
            claims.setdefault(ident, []).append(pid)
    held: dict[str, str] = {}  # identity → a paper of the library (not re-matched now)
    for pid, meta in snapshot.metadata.items():
        if pid not in matched:
            for ident in identities(meta.doi, meta.url) & claims.keys():
                held.setdefault(ident, pid)
    for index, o in enumerate(result):
        pid = o.paper.id
        if pid not in matched:
            continue
        reason = ""
        for ident in named[pid]:
            others = [p for p in claims[ident] if p != pid]
            if others:
                reason = f"its record's {ident} is also matched to paper {others[0][:12]}"
            elif held.get(ident, pid) != pid:
                reason = f"its record's {ident} is paper {held[ident][:12]}'s in the library"
            if reason:
                break
        if reason:
            verdict = Verdict(pid, "ambiguous", o.verdict.candidates)
            result[index] = Outcome(o.paper, verdict, "ambiguous", reason=reason)


def _same_fields(a: Metadata, b: Metadata) -> bool:
    from .library import Metadata

    def clean(m: Metadata) -> Metadata:
        return Metadata(
            m.title.strip() if m.title else None,
            tuple(x.strip() for x in m.authors),
            m.url.strip() if m.url else None,
            m.doi.strip() if m.doi else None,
            m.year,
        )

    return clean(a) == clean(b)


def write(library: Library, planned: Iterable[Outcome]) -> int:
    """Store the due matches (metadata, then its provenance with what was written)."""
    count = 0
    for outcome in planned:
        if not outcome.changed or outcome.meta is None or outcome.prov is None:
            continue
        pid = outcome.paper.id
        library.set_metadata(pid, outcome.meta)
        stored = library.snapshot.metadata.get(pid)
        prov = outcome.prov
        full = Provenance(
            prov.source,
            prov.record,
            prov.location,
            prov.score,
            prov.venue,
            prov.primary_class,
            written=stored.as_dict() if stored is not None else None,
        )
        library.set_setting(PROVENANCE_PREFIX + pid, full.to_json())
        count += 1
    return count
