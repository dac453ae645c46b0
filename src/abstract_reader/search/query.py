"""The query language (fzf's syntax plus fields): text → `Query` of `Term`s.

No numpy here: parsing is cheap and importable anywhere. A term kind is a plain string
(`Term.kind`); adding one means a branch in `_parse_token` and one in the engine's `_term`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from itertools import zip_longest

from ..plural import count_phrase

# (the lexer is a module of its own, with no import: `saved` uses it before the first
# frame, when importing this package would bring numpy)
from ..querylex import LEXER as _LEXER
from ..text import fold, fold_accents

#: A word as the query and the displayed text see it.
_WORD_RE = re.compile(r"[^\W_]+")

#: Words are indexed and searched by their first ``MAX_WORD`` letters (folded): a "word" of
#: 100,000 letters costs no more than any other, in the index or in a query.
MAX_WORD = 256
#: The longest query used; the rest is reported in ``Query.ignored``.
MAX_QUERY_CHARS = 1_000
#: At most this many conditions (words, ``#tag``, ``is:``, … counted one each) per query.
MAX_QUERY_TERMS = 32


def typo_budget(word: str) -> int:
    """Edits allowed for a query word: none up to 4 letters, one up to 8, two from 9."""
    n = len(word)
    return 0 if n <= 4 else 1 if n <= 8 else 2


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
    # | "like" (orders instead of filtering) | "id" (the paper with that id prefix)
    words: tuple[Word, ...] = ()
    value: str = ""
    negated: bool = False
    alternatives: tuple[Term, ...] = ()  # for kind == "or"


@dataclass(frozen=True, slots=True)
class Query:
    terms: tuple[Term, ...]
    ignored: tuple[str, ...]  #: parts of the query that could not be used
    #: those of ``ignored`` that only say a size limit cut the query (not a mistake in it)
    limits: tuple[str, ...] = ()
    #: why each part of ``ignored`` could not be used, in a few words, in the same order
    #: ("" when the part says it itself: ``id:zz (an id prefix is 4 or more hex digits)``)
    reasons: tuple[str, ...] = ()

    @property
    def mistakes(self) -> tuple[str, ...]:
        """The parts that could not be used because they are wrong (`is:bookmarkd`)."""
        return tuple(part for part in self.ignored if part not in self.limits)

    def explained_mistakes(self) -> tuple[tuple[str, str], ...]:
        """``mistakes``, each with why it could not be used ("" when it says so itself)."""
        return tuple(
            (part, why)
            for part, why in zip_longest(
                self.ignored, self.reasons[: len(self.ignored)], fillvalue=""
            )
            if part not in self.limits
        )

    @property
    def empty(self) -> bool:
        return not self.terms


class _Ignored:
    """The parts a query cannot use, in order, each with why (for ``Query.reasons``)."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.reasons: list[str] = []

    def add(self, part: str, why: str = "") -> None:
        self.parts.append(part)
        self.reasons.append(why)


#: why a query part with no word in it could not be used, by what it is
_BARE = {
    "!": "a ! with no word after it",
    "'": "a ' with no word after it",
    "^": "a ^ with no word after it",
    "!'": "a !' with no word after it",
}
_IS_HELP = "is: takes bookmarked, unread, read, tagged, noted, marked or new"
_LIKE_HELP = "like: takes an id prefix, #tag or is:STATE"


_IS_VALUES = {"bookmarked", "bookmark", "unread", "read", "marked", "noted", "tagged", "new"}


def _unquote(quoted: str) -> tuple[str, bool]:
    """A quoted part as `querylex.QUOTED` found it (``"…"``, or unclosed) → (its text with the escapes
    undone, whether it was closed)."""
    out: list[str] = []
    i, n = 1, len(quoted)
    while i < n:
        ch = quoted[i]
        if ch == "\\" and i + 1 < n and quoted[i + 1] in '"\\':
            out.append(quoted[i + 1])
            i += 2
        elif ch == '"':
            return "".join(out), True
        else:
            out.append(ch)
            i += 1
    return "".join(out), False


def _words(raw: str, *, exact: bool, last: bool) -> tuple[Word, ...]:
    words: list[Word] = []
    tokens = _WORD_RE.findall(raw)
    for n, token in enumerate(tokens):
        case_sensitive = any(ch.isupper() for ch in token)
        text = (fold_accents(token) if case_sensitive else fold(token))[:MAX_WORD]
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
    ignored = _Ignored()
    limits: list[str] = []
    typing_last = bool(text) and not text[-1].isspace()
    if len(text) > MAX_QUERY_CHARS:  # cut at a space, so that no word is cut in two
        cut = text.rfind(" ", MAX_QUERY_CHARS // 2, MAX_QUERY_CHARS + 1)
        cut = cut if cut > 0 else MAX_QUERY_CHARS
        limits.append(
            f"{len(text) - cut:,} characters past the first {cut:,}"
            f" (queries are limited to {MAX_QUERY_CHARS:,} characters)"
        )
        ignored.add(limits[-1])
        text, typing_last = text[:cut], False
    tokens = _LEXER.findall(text)
    groups: list[list[Term]] = []
    pending_or = False
    conditions = 0
    for n, token in enumerate(tokens):
        if conditions >= MAX_QUERY_TERMS and token != "|":
            rest = [t for t in tokens[n:] if t != "|"]
            limits.append(
                f"{count_phrase(len(rest), 'more term')}"
                f" (queries are limited to {MAX_QUERY_TERMS} words or filters)"
            )
            ignored.add(limits[-1])
            pending_or = False
            break
        if token == "|":
            if groups:
                pending_or = True
            else:
                ignored.add("|", "a | with nothing before it")
            continue
        last = typing_last and n == len(tokens) - 1
        term = _parse_token(token, last, ignored)
        if term is None:
            continue
        conditions += max(1, len(term.words))
        if pending_or and groups:
            groups[-1].append(term)
        else:
            groups.append([term])
        pending_or = False
    if pending_or:
        ignored.add("|", "a | with nothing after it")
    terms: list[Term] = []
    for group in groups:
        if len(group) > 1 and any(t.kind == "like" for t in group):
            # a ranking is no alternative to a condition: `like:X | word` keeps the word
            for t in group:
                if t.kind == "like":
                    ignored.add(f"like:{t.value}", "like: cannot be one side of |")
            group = [t for t in group if t.kind != "like"]
        if len(group) == 1:
            terms.append(group[0])
        else:
            terms.append(Term("or", alternatives=tuple(group)))
    return Query(tuple(terms), tuple(ignored.parts), tuple(limits), tuple(ignored.reasons))


def _parse_token(token: str, last: bool, ignored: _Ignored) -> Term | None:
    negated = False
    raw = token
    if token.startswith("!"):
        negated = True
        token = token[1:]
    if token.startswith('"'):
        inner, closed = _unquote(token)
        words = _words(inner, exact=True, last=False)
        if not words:
            ignored.add(raw, "a quote with no word in it" if closed else "a lone quote")
            return None
        if len(words) == 1:
            return Term("words", words, negated=negated)
        return Term("phrase", words, value=inner, negated=negated)
    lowered = token.lower()
    if lowered.startswith("is:"):
        value = lowered[3:]
        value = "bookmarked" if value == "bookmark" else value
        if value not in _IS_VALUES:
            ignored.add(raw, _IS_HELP)
            return None
        return Term("is", value=value, negated=negated)
    if lowered.startswith("like:"):
        return _parse_like(token[5:], raw, negated, ignored)
    if lowered.startswith("id:"):
        value = lowered[3:]
        if not re.fullmatch(r"[0-9a-f]{4,}", value):
            ignored.add(f"{raw} (an id prefix is 4 or more hex digits)")
            return None
        return Term("id", value=value, negated=negated)
    if token.startswith("#"):
        tag = token[1:]
        if tag.startswith('"'):  # #"reading list": a tag with spaces (#"a\"b": with a ")
            tag = _unquote(tag)[0]
        if not tag.strip():
            ignored.add(raw, "a # with no tag name")
            return None
        return Term("tag", value=" ".join(tag.split()), negated=negated)
    for name in ("venue", "year", "title"):
        if lowered.startswith(name + ":"):
            value = token[len(name) + 1 :]
            if not value:
                ignored.add(raw, f"{name}: with nothing after it")
                return None
            if name == "year":
                if not re.fullmatch(r"\d{4}(?:-\d{4})?", value):
                    ignored.add(raw, "year: takes a year or a range, 2026 or 2024-2026")
                    return None
                since, _, until = value.partition("-")
                if until and until < since:  # 2026-2024: the same years as 2024-2026
                    value = f"{until}-{since}"
            if name == "title":
                words = _words(value, exact=False, last=last)
                if not words:
                    ignored.add(raw, "title: with no word after it")
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
        ignored.add(raw, _BARE.get(raw, "no letter or digit in it"))
        return None
    if negated:  # !word: no word that starts with it (like fzf's substring negation);
        # !'word: not the exact word
        words = tuple(Word(w.text, w.case_sensitive, not exact, 0) for w in words)
    if title_start:
        return Term("title_start", words[:1], negated=negated)
    if len(words) > 1 and not negated:
        return Term("phrase_loose", words, value=token, negated=negated)
    return Term("words", words, negated=negated)


def _parse_like(target: str, raw: str, negated: bool, ignored: _Ignored) -> Term | None:
    """``like:ID``, ``like:#tag``, ``like:is:bookmarked``: a ranking, never a condition, so
    it cannot be negated. ``value``: ``#tag``, ``is:state`` or a lower-case id prefix."""
    lowered = target.lower()
    value = ""
    if target.startswith("#"):
        tag = target[1:]
        tag = " ".join((_unquote(tag)[0] if tag.startswith('"') else tag).split())
        value = f"#{tag}" if tag else ""
    elif lowered.startswith("is:"):
        state = "bookmarked" if lowered[3:] == "bookmark" else lowered[3:]
        value = f"is:{state}" if state in _IS_VALUES else ""
    elif re.fullmatch(r"[0-9a-f]+", lowered):
        value = lowered
    if negated or not value:
        ignored.add(raw, "like: cannot be negated" if value else _LIKE_HELP)
        return None
    return Term("like", value=value)


#: A bare word that may be a pasted id prefix: 8–16 lower-case hex digits.
ID_WORD_RE = re.compile(r"[0-9a-f]{8,16}")


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

    return Query(tuple(strip(t) for t in query.terms), query.ignored, query.limits)


def named_tags(query: Query) -> tuple[str, ...]:
    """The tags ``query`` asks for — ``#x``, also as one side of ``|`` — each once (the first
    spelling, compared case-insensitively), in the query's order. Not ``!#x`` (papers
    without it) nor ``like:#x`` (a ranking, not a condition)."""
    found: dict[str, str] = {}

    def visit(terms: tuple[Term, ...]) -> None:
        for term in terms:
            if term.negated:
                continue
            if term.kind == "or":
                visit(term.alternatives)
            elif term.kind == "tag":
                found.setdefault(term.value.casefold(), term.value)

    visit(query.terms)
    return tuple(found.values())


def parts_asking(query: Query, state: str) -> tuple[str, ...]:
    """The parts of ``query`` that ask for ``is:STATE`` — ``is:marked``, ``!is:marked``,
    ``like:is:marked``, also as a side of ``|`` — written as the query language writes
    them, each once, in the query's order (the CLI refuses ``is:marked``: marks live only in
    a running reader)."""
    found: dict[str, None] = {}

    def visit(terms: tuple[Term, ...]) -> None:
        for term in terms:
            if term.kind == "or":
                visit(term.alternatives)
            elif term.kind == "is" and term.value == state:
                found["!" * term.negated + f"is:{state}"] = None
            elif term.kind == "like" and term.value == f"is:{state}":
                found[f"like:is:{state}"] = None

    visit(query.terms)
    return tuple(found)
