"""LaTeX math spans → Unicode text (pylatexenc on the inside of one span only)."""

from __future__ import annotations

import functools
import re

from .sanitise import sanitise

_SUB = dict(
    zip("0123456789+-=()aehijklmnoprstuvx", "₀₁₂₃₄₅₆₇₈₉₊₋₌₍₎ₐₑₕᵢⱼₖₗₘₙₒₚᵣₛₜᵤᵥₓ", strict=True)
)
_SUP = dict(
    zip(
        "0123456789+-=()abcdefghijklmnoprstuvwxyzABDEGHIJKLMNOPRTUVW",
        "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁼⁽⁾ᵃᵇᶜᵈᵉᶠᵍʰⁱʲᵏˡᵐⁿᵒᵖʳˢᵗᵘᵛʷˣʸᶻᴬᴮᴰᴱᴳᴴᴵᴶᴷᴸᴹᴺᴼᴾᴿᵀᵁⱽᵂ",
        strict=True,
    )
)
_SCRIPT_RE = re.compile(r"([_^])(?:\{\s*([^{}\\]*?)\s*\}|([A-Za-z0-9]))")


def _scripts(latex: str) -> str:
    """Map ``_2``, ``^{-1}`` … to Unicode sub/superscripts where every character has one."""

    def repl(match: re.Match[str]) -> str:
        content = match.group(2) if match.group(2) is not None else match.group(3)
        table = _SUB if match.group(1) == "_" else _SUP
        if content and all(ch in table for ch in content):
            return "".join(table[ch] for ch in content)
        return match.group(0)

    return _SCRIPT_RE.sub(repl, latex)


@functools.lru_cache(maxsize=1)
def _latex_converter() -> object:
    from pylatexenc.latex2text import LatexNodes2Text

    return LatexNodes2Text(math_mode="text", strict_latex_spaces="based-on-source")


@functools.lru_cache(maxsize=8192)
def latex_to_unicode(latex: str) -> str:
    """Convert the inside of one math span to Unicode text. Never raises."""
    source = _scripts(latex)
    if "\\" not in source and "{" not in source and "}" not in source:
        return sanitise(" ".join(source.split()))  # nothing for pylatexenc to do: `k`, `2ᵏ`
    try:
        converted: str = _latex_converter().latex_to_text(source)  # type: ignore[attr-defined]
    except Exception:  # pylatexenc can fail on odd input: show the source instead
        converted = latex
    converted = " ".join(converted.split())
    return sanitise(converted)


# A math span: $…$ (not $$), $$…$$, or \(…\). A `\$` is a literal dollar.
_MATH_RE = re.compile(
    r"(?<!\\)\$\$(?P<d>.+?)(?<!\\)\$\$"
    r"|(?<![\\$])\$(?P<s>[^$]+?)(?<!\\)\$(?!\$)"
    r"|\\\((?P<p>.+?)\\\)",
    re.DOTALL,
)
