"""Text handling: sanitising untrusted text, LaTeX math → Unicode, emphasis, stand-in titles.

Everything here is plain Python (no Textual). Rendering is lazy and memoised: the cost is
paid per abstract that is actually shown, never for a whole corpus up front.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from dataclasses import dataclass
from typing import Literal

# ---------------------------------------------------------------------------------------
# Sanitising
# ---------------------------------------------------------------------------------------

#: Bidi embeddings, overrides, isolates and marks: they can reorder what a terminal shows.
_BIDI = [0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A)]


def _build_table() -> dict[int, str]:
    table: dict[int, str] = {}
    for code in range(0x20):
        if code in (0x09, 0x0A):
            continue
        table[code] = chr(0x2400 + code)  # ␀ … ␟ (ESC → ␛)
    table[0x7F] = "\u2421"  # ␡
    for code in range(0x80, 0xA0):
        table[code] = "\ufffd"
    for code in _BIDI:
        table[code] = "\ufffd"
    # Line/paragraph separators make terminals and Rich break lines: show them as spaces.
    table[0x2028] = " "
    table[0x2029] = " "
    return table


_SANITISE_TABLE = _build_table()


def sanitise(text: str) -> str:
    """Replace every character that could act as a terminal control by a visible stand-in.

    C0 controls (except newline and tab), DEL, C1 controls and bidi controls never pass.
    Idempotent: the stand-ins are ordinary printable characters.
    """
    return text.translate(_SANITISE_TABLE)


_ESCAPE_TABLE = {code: f"\\x{code:02x}" for code in [*range(0x20), 0x7F, *range(0x80, 0xA0)]}
_ESCAPE_TABLE.update({code: f"\\u{code:04x}" for code in [*_BIDI, 0x2028, 0x2029]})


def escape_for_terminal(text: str) -> str:
    """Escape a string (a file name, say) for a one-line message: controls become ``\\xNN``."""
    return text.translate(_ESCAPE_TABLE)


# ---------------------------------------------------------------------------------------
# Math
# ---------------------------------------------------------------------------------------

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

# ---------------------------------------------------------------------------------------
# Rendering: math + emphasis → plain text with style spans
# ---------------------------------------------------------------------------------------

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


# ---------------------------------------------------------------------------------------
# Folding (search) helpers
# ---------------------------------------------------------------------------------------

_GREEK = {
    "α": "alpha", "β": "beta", "γ": "gamma", "δ": "delta", "ε": "epsilon", "ϵ": "epsilon",
    "ζ": "zeta", "η": "eta", "θ": "theta", "ϑ": "theta", "ι": "iota", "κ": "kappa",
    "λ": "lambda", "μ": "mu", "ν": "nu", "ξ": "xi", "π": "pi", "ρ": "rho", "ϱ": "rho",
    "σ": "sigma", "ς": "sigma", "τ": "tau", "υ": "upsilon", "φ": "phi", "ϕ": "phi",
    "χ": "chi", "ψ": "psi", "ω": "omega",
}  # fmt: skip
GREEK_NAMES = frozenset(_GREEK.values()) | {"varepsilon", "varphi", "vartheta", "varrho"}
_GREEK_UPPER = {
    "Γ": "Gamma", "Δ": "Delta", "Θ": "Theta", "Λ": "Lambda", "Ξ": "Xi", "Π": "Pi",
    "Σ": "Sigma", "Υ": "Upsilon", "Φ": "Phi", "Ψ": "Psi", "Ω": "Omega",
}  # fmt: skip
GREEK_NAMES = GREEK_NAMES | {name.lower() for name in _GREEK_UPPER.values()}
_GREEK_ALL = {**_GREEK, **_GREEK_UPPER}
#: LaTeX commands that display their own name as text: searchable like words.
TEXT_COMMANDS = frozenset(
    [
        "log",
        "ln",
        "exp",
        "sin",
        "cos",
        "tan",
        "sinh",
        "cosh",
        "tanh",
        "arg",
        "det",
        "dim",
        "deg",
        "gcd",
        "hom",
        "ker",
        "lim",
        "liminf",
        "limsup",
        "max",
        "min",
        "sup",
        "inf",
        "Pr",
    ]
)


@functools.lru_cache(maxsize=200_000)
def fold_accents(word: str) -> str:
    """Fold accents and Greek letters to ASCII-ish search forms, keeping case.

    ``Köhler`` → ``Kohler``; ``μ`` → ``mu``; ``ℓ`` → ``l``.
    """
    if word.isascii():
        return word
    if len(word) == 1 and word in _GREEK_ALL:
        return _GREEK_ALL[word]
    decomposed = unicodedata.normalize("NFKD", word)
    chars: list[str] = []
    for ch in decomposed:
        if unicodedata.combining(ch):
            continue
        chars.append(_GREEK_ALL.get(ch, ch))
    return "".join(chars)


def fold(word: str) -> str:
    """The case-insensitive search form of a word."""
    return fold_accents(word).lower()


# ---------------------------------------------------------------------------------------
# Stand-in titles
# ---------------------------------------------------------------------------------------

TITLE_MAX = 80

_INTRO_RE = re.compile(
    r"\b(?:[Ww]e|[Tt]his (?:paper|work)|[Oo]ur (?:work|paper))\s+"
    r"(?:(?:also|further|then|first|next|therefore|thus)\s+)?"
    r"(?:introduce|propose|present|develop|release|build|design|construct|contribute|"
    r"introduces|proposes|presents|develops)\s+(?P<rest>[^.;]{3,400})"
)
_CALLED_RE = re.compile(
    r"\b(?:called|termed|dubbed|named|coined|we call|which we call)\s+"
    r"(?P<name>(?:\*\*|\*|\\text(?:bf|it|sc)\{)?[A-Za-z0-9$\\][^,;.()]{0,60}?"
    r"(?:\s*\([A-Za-z0-9-]{2,12}\))?)(?=[,;.:]|\s+(?:that|which|to|for|with|as)\b|$)"
)
_ACRONYM_DEF_RE = re.compile(
    r"^(?P<long>(?:[A-Z0-9][\w'’-]*|of|and|for|the|via|in|on|with|to|a|-)"
    r"(?:\s+(?:[A-Z0-9][\w'’-]*|of|and|for|the|via|in|on|with|to|a|-))*)"
    r"\s*\((?P<short>[A-Za-z0-9][\w±+-]{0,15})\)"
)
_NAME_RE = re.compile(r"^(?P<name>[^\s,;:()]*[A-Z0-9][^\s,;:()]*)(?P<after>.*)$", re.DOTALL)
_ARTICLE_RE = re.compile(
    r"^(?:(?:the|a|an|our)\s+)?(?:(?:new|novel|first|simple|general|practical|unified)\s+)*", re.I
)
_TITLE_CASE_RE = re.compile(
    r"^(?P<name>[A-Z][\w'’-]*(?:\s+(?:[A-Z0-9][\w'’-]*|of|and|for|the|via|in|on))+)"
)
_CLEAN_RE = re.compile(r"\*\*|\*|\\text(?:bf|it|sc|tt|rm)\{([^{}]*)\}")
_CLAUSE_RE = re.compile(r",\s|;\s|:\s|\s--\s|\s—\s|—")
_DESC_STOP_RE = re.compile(r"\s+(?:that|which|where|whose|to|by|as|designed|capable|able)\b")
_NAME_END_RE = re.compile(r"^\s*(?:$|[,(;:]|(?:that|which|to|for|with|as|is|was|a|an|in)\b)")
_LEAD_IN = {"in", "on", "when", "although", "while", "as", "despite", "given", "for", "since", "if"}
_STOPWORD_END = {
    "a",
    "an",
    "the",
    "of",
    "and",
    "or",
    "for",
    "to",
    "in",
    "on",
    "with",
    "via",
    "by",
    "as",
    "through",
    "under",
    "across",
    "from",
    "between",
    "into",
    "within",
    "at",
}


def _clean(fragment: str) -> str:
    cleaned = _CLEAN_RE.sub(lambda m: m.group(1) if m.group(1) is not None else "", fragment)
    return " ".join(cleaned.split())


def shorten(text: str, limit: int = TITLE_MAX) -> str:
    """Cut at a word boundary to at most ``limit`` characters (ellipsis included)."""
    text = " ".join(text.split()).strip(" ,;:-")
    if len(text) <= limit:
        return text
    words = text[: limit - 1].split(" ")
    if len(words) > 1:
        words = words[:-1]  # the last word may be cut: drop it
    while len(words) > 1 and words[-1].lower().strip(",;:") in _STOPWORD_END:
        words.pop()
    head = " ".join(words).rstrip(" ,;:-")
    if len(head) > limit - 1:  # one enormous word: nothing sensible to keep whole
        head = head[: limit - 1]
    return head + "…"


def _capitalise(text: str) -> str:
    return text[:1].upper() + text[1:] if text else text


def _description(after: str) -> str:
    """The appositive after a name: ``, a scalable framework that …`` → ``scalable framework``."""
    after = after.lstrip()
    if not after.startswith(","):
        return ""
    desc = after[1:].strip()
    desc = _ARTICLE_RE.sub("", desc)
    stop = _DESC_STOP_RE.search(desc)
    if stop:
        desc = desc[: stop.start()]
    if re.match(r"(?:which|that|where|whose)\b", desc):
        return ""
    desc = re.sub(r"\s*\([^()]*\)", "", desc.split(",")[0]).strip()
    return _trim_description(desc)


#: Words that start a trailing clause of a description ("… dataset built from …").
_CLAUSE_STARTERS = {
    "built", "spanning", "including", "using", "covering", "containing",
    "consisting", "comprising", "drawn", "collected", "derived", "targeting", "featuring",
}  # fmt: skip


_PREPOSITIONS = {
    "for",
    "of",
    "in",
    "on",
    "with",
    "via",
    "under",
    "through",
    "across",
    "from",
    "between",
    "into",
    "within",
    "over",
    "without",
    "at",
    "by",
    "as",
}
_KEEP_ED = {"based", "guided", "aligned", "informed"}  # "… based on trees" says what it is


def _trim_description(desc: str) -> str:
    """Keep the head of a description: stop before a trailing participle clause (from the
    fourth word on), at most eight words, no dangling preposition; '' if under two words."""
    words = desc.split()
    for i, word in enumerate(words):
        bare = word.lower().strip(",.;:")
        participle = bare.endswith("ed") and len(bare) > 4 and bare not in _KEEP_ED
        if i >= 3 and (bare in _CLAUSE_STARTERS or participle):
            words = words[:i]
            break
    if len(words) > 8:  # too long: end before the last preposition that leaves 3 words
        words = words[:8]
        cut = max((i for i in range(3, 8) if words[i].lower() in _PREPOSITIONS), default=0)
        if cut:
            words = words[:cut]
    while words and words[-1].lower() in _STOPWORD_END:
        words.pop()
    return " ".join(words) if len(words) >= 2 else ""


_EXPANSION_RE = re.compile(r"^\s*\((?P<long>[^()]{5,90})\)")


def _named(fragment: str) -> str | None:
    """A title from what follows 'we introduce …', when it names something."""
    fragment = _ARTICLE_RE.sub("", _clean(fragment.strip()))
    acronym = _ACRONYM_DEF_RE.match(fragment)
    if acronym and any(ch.isupper() for ch in acronym.group("short")):
        long_name = acronym.group("long").strip()
        if len(long_name.split()) >= 2 and long_name[:1].isupper():
            return f"{acronym.group('short')}: {long_name}"
    phrase = _TITLE_CASE_RE.match(fragment)
    if (
        phrase
        and phrase.group("name").split()[-1][:1].isupper()
        and _NAME_END_RE.match(fragment[phrase.end() :])
    ):
        desc = _description(fragment[phrase.end() :])
        return f"{phrase.group('name')}: {_capitalise(desc)}" if desc else phrase.group("name")
    name = _NAME_RE.match(fragment)
    if name:
        expansion = _EXPANSION_RE.match(name.group("after"))
        if expansion and name.group("name")[:1].isupper():
            long_name = _clean(expansion.group("long"))
            if len(long_name.split()) >= 2 and sum(w[:1].isupper() for w in long_name.split()) >= 2:
                return f"{name.group('name')}: {long_name}"
    if name and _NAME_END_RE.match(name.group("after")):
        token = name.group("name").strip("$")
        first_upper = token[:1].isupper() or token[:1].isdigit()
        inner_upper = any(ch.isupper() for ch in token[1:]) or "-" in token
        if first_upper and (inner_upper or len(token) >= 4) and not token.isdigit():
            desc = _description(name.group("after"))
            return f"{token}: {_capitalise(desc)}" if desc else token
    return None


_INTRO_VERBS = (
    "introduce",
    "propose",
    "present",
    "develop",
    "release",
    "build",
    "design",
    "construct",
    "contribute",
)
_CALLED_WORDS = ("called", "termed", "dubbed", "named", "coined", "we call")
_ABBREVIATIONS = ("et al", "e.g", "i.e", "cf", "vs", "approx", "resp")


_SUBJECT_RE = re.compile(
    r"(?:\bwe|\bthis (?:paper|work)|\bour (?:work|paper))\s+"
    r"(?:(?:also|further|then|first|next|therefore|thus)\s+)?$"
)


def _intro_starts(head: str, lowered: str) -> list[int]:
    """Where 'we propose …'-like phrases start, found with str.find (no regex scan)."""
    starts: list[int] = []
    for verb in _INTRO_VERBS:
        i = lowered.find(verb)
        while i >= 0:
            window = lowered[max(0, i - 40) : i]
            subject = _SUBJECT_RE.search(window)
            if subject is not None:
                starts.append(i - len(window) + subject.start())
            i = lowered.find(verb, i + 1)
    return sorted(starts)


def _contribution(head: str, starts: list[int]) -> str:
    """What 'we propose …' introduces when it has no name: "a unified framework for robust
    domain generalization under …" → "Unified framework for robust domain generalization"."""
    for start in starts:
        match = _INTRO_RE.match(head, start)
        if match is None:
            continue
        desc = _ARTICLE_RE.sub("", _clean(match.group("rest")))
        desc = re.sub(r"\s*\([^()]*\)", "", desc)
        stop = _DESC_STOP_RE.search(desc)
        if stop:
            desc = desc[: stop.start()]
        desc = _trim_description(desc.split(",")[0].split(":")[0])
        if len(desc.split()) >= 3 and not desc.lower().startswith(_VAGUE_STARTS):
            return _capitalise(desc)
    return ""


#: Contributions too vague to stand as a title ("a method that …", "two lessons …").
_VAGUE_STARTS = (
    "to ",
    "on ",
    "in ",
    "method",
    "approach",
    "way",
    "technique",
    "set of",
    "series of",
    "number of",
    "analysis",
    "study",
    "theory",
    "formal model",
    "simple",
    "first",
)


def _first_sentence(head: str) -> str:
    pos = 0
    while True:
        i = head.find(".", pos)
        if i < 0:
            return head
        after = head[i + 1 : i + 2]
        before = head[max(0, i - 6) : i].lower()
        if (
            (not after or after.isspace())
            and not head[i - 1 : i].isupper()
            and not any(before.endswith(a) for a in _ABBREVIATIONS)
        ):
            return head[:i]
        pos = i + 1


def derive_title(source: str) -> str:
    """A short stand-in title for an abstract with no title (the source is sanitised text).

    Prefers the method, benchmark or framework that the abstract introduces; else the first
    clause of its first sentence. At most ``TITLE_MAX`` characters, never cut mid-word.
    Cheap enough for 100,000 abstracts: plain substring checks gate every regex.
    """
    head = source[:1500]
    lowered = head.lower()
    starts = _intro_starts(head, lowered)
    for start in starts:
        match = _INTRO_RE.match(head, start)
        if match is None:
            continue
        rest = match.group("rest")
        title = _named(rest)
        if title is None:
            called = _CALLED_RE.search(rest)
            if called:
                title = _named(called.group("name")) or _capitalise(_clean(called.group("name")))
                before = _trim_description(_ARTICLE_RE.sub("", _clean(rest[: called.start()])))
                if title and ":" not in title and before:  # "a 3D completion framework, called X"
                    title = f"{title}: {_capitalise(before.rstrip(','))}"
        if title:
            return shorten(strip_markup_fast(title))
    contribution = _contribution(head, starts)
    if any(word in lowered for word in _CALLED_WORDS):
        called = _CALLED_RE.search(head)
        if called:
            title = _named(called.group("name"))
            if title:
                return shorten(strip_markup_fast(title))
    if contribution:
        return shorten(strip_markup_fast(contribution))
    sentence = _first_sentence(head)
    clause = _CLAUSE_RE.split(sentence, maxsplit=1)[0]
    lead_in = clause.split(" ", 1)[0].lower() in _LEAD_IN
    if len(clause.split()) < 4 or lead_in:  # too short, or only a lead-in
        clause = sentence
    plain = _clean(strip_markup_fast(clause))
    return shorten(plain) or "(empty abstract)"


def disambiguate(titles: list[str], keys: list[str]) -> list[str]:
    """Make titles distinct: a clash gets more words of its first sentence, then its id.

    Deterministic whatever the order of the input: clashes are resolved in ``keys`` order.
    """
    result = list(titles)
    groups: dict[str, list[int]] = {}
    for i, title in enumerate(result):
        groups.setdefault(title.casefold(), []).append(i)
    taken = set(groups)
    for members in groups.values():
        if len(members) < 2:
            continue
        members.sort(key=lambda i: keys[i])
        for i in members[1:]:
            base = result[i].rstrip("…")
            suffix = f" [{keys[i][:6]}]"
            candidate = shorten(base, TITLE_MAX - len(suffix)) + suffix
            n = 7
            while candidate.casefold() in taken and n <= len(keys[i]):
                suffix = f" [{keys[i][:n]}]"
                candidate = shorten(base, TITLE_MAX - len(suffix)) + suffix
                n += 1
            result[i] = candidate
            taken.add(candidate.casefold())
    return result
