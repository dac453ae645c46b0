"""Rendering: math spans → Unicode, Markdown emphasis → style spans. Lazy and memoised."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Literal

from .latex import _MATH_RE, latex_to_unicode

Style = Literal["bold", "italic", "math"]


@dataclass(frozen=True, slots=True)
class StyleSpan:
    start: int
    end: int
    style: Style


@dataclass(frozen=True, slots=True)
class Rendered:
    """Plain Unicode text (what a user reads) with the spans that views style."""

    text: str
    spans: tuple[StyleSpan, ...] = ()


_EMPH_RE = re.compile(
    r"(?<![\w*])\*\*(?=\S)(?P<b>.+?)(?<=\S)\*\*(?![\w*])"
    r"|(?<![\w*])\*(?=[^\s*])(?P<i>[^*]+?)(?<=[^\s*])\*(?![\w*])",
    re.DOTALL,
)


def _emphasis(text: str, base: int, out: list[str], spans: list[StyleSpan]) -> int:
    """Append ``text`` with emphasis markers removed; returns the new output length."""
    pos = 0
    length = base
    for match in _EMPH_RE.finditer(text):
        before = text[pos : match.start()]
        out.append(before)
        length += len(before)
        inner = match.group("b") if match.group("b") is not None else match.group("i")
        style: Style = "bold" if match.group("b") is not None else "italic"
        # Nested *italic* inside **bold** keeps its text; one level of styling is enough.
        inner = inner.replace("*", "") if style == "bold" and inner.count("*") % 2 == 0 else inner
        out.append(inner)
        spans.append(StyleSpan(length, length + len(inner), style))
        length += len(inner)
        pos = match.end()
    rest = text[pos:]
    out.append(rest)
    return length + len(rest)


@functools.lru_cache(maxsize=4096)
def render(source: str) -> Rendered:
    """Render sanitised abstract source: math spans → Unicode, ``**b**``/``*i*`` → spans.

    Prose outside math is left alone (``50%``, ``~``, ``[1]``, ``a[i]``). Memoised.
    """
    out: list[str] = []
    spans: list[StyleSpan] = []
    length = 0
    pos = 0
    for match in _MATH_RE.finditer(source):
        length = _emphasis(source[pos : match.start()], length, out, spans)
        inner = match.group("d") or match.group("s") or match.group("p") or ""
        converted = latex_to_unicode(inner)
        out.append(converted)
        spans.append(StyleSpan(length, length + len(converted), "math"))
        length += len(converted)
        pos = match.end()
    _emphasis(source[pos:], length, out, spans)
    return Rendered("".join(out), tuple(spans))


def strip_markup_fast(source: str) -> str:
    """A cheap plain version of short source text (titles): math rendered, markers removed."""
    if "$" in source or "\\" in source or "*" in source:
        return render(source).text
    return source


def cap(text: str, limit: int) -> tuple[str, int]:
    """Cut ``text`` to at most ``limit`` characters; returns the text and how many were cut."""
    if len(text) <= limit:
        return text, 0
    return text[:limit], len(text) - limit
