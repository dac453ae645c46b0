"""LaTeX math spans → Unicode text.

One math span (the inside of ``$…$``) is tokenised and converted in a single pass by the
small converter below; pylatexenc only lends its table of symbol macros (``\\alpha`` → ``α``),
stored in ``_symbol_table.py``, so its parser never runs, never backtracks and never logs, and
it is not even imported. The converter loses nothing: an operator stays a word (``\\log`` → ``log``), a script that has
no Unicode form is shown in parentheses (``r^{1/3}`` → ``r^(1/3)``), a macro it does not
know, or one missing its arguments, is shown as written (``\\frac``).
"""

from __future__ import annotations

import functools
import logging
import unicodedata
from collections.abc import Callable

from .sanitise import sanitise

#: Longest math span converted (characters); longer ones are shown as written.
MATH_SPAN_MAX = 2_000
#: Deepest brace nesting converted; deeper spans are shown as written.
MAX_DEPTH = 24


def _names(words: str) -> frozenset[str]:
    return frozenset(words.split())


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

#: Operators typeset as upright words: shown as the word.
OPERATORS = _names(
    "log ln lg exp sin cos tan cot sec csc arcsin arccos arctan sinh cosh tanh coth arg det "
    "dim deg gcd hom ker lim liminf limsup max min sup inf Pr argmax argmin"
)
#: Relations and connectives shown with a space on each side (``L ≥ ⌈…⌉``, ``X ∼ 𝒟``).
_SPACED = _names(
    "sim simeq approx geq ge leq le neq ne mid in notin ni subset subseteq supset supseteq "
    "to rightarrow leftarrow Rightarrow Leftarrow Longrightarrow iff implies mapsto equiv "
    "propto wedge vee land lor ll gg cong coloneqq leftrightarrow Leftrightarrow gtrsim "
    "lesssim asymp"
)
#: Combining marks for accents (applied to every character of the argument).
_ACCENTS = {
    "hat": "\u0302",
    "widehat": "\u0302",
    "tilde": "\u0303",
    "widetilde": "\u0303",
    "bar": "\u0304",
    "overline": "\u0305",
    "vec": "\u20d7",
    "dot": "\u0307",
    "ddot": "\u0308",
    "check": "\u030c",
    "breve": "\u0306",
    "acute": "\u0301",
    "grave": "\u0300",
    "mathring": "\u030a",
    "underline": "\u0332",
}
#: Font commands that change letters (``\\mathcal{D}`` → ``𝒟``): the Unicode name prefix.
_LETTER_FONTS = {
    "mathcal": "SCRIPT",
    "mathscr": "SCRIPT",
    "mathbb": "DOUBLE-STRUCK",
    "mathfrak": "FRAKTUR",
}
#: Commands whose argument is shown as plain text.
_PLAIN = _names(
    "text textrm textnormal textit textbf textsf texttt textup emph mbox mathrm mathit mathbf "
    "mathsf mathtt mathnormal boldsymbol bm operatorname hbox"
)
#: Commands that only size or style what follows: shown as nothing.
_INVISIBLE = _names(
    "left right big Big bigg Bigg bigl bigr Bigl Bigr biggl biggr Biggl Biggr middle "
    "displaystyle textstyle scriptstyle scriptscriptstyle limits nolimits nonumber notag "
    "label"
)
_SPACES = {",": " ", ";": " ", ":": " ", ">": " ", " ": " ", "!": "", "quad": " ", "qquad": " "}
_ESCAPES = {"%": "%", "{": "{", "}": "}", "_": "_", "&": "&", "#": "#", "$": "$", "|": "‖"}
#: Symbols pylatexenc's table lacks or renders in a way a reader would not expect.
_OWN_SYMBOLS = {
    "textasciitilde": "~",
    "lvert": "|",
    "rvert": "|",
    "lVert": "‖",
    "rVert": "‖",
    "Vert": "‖",
    "vert": "|",
    "ldots": "…",
    "dots": "…",
    "cdots": "⋯",
    "top": "⊤",
    "intercal": "⊺",
    "emptyset": "∅",
    "varnothing": "∅",
    "coloneqq": "≔",
    "lesssim": "≲",
    "gtrsim": "≳",
    "iff": "⟺",
    "implies": "⟹",
}
_OPENERS = "([{⌈⌊⟨"
_CLOSERS = ")]}⌉⌋⟩,;"


class _Unconvertible(Exception):
    """A span too deep or too long: shown as written."""


def pylatexenc_symbols() -> dict[str, str]:
    """pylatexenc's symbol macros with a fixed text (``alpha`` → ``α``), read from its
    context table (a 100 ms import and walk). Only to make ``_symbol_table.py``
    (``python -m abstract_reader.text.latex``) and for the test that it is current: the
    reader uses the stored table, so the first abstract with math costs no import.

    Any warning it might log while building is kept off stderr.
    """
    table: dict[str, str] = {}
    logger = logging.getLogger("pylatexenc")
    previous = logger.disabled
    logger.disabled = True
    try:
        from pylatexenc.latex2text import get_default_latex_context_db

        db = get_default_latex_context_db()
        for category in db.categories():
            for spec in db.iter_macro_specs([category]):
                repl = spec.simplify_repl
                name = spec.macroname
                if isinstance(repl, str) and "%" not in repl and name.isalpha():
                    table[name] = repl
    except Exception:  # the table is a convenience: without it, macros show as written
        pass
    finally:
        logger.disabled = previous
    # not a symbol: pylatexenc writes the day its table is made (a stored table would carry
    # the day it was stored, and it is not the day the paper was written either)
    table.pop("today", None)
    return table


def symbol_table() -> dict[str, str]:
    """Symbol macro name → its text (``pm`` → ``±``), as math spans are rendered (read-only:
    shared). `match.normalise` writes LaTeX symbols this way, as Unicode sources do."""
    return _symbols()


@functools.lru_cache(maxsize=1)
def _symbols() -> dict[str, str]:
    """Symbol macros → text: pylatexenc's table (stored), plus our own and the operators."""
    from ._symbol_table import PYLATEXENC_SYMBOLS

    table = dict(PYLATEXENC_SYMBOLS)
    table.update(_OWN_SYMBOLS)
    for name in OPERATORS:
        table[name] = name
    return table


@functools.lru_cache(maxsize=4096)
def _font_letter(font: str, ch: str) -> str:
    """``𝒟`` for (SCRIPT, D); the letter itself when Unicode has no such form."""
    if not ch.isascii() or not ch.isalnum():
        return ch
    if ch.isdigit():
        names = [f"MATHEMATICAL {font} DIGIT {unicodedata.name(ch).split()[-1]}"]
    else:
        case = "CAPITAL" if ch.isupper() else "SMALL"
        # a few letters live in the Letterlike Symbols block (ℬ, ℝ, ℭ …)
        names = [f"MATHEMATICAL {font} {case} {ch.upper()}", f"{font} {case} {ch.upper()}"]
        if font == "FRAKTUR":
            names.append(f"BLACK-LETTER {case} {ch.upper()}")
    for name in names:
        try:
            return unicodedata.lookup(name)
        except KeyError:
            continue
    return ch


# ---------------------------------------------------------------------------------------
# Tokens and groups
# ---------------------------------------------------------------------------------------

# A node is a group (list of nodes) or a token: ("m", name) macro, ("c", ch) character,
# ("s", " ") space, ("^", "^") / ("_", "_") scripts.
Node = list["Node"] | tuple[str, str]


def _parse(latex: str) -> list[Node]:
    """Tokens nested by braces, in one pass; an unmatched ``}`` is a character."""
    symbols = _symbols()
    root: list[Node] = []
    stack: list[list[Node]] = [root]
    i = 0
    n = len(latex)
    while i < n:
        ch = latex[i]
        if ch == "\\":
            j = i + 1
            if j < n and latex[j] == "\\":  # `\\kappa` (an escaped backslash in the dump)
                k = j + 1
                while k < n and latex[k].isalpha():
                    k += 1
                name = latex[j + 1 : k]
                if name and (name in symbols or name in _KNOWN):
                    stack[-1].append(("m", name))
                    i = k
                else:
                    stack[-1].append(("s", " "))  # a line break
                    i = j + 1
                continue
            k = j
            while k < n and latex[k].isalpha():
                k += 1
            if k == j:  # `\,` `\{` `\%`: one character
                k = min(j + 1, n)
            stack[-1].append(("m", latex[j:k]))
            i = k
        elif ch == "{":
            if len(stack) > MAX_DEPTH:
                raise _Unconvertible
            group: list[Node] = []
            stack[-1].append(group)
            stack.append(group)
            i += 1
        elif ch == "}":
            if len(stack) > 1:
                stack.pop()
            else:
                root.append(("c", "}"))
            i += 1
        elif ch.isspace():
            while i < n and latex[i].isspace():
                i += 1
            stack[-1].append(("s", " "))
        elif ch in "^_":
            stack[-1].append((ch, ch))
            i += 1
        else:
            stack[-1].append(("c", ch))
            i += 1
    return root


_KNOWN = (
    frozenset(_ACCENTS)
    | frozenset(_LETTER_FONTS)
    | _PLAIN
    | _INVISIBLE
    | frozenset(["sqrt", "frac", "dfrac", "tfrac", "cfrac", "binom", "operatorname"])
)


# ---------------------------------------------------------------------------------------
# Rendering nodes
# ---------------------------------------------------------------------------------------


def _take(nodes: list[Node], i: int) -> tuple[Node | None, int]:
    """The next argument after ``i`` (spaces skipped), and the index after it."""
    while i < len(nodes) and nodes[i] == ("s", " "):
        i += 1
    if i >= len(nodes):
        return None, i
    return nodes[i], i + 1


def _atomic(text: str) -> bool:
    """Shown without parentheses after √, in a fraction or a script: ``T``, ``10``, ``η``."""
    return text.isalnum() or len(text) == 1


def _script(kind: str, text: str) -> str:
    text = text.replace(" ", "")
    table = _SUB if kind == "_" else _SUP
    if text and all(ch in table for ch in text):
        return "".join(table[ch] for ch in text)
    if len(text) == 1 or (text.startswith("(") and text.endswith(")")):
        return kind + text
    return f"{kind}({text})"


def _wrap(text: str) -> str:
    return text if _atomic(text) else f"({text})"


def _seq(nodes: list[Node]) -> str:
    out: list[str] = []
    i = 0
    n = len(nodes)
    while i < n:
        node = nodes[i]
        i += 1
        if isinstance(node, list):
            out.append(_seq(node))
            continue
        kind, value = node
        if kind in ("c", "s"):
            out.append(value)
        elif kind in ("^", "_"):
            arg, i = _take(nodes, i)
            out.append(kind if arg is None else _script(kind, _node(arg)))
        else:
            text, i = _macro(value, nodes, i)
            out.append(text)
    return "".join(out)


def _node(node: Node) -> str:
    return _seq(node) if isinstance(node, list) else _seq([node])


def _macro(name: str, nodes: list[Node], i: int) -> tuple[str, int]:
    """The text of macro ``name`` whose arguments start at ``nodes[i]``."""
    handler = _HANDLERS.get(name)
    if handler is not None:
        return handler(name, nodes, i)
    if name in _SPACES:
        return _SPACES[name], i
    if name in _ESCAPES:
        return _ESCAPES[name], i
    symbols = _symbols()
    if name in symbols:
        text = symbols[name]
        return (f" {text} " if name in _SPACED else text), i
    text = "\\" + name  # unknown: shown as written, its arguments too, nothing lost
    while i < len(nodes) and isinstance(nodes[i], list):
        text += "{" + _node(nodes[i]) + "}"
        i += 1
    return text, i


def _accent(name: str, nodes: list[Node], i: int) -> tuple[str, int]:
    arg, j = _take(nodes, i)
    if arg is None:
        return "\\" + name, i
    mark = _ACCENTS[name]
    return "".join(ch + mark if not ch.isspace() else ch for ch in _node(arg)), j


def _font(name: str, nodes: list[Node], i: int) -> tuple[str, int]:
    arg, j = _take(nodes, i)
    if arg is None:
        return "\\" + name, i
    font = _LETTER_FONTS[name]
    return "".join(_font_letter(font, ch) for ch in _node(arg)), j


def _plain(name: str, nodes: list[Node], i: int) -> tuple[str, int]:
    if name == "operatorname" and i < len(nodes) and nodes[i] == ("c", "*"):
        i += 1
    arg, j = _take(nodes, i)
    if arg is None:
        return "\\" + name, i
    return _node(arg), j


def _invisible(name: str, nodes: list[Node], i: int) -> tuple[str, int]:
    if name in ("left", "right", "middle") and i < len(nodes) and nodes[i] == ("c", "."):
        i += 1  # `\right.`: an invisible delimiter
    if name == "label":
        _arg, i = _take(nodes, i)
    return "", i


def _sqrt(name: str, nodes: list[Node], i: int) -> tuple[str, int]:
    index = ""
    j = i
    while j < len(nodes) and nodes[j] == ("s", " "):
        j += 1
    if j < len(nodes) and nodes[j] == ("c", "["):  # `\sqrt[3]{x}`
        k = j + 1
        end = min(len(nodes), j + 12)  # an index is short; a bound keeps `\sqrt[\sqrt[…` linear
        while k < end and nodes[k] != ("c", "]"):
            k += 1
        if k < end:
            index = _seq(nodes[j + 1 : k]).replace(" ", "")
            j = k + 1
    arg, j = _take(nodes, j)
    if arg is None:
        return "\\" + name, i
    prefix = "".join(_SUP[ch] for ch in index) if all(ch in _SUP for ch in index) else index
    return prefix + "√" + _wrap(_node(arg).strip()), j


def _frac(name: str, nodes: list[Node], i: int) -> tuple[str, int]:
    top, j = _take(nodes, i)
    bottom, k = _take(nodes, j)
    if top is None or bottom is None:
        return "\\" + name, i  # `$\frac$`: shown as written
    a, b = _node(top).strip(), _node(bottom).strip()
    if name == "binom":
        return f"({a} choose {b})", k
    return f"{_wrap(a)}/{_wrap(b)}", k


_Handler = Callable[[str, list[Node], int], tuple[str, int]]
_HANDLERS: dict[str, _Handler] = {
    **dict.fromkeys(_ACCENTS, _accent),
    **dict.fromkeys(_LETTER_FONTS, _font),
    **dict.fromkeys(_PLAIN, _plain),
    **dict.fromkeys(_INVISIBLE, _invisible),
    "sqrt": _sqrt,
    **dict.fromkeys(["frac", "dfrac", "tfrac", "cfrac", "binom"], _frac),
}


def _tidy(text: str) -> str:
    """One space between words, none inside brackets or before a comma."""
    words = text.split()
    out: list[str] = []
    for word in words:
        if out and (out[-1][-1] in _OPENERS or word[0] in _CLOSERS):
            out[-1] += word
        else:
            out.append(word)
    return " ".join(out)


@functools.lru_cache(maxsize=8192)
def latex_to_unicode(latex: str) -> str:
    """Convert the inside of one math span to Unicode text. Never raises.

    Linear in the span; spans longer than ``MATH_SPAN_MAX`` or nested deeper than
    ``MAX_DEPTH`` are shown as written (sanitised, whitespace collapsed).
    """
    if len(latex) > MATH_SPAN_MAX:
        return sanitise(" ".join(latex.split()))
    try:
        converted = _seq(_parse(latex))
    except (_Unconvertible, RecursionError):
        converted = latex
    # precomposed where Unicode has it (``Õ``), so terminals draw one cell
    return sanitise(unicodedata.normalize("NFC", _tidy(converted)))


def _write_symbol_table() -> None:
    """Store pylatexenc's table as ``_symbol_table.py`` (after an upgrade of pylatexenc)."""
    from pathlib import Path

    table = pylatexenc_symbols()
    lines = [
        '"""pylatexenc\'s symbol macros → text, stored (made by ``python -m',
        'abstract_reader.text.latex``; a test checks it against the installed pylatexenc)."""',
        "",
        "PYLATEXENC_SYMBOLS: dict[str, str] = {",
        *(f"    {name!r}: {text!r}," for name, text in sorted(table.items())),
        "}",
        "",
    ]
    Path(__file__).with_name("_symbol_table.py").write_text("\n".join(lines), encoding="utf-8")


if __name__ == "__main__":
    _write_symbol_table()
