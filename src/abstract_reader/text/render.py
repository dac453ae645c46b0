"""Rendering: an abstract's source → plain Unicode text with bold/italic/math spans.

One forward scan over the source, linear in its length whatever it contains:

- math spans (``$…$``, ``$$…$$``, ``\\(…\\)``, ``\\[…\\]``) → Unicode (``latex.py``); a closing
  delimiter is looked for once per delimiter kind and remembered, never rescanned, and a span
  longer than ``MAX_MATH`` is not math;
- Markdown emphasis ``**bold**`` / ``*italic*``, also inside a word (``**D**ual``), matched
  with a delimiter stack (CommonMark's flanking rules, each delimiter pushed and popped once);
- text-mode LaTeX: ``\\textbf{…}``, ``\\textit{…}``, ``\\emph{…}`` … as styles, escapes
  (``31\\%``), TeX quotes (````fast''`` → “fast”), dashes (``--``, ``---``) and ties (``~``).

Anything that does not pair up is shown as written: nothing is lost. ``render(source,
limit)`` stops at a word boundary once ``limit`` characters are produced, so a huge abstract
costs what is shown, not what it holds. Memoised.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Literal

from .latex import latex_to_unicode

Style = Literal["bold", "italic", "math"]

#: Longest math span (source characters); a `$` with no close within it is a dollar.
MAX_MATH = 2_000
#: Most style spans one rendering carries (a seed abstract has at most 12).
MAX_SPANS = 1_000
#: Longest run of `*` or `-` taken as one piece (a longer run is several: the limit holds).
_MAX_RUN = 16
#: Deepest nesting of ``\\textbf{…}``-like groups followed.
_MAX_GROUPS = 64


@dataclass(frozen=True, slots=True)
class StyleSpan:
    start: int
    end: int
    style: Style


@dataclass(frozen=True, slots=True)
class Rendered:
    """Plain Unicode text (what a user reads) with the spans that views style.

    ``cut`` is how many characters of the source were not rendered (``render``'s limit).
    """

    text: str
    spans: tuple[StyleSpan, ...] = ()
    cut: int = 0


#: Where something might happen; everything between two of these is copied as is.
_SPECIAL_RE = re.compile(r"[$\\*`'~{}-]")

_TEXT_STYLES: dict[str, Style | None] = {
    "textbf": "bold",
    "textit": "italic",
    "emph": "italic",
    "textsl": "italic",
    "underline": None,
    "textsc": None,
    "texttt": None,
    "textrm": None,
    "textsf": None,
    "textup": None,
    "textmd": None,
    "textnormal": None,
    "mbox": None,
    "text": None,
}
_TEXT_SYMBOLS = {
    "textasciitilde": "~",
    "textendash": "–",
    "textemdash": "—",
    "ldots": "…",
    "dots": "…",
    "textellipsis": "…",
    "textbackslash": "\\",
    "LaTeX": "LaTeX",
    "TeX": "TeX",
}
_TEXT_ESCAPES = frozenset("%&#$_{}")


def _flanking(prev: str, nxt: str) -> tuple[bool, bool]:
    """CommonMark: can a ``*`` run between ``prev`` and ``nxt`` open, close?"""
    prev_space = not prev or prev.isspace()
    next_space = not nxt or nxt.isspace()
    prev_punct = not prev_space and not prev.isalnum()
    next_punct = not next_space and not nxt.isalnum()
    left = not next_space and (not next_punct or prev_space or prev_punct)
    right = not prev_space and (not prev_punct or next_space or next_punct)
    return left, right


class _Closers:
    """The next occurrence of a closing delimiter at or after a position, found once.

    Positions only move forward, so each search continues where the last one stopped:
    all lookups for one delimiter together scan the source once.
    """

    __slots__ = ("_delim", "_found", "_source")

    def __init__(self, source: str, delim: str) -> None:
        self._source = source
        self._delim = delim
        self._found = -2  # not searched yet

    def at_or_after(self, pos: int) -> int:
        if self._found == -1 or (self._found >= pos):
            return self._found
        self._found = self._source.find(self._delim, pos)
        return self._found


def _inline_close(source: str, closers: _Closers, start: int) -> int:
    """The `$` closing an inline span opened at ``start - 1`` (pandoc's rules), or -1.

    Only the first unescaped `$` after the opener is considered: if it cannot close (a space
    before it; a digit after it when a digit follows the opener: ``$5 and $10``, unlike
    ``$\\sim$500``), the opener is a plain dollar.
    """
    k = closers.at_or_after(start)
    while k > 0 and source[k - 1] == "\\":
        k = closers.at_or_after(k + 1)
    if k < 0 or k - start > MAX_MATH or k == start:
        return -1
    if source[k - 1].isspace():
        return -1
    if source[k + 1 : k + 2].isdigit() and source[start].isdigit():  # `$5 and $10`: money
        return -1
    if source[k + 1 : k + 2] == "$":  # `$a$$`: not a clean close
        return -1
    return k


@functools.lru_cache(maxsize=4096)
def render(source: str, limit: int | None = None) -> Rendered:
    """Render sanitised abstract source: math → Unicode, emphasis and text styles → spans.

    Prose outside math is left alone (``50%``, ``~ 3``, ``[1]``, ``a[i]``) but for the
    text-mode constructs above. With ``limit``, at most about ``limit`` characters are
    produced, cut at a space outside any math span; ``Rendered.cut`` says how many source
    characters were left. Memoised; linear in what it renders.
    """
    pieces: list[str] = []
    out_len = 0
    spans: list[tuple[int, int, Style]] = []  # in piece indexes: [start, end)
    # emphasis delimiters: (piece index, run length); bottoms per run length (CommonMark)
    stack: list[tuple[int, int]] = []
    bottom = {1: 0, 2: 0}
    groups: list[tuple[int, Style | None]] = []  # open \textbf{ … / { inside one
    open_quotes = 0
    dollar = _Closers(source, "$")
    double = _Closers(source, "$$")
    paren = _Closers(source, "\\)")
    bracket = _Closers(source, "\\]")
    n = len(source)
    cap = n if limit is None else max(0, limit)
    pos = 0
    cut = 0

    def emit(text: str) -> int:
        nonlocal out_len
        pieces.append(text)
        out_len += len(text)
        return len(pieces) - 1

    while pos < n:
        match = _SPECIAL_RE.search(source, pos)
        stop = match.start() if match else n
        if stop > pos:
            chunk = source[pos:stop]
            if out_len + len(chunk) > cap:  # the limit: cut at a space, within the chunk
                room = cap - out_len
                space = chunk.rfind(" ", max(0, room - 200), room + 1)
                keep = space if space > 0 else room
                emit(chunk[:keep])
                cut = n - (pos + keep)
                break
            emit(chunk)
            pos = stop
        if match is None:
            break
        if out_len >= cap:
            cut = n - pos
            break
        ch = source[pos]
        nxt = source[pos + 1 : pos + 2]
        prev = source[pos - 1 : pos]
        if ch == "$" or (ch == "\\" and nxt in ("(", "[")):
            inner: str | None = None
            if ch == "\\":
                closers = paren if nxt == "(" else bracket
                k = closers.at_or_after(pos + 2)
                if k >= 0 and k - pos <= MAX_MATH:
                    inner, end = source[pos + 2 : k], k + 2
            elif nxt == "$":
                k = double.at_or_after(pos + 2)
                if k > pos + 2 and k - pos <= MAX_MATH:
                    inner, end = source[pos + 2 : k], k + 2
            elif nxt and not nxt.isspace():
                k = _inline_close(source, dollar, pos + 1)
                if k >= 0:
                    inner, end = source[pos + 1 : k], k + 1
            if inner is None:
                emit("$$" if ch == "$" and nxt == "$" else ch)
                pos += 2 if ch == "$" and nxt == "$" else 1
                continue
            converted = latex_to_unicode(inner)
            if out_len + len(converted) > cap and out_len > 0:
                cut = n - pos
                break
            index = emit(converted)
            spans.append((index, index + 1, "math"))
            pos = end
        elif ch == "\\":
            if nxt in _TEXT_ESCAPES:
                emit(nxt)
                pos += 2
                continue
            k = pos + 1
            while k < n and k - pos <= 30 and source[k].isalpha():
                k += 1
            name = source[pos + 1 : k]
            if name in _TEXT_STYLES and source[k : k + 1] == "{" and len(groups) < _MAX_GROUPS:
                groups.append((emit(source[pos : k + 1]), _TEXT_STYLES[name]))
                pos = k + 1
            elif name in _TEXT_SYMBOLS:
                emit(_TEXT_SYMBOLS[name])
                pos = k
                if source[pos : pos + 2] == "{}":
                    pos += 2
            else:
                emit(source[pos:k] if name else ch)
                pos = k if name else pos + 1
        elif ch == "{":
            if groups and len(groups) < _MAX_GROUPS:  # grouping inside \textbf{…}: invisible
                groups.append((emit("{"), None))
            else:
                emit("{")
            pos += 1
        elif ch == "}":
            index = emit("}")
            if groups:
                opener, style = groups.pop()
                out_len -= len(pieces[opener]) + 1
                pieces[opener] = ""
                pieces[index] = ""
                if style is not None:
                    spans.append((opener, index, style))
            pos += 1
        elif ch == "*":
            k = pos
            while k < n and source[k] == "*" and k - pos < _MAX_RUN:
                k += 1
            run = k - pos
            index = emit(source[pos:k])
            pos = k
            if run > 2:
                continue
            after = source[k : k + 1]
            if run == 1 and prev.isalnum() and after.isalnum():
                continue  # `2*3`, `a*b`: a product inside a word, not emphasis (`**D**ual` is)
            can_open, can_close = _flanking(prev, after)
            if can_close:
                found = -1
                for s in range(len(stack) - 1, bottom[run] - 1, -1):
                    if stack[s][1] == run:
                        found = s
                        break
                if found >= 0:
                    opener = stack[found][0]
                    del stack[found:]
                    bottom = {key: min(low, len(stack)) for key, low in bottom.items()}
                    pieces[opener] = ""
                    pieces[index] = ""
                    out_len -= 2 * run
                    spans.append((opener, index, "bold" if run == 2 else "italic"))
                    continue
                bottom[run] = len(stack)
            if can_open:
                stack.append((index, run))
        elif ch == "`" and nxt == "`":
            emit("“")
            open_quotes += 1
            pos += 2
        elif ch == "'" and nxt == "'" and open_quotes > 0:
            emit("”")
            open_quotes -= 1
            pos += 2
        elif ch == "-":
            k = pos
            while k < n and source[k] == "-" and k - pos < _MAX_RUN:
                k += 1
            run = k - pos
            after = source[k : k + 1]
            words = (prev.isalnum() or prev == ")") and (after.isalnum() or after == "(")
            spaced = prev == " " and after == " "
            if run == 2 and (words or spaced):
                emit("–")
            elif run == 3 and (words or spaced or (prev.isalnum() and after == " ")):
                emit("—")
            else:
                emit(source[pos:k])
            pos = k
        elif ch == "~" and (prev.isalnum() or prev == ".") and nxt.isalnum():
            emit(" ")  # a TeX tie: `StarCraft~II`, `Fig.~3`
            pos += 1
        else:
            emit(ch)
            pos += 1

    if cut:  # the pair the limit cut: styled up to the cut, its marker not shown
        # only the innermost opener of each kind (a flood of unmatched `**` stays as written,
        # and a view never gets thousands of overlapping spans)
        end = len(pieces)
        last = {run: opener for opener, run in stack}
        for run, opener in last.items():
            pieces[opener] = ""
            spans.append((opener, end, "bold" if run == 2 else "italic"))
        if groups:
            opener, style = groups[-1]
            pieces[opener] = ""
            if style is not None:
                spans.append((opener, end, style))
    return Rendered(*_assemble(pieces, spans), cut=cut)


def _assemble(
    pieces: list[str], spans: list[tuple[int, int, Style]]
) -> tuple[str, tuple[StyleSpan, ...]]:
    offsets = [0] * (len(pieces) + 1)
    total = 0
    for i, piece in enumerate(pieces):
        offsets[i] = total
        total += len(piece)
    offsets[len(pieces)] = total
    styled = sorted(
        (StyleSpan(offsets[start], offsets[end], style) for start, end, style in spans),
        key=lambda s: (s.start, s.end),
    )
    kept = [s for s in styled if s.end > s.start]
    # the text is always whole; past MAX_SPANS (never reached by a real abstract) the rest
    # is left unstyled, so a flood of `*x*` cannot make a view restyle thousands of spans
    return "".join(pieces), tuple(kept[:MAX_SPANS])


def strip_markup_fast(source: str) -> str:
    """A cheap plain version of short source text (titles): math rendered, markers removed."""
    if any(ch in source for ch in "$\\*`'~-"):
        return render(source).text
    return source


def cap(text: str, limit: int) -> tuple[str, int]:
    """Cut ``text`` to at most ``limit`` characters; returns the text and how many were cut."""
    if len(text) <= limit:
        return text, 0
    return text[:limit], len(text) - limit
