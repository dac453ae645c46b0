"""Citations and reading-list export: BibTeX, plain text, Markdown, CSL-JSON, CSV, JSONL.

Real metadata from the library (title, authors, URL, DOI, year) wins over what the dumps
give; authors are never invented. Every output is sanitised: it will be pasted into shells.
A citation (BibTeX, text, Markdown, CSL-JSON) links only to a URL the reader's `O` would open
(``text.links.web_link``: http(s) with a host, in its printable-ASCII form); CSV and JSON
Lines are the records' data and carry the URL as stored.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from .formats import FORMAT_NAMES
from .library import Library
from .metadata import normalise_doi, venue_year
from .record import PROCEEDINGS, Record, record  # noqa: F401  (re-exported: the citations' API)
from .text import render, sanitise, shown_title, unbrace
from .text.links import LinkRefused, doi_link, web_link


def clean(text: str) -> str:
    """No control characters in anything we emit (newlines and tabs are kept)."""
    return sanitise(text)


# ---------------------------------------------------------------------------------------
# BibTeX
# ---------------------------------------------------------------------------------------

#: BibTeX counts every brace, whatever backslashes precede it (``\}`` ends a field as ``}``
#: does), so a brace that is a character of the text is written as a command with no brace
#: of its own outside an empty, balanced ``{}``.
_TEXT_BRACES = {"{": r"\textbraceleft{}", "}": r"\textbraceright{}"}
_BIB_ESCAPES = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "#": r"\#",
    "_": r"\_",
    **_TEXT_BRACES,
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "$": r"\$",
}
_MATH_SPAN = re.compile(r"(?<!\\)\$[^$]+?(?<!\\)\$")
#: a % after an even number of backslashes (none, or escaped backslashes): not escaped
_BARE_PERCENT = re.compile(r"(?<!\\)((?:\\\\)*)%")


#: a backslash escape (``\{`` is a brace character, ``\\`` a backslash) or a grouping brace,
#: tokenised as ``text.titles.unbrace`` (what every other output shows) tokenises a title
_BRACE_OR_ESCAPE = re.compile(r"\\.|[{}]", re.S)


def _depth_ok(braces: Iterable[str]) -> bool:
    """Whether a run of brace tokens (``{``, ``}``, anything else ignored) pairs up: never a
    ``}`` before its ``{``, none left open."""
    depth = 0
    for ch in braces:
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth < 0:
                return False
    return depth == 0


def _groups_balance(pieces: Sequence[str]) -> bool:
    """Whether the grouping braces of ``pieces`` (the text outside math, in order) pair up
    as LaTeX reads them: escaped braces do not count."""
    return _depth_ok(m.group() for piece in pieces for m in _BRACE_OR_ESCAPE.finditer(piece))


def bibtex_braces_balance(text: str) -> bool:
    """Whether ``text`` is safe inside ``{…}`` as BibTeX (and biber, pybtex) reads it: every
    brace counted, backslash or not."""
    return _depth_ok(text)


def _math_keepable(span: str) -> bool:
    r"""Whether ``$…$`` math can be written as it is: its braces balance both as BibTeX
    counts them (every brace) and as LaTeX and BibTeX readers do (``\}`` is no brace):
    ``${\}$`` balances for BibTeX but leaves a group open in LaTeX."""
    return bibtex_braces_balance(span) and _groups_balance([span])


def bibtex_escape(text: str, *, protect: bool = False) -> str:
    """``text`` as the value of a braced BibTeX field: whatever it holds, the result's braces
    balance as BibTeX counts them, so it can neither end its field (and add fields) nor
    leave the entry open.

    - ``$…$`` math whose braces balance (as BibTeX counts) is kept as written (a bare ``%``
      in it escaped, as LaTeX would read a comment); math whose braces do not balance is
      written as its characters (``\\$``, ``\\textbraceleft{}`` …).
    - Outside math, LaTeX's specials are escaped (``\\`` → ``\\textbackslash{}``, ``%`` →
      ``\\%`` …). When the text's own grouping braces pair up they are the user's grouping
      (``{GAN}``) and stay braces, as every other output reads them (``text.unbrace``);
      otherwise each brace is a character, written ``\\textbraceleft{}`` /
      ``\\textbraceright{}`` (an escaped ``\\{`` always is: ``\\textbackslash{}`` then the brace
      character). ``\\{`` cannot be used for that: BibTeX counts its brace.
    - ``protect`` (titles) wraps acronyms and other capitals a style must not lowercase in
      braces (``{RSE}``, ``{GAN}s``).
    - Runs of whitespace (newlines included) become one space."""
    math = list(_MATH_SPAN.finditer(text))
    plain: list[str] = []
    pos = 0
    for match in math:
        plain.append(text[pos : match.start()])
        pos = match.end()
    plain.append(text[pos:])
    keep_braces = _groups_balance(plain)
    out = [_escape_plain(plain[0], keep_braces, protect, True)]
    for match, piece in zip(math, plain[1:], strict=True):
        formula = match.group()
        if _math_keepable(formula):  # a bare % would comment out the rest in LaTeX
            out.append(_BARE_PERCENT.sub(r"\1\\%", formula))
        else:
            out.append(_escape_chars(formula, keep_braces=False))
        out.append(_escape_plain(piece, keep_braces, protect, False))
    encoded = " ".join("".join(out).split())
    if not bibtex_braces_balance(encoded):  # cannot happen; never risk an open field
        encoded = " ".join(_escape_chars(text, keep_braces=False).split())
    return encoded


# The abstract in BibTeX: its own LaTeX source, not the Unicode rendering (pdfLaTeX cannot
# typeset 𝒟 or ⊗ without extra packages, and ``\textasciicircum{}`` inside math is nonsense).

#: LaTeX the abstract may keep outside math: text styles (their braces count as the user's),
#: escaped specials and accents — anything else with a backslash is printed, not run
_LATEX_KEPT_RE = re.compile(
    r"\\(?P<style>textbf|textit|emph|texttt|textsc|textrm|textsf|textsl|underline|mbox)\{"
    r"|\\(?P<special>[%&#_$])|\\(?P<brace>[{}])"
    r"|\\(?P<accent>[`'^\"~=.](?:[A-Za-z]|\{[A-Za-z]\}))"
    r"|\\(?P<symbol>(?:ldots|dots|textendash|textemdash|LaTeX|TeX)(?![A-Za-z]))(?:\{\})?"
)
#: Markdown emphasis as the dumps write it (``**Resilience**``, ``*regularized*``)
_MD_STRONG_RE = re.compile(r"\*\*(?=\S)([^*]+?)(?<=\S)\*\*")
_MD_EM_RE = re.compile(r"(?<![\w*\\])\*(?=[^\s*])([^*]+?)(?<=[^\s*\\])\*(?![\w*])")
#: commands that read or write files or redefine things: math holding one is not kept
_MATH_UNSAFE_RE = re.compile(
    r"\\(?:input|include|write|immediate|openout|openin|read|def|edef|gdef|xdef|let|catcode|"
    r"csname|newcommand|renewcommand|usepackage|special|directlua|loop)(?![A-Za-z])"
)
_ABSTRACT_SPECIALS = {
    "%": r"\%",
    "&": r"\&",
    "#": r"\#",
    "_": r"\_",
    "$": r"\$",
    "^": r"\textasciicircum{}",
    "\\": r"\textbackslash{}",
    "{": r"\textbraceleft{}",
    "}": r"\textbraceright{}",
}


def bibtex_abstract(text: str) -> str:
    r"""An abstract as LaTeX for BibTeX's ``abstract`` field: its own source — ``$…$`` math
    kept as written (its bare ``%``, ``&``, ``#`` escaped), LaTeX text styles, escapes and
    accents kept, Markdown emphasis as ``\textbf``/``\emph`` — and everything else that
    LaTeX or BibTeX would read as markup escaped: ``%``, ``&``, ``#``, ``_``, ``^``, a lone
    ``$``, any other backslash. The user's braces are kept when they balance, as BibTeX
    counts them, with the text styles' own; else every one is escaped. The field is then
    always one balanced BibTeX value (nothing in it can end it early)."""
    # pieces: (kind, text); kinds: "math", "text" (escaped already), "open", "close" (the
    # braces that are the user's or a style's: kept only if all of them balance)
    pieces: list[tuple[str, str]] = []
    pos = 0
    for math in _MATH_SPAN.finditer(text):
        span = math.group()
        if not _math_keepable(span) or _MATH_UNSAFE_RE.search(span):
            continue
        _abstract_text(text[pos : math.start()], pieces)
        pieces.append(("math", re.sub(r"(?<!\\)([%&#])", r"\\\1", span)))
        pos = math.end()
    _abstract_text(text[pos:], pieces)
    braces = "".join("{" if k == "open" else "}" for k, _ in pieces if k in ("open", "close"))
    keep = bibtex_braces_balance(braces)
    out: list[str] = []
    for kind, piece in pieces:
        if kind == "open" and not keep:
            piece = _escape_abstract_chars(piece)  # "\\textbf{" printed: \textbackslash{}…
        elif kind == "close" and not keep:
            piece = _ABSTRACT_SPECIALS["}"]
        out.append(piece)
    return " ".join("".join(out).split())


def _abstract_text(text: str, pieces: list[tuple[str, str]]) -> None:
    """``text`` (no math) as abstract pieces (see `bibtex_abstract`)."""
    text = _MD_STRONG_RE.sub(r"\\textbf{\1}", text)  # (outside math only: $a*b*c$ is math)
    text = _MD_EM_RE.sub(r"\\emph{\1}", text)
    pos = 0
    for kept in _LATEX_KEPT_RE.finditer(text):
        _abstract_plain(text, pos, kept.start(), pieces)
        if brace := kept.group("brace"):  # \{ is a brace to BibTeX: written as LaTeX's name
            pieces.append(("text", _ABSTRACT_SPECIALS[brace]))
        else:
            pieces.append(("open" if kept.group("style") else "text", kept.group()))
        pos = kept.end()
    _abstract_plain(text, pos, len(text), pieces)


def _abstract_plain(text: str, start: int, end: int, pieces: list[tuple[str, str]]) -> None:
    """``text[start:end]`` escaped; its braces as "open" / "close" pieces."""
    for i in range(start, end):
        ch = text[i]
        if ch in "{}":
            pieces.append(("text", _escape_abstract_chars(text, start, i)))
            pieces.append(("open" if ch == "{" else "close", ch))
            start = i + 1
    pieces.append(("text", _escape_abstract_chars(text, start, end)))


def _escape_abstract_chars(text: str, start: int = 0, end: int | None = None) -> str:
    out: list[str] = []
    for i in range(start, len(text) if end is None else end):
        ch = text[i]
        if ch == "~":  # a tie between two words (StarCraft~II) stays one; "~140K" is "about"
            tie = 0 < i < len(text) - 1 and text[i - 1].isalnum() and text[i + 1].isalnum()
            out.append("~" if tie else r"\textasciitilde{}")
        else:
            out.append(_ABSTRACT_SPECIALS.get(ch, ch))
    return "".join(out)


_WORD_RE = re.compile(r"[^\W\d_]+(?:[-'’][^\W\d_]+)*|\d+")
_ACRONYM_PLURAL_RE = re.compile(r"^([A-Z][A-Z0-9]+)(s)$")


def _escape_plain(text: str, keep_braces: bool, protect: bool, first: bool) -> str:
    if not protect:  # words and the gaps between them are escaped alike
        return _escape_chars(text, keep_braces)
    out: list[str] = []
    depth = 0
    title_case = _title_case(text) if protect else False
    pos = 0
    index = 0 if first else 1
    last = ""  # the last character before the current word that is not a space
    for match in _WORD_RE.finditer(text):
        gap = text[pos : match.start()]
        out.append(_escape_chars(gap, keep_braces))
        if keep_braces:
            depth += _depth_change(gap)
        if stripped := gap.rstrip():
            last = stripped[-1]
        word = match.group()
        sentence_start = index == 0 or last in _SENTENCE_ENDS
        last = word[-1]
        if protect and depth == 0 and _needs_protection(word, title_case, sentence_start):
            plural = _ACRONYM_PLURAL_RE.match(word)
            out.append(f"{{{plural.group(1)}}}s" if plural else f"{{{word}}}")
        else:
            out.append(_escape_chars(word, keep_braces))
        pos = match.end()
        index += 1
    out.append(_escape_chars(text[pos:], keep_braces))
    return "".join(out)


_SENTENCE_ENDS = frozenset(":.?!")
_ESCAPE_TABLE = str.maketrans(_BIB_ESCAPES)
_ESCAPE_TABLE_KEEP_BRACES = str.maketrans({k: v for k, v in _BIB_ESCAPES.items() if k not in "{}"})
_ESCAPE_PAIR = re.compile(r"\\.", re.S)


def _depth_change(text: str) -> int:
    """How far ``text``'s grouping braces (not escaped ones) change the depth."""
    change = 0
    for match in _BRACE_OR_ESCAPE.finditer(text):
        if match.group() == "{":
            change += 1
        elif match.group() == "}":
            change -= 1
    return change


def _escape_chars(text: str, keep_braces: bool) -> str:
    """``text`` with LaTeX's specials escaped; its braces stay braces only with
    ``keep_braces``, and a backslash-escaped brace is always the brace character."""
    table = _ESCAPE_TABLE_KEEP_BRACES if keep_braces else _ESCAPE_TABLE
    if "\\" not in text:
        return text.translate(table)
    out: list[str] = []
    pos = 0
    for match in _ESCAPE_PAIR.finditer(text):
        out.append(text[pos : match.start()].translate(table))
        escaped = match.group()[1]
        out.append(_BIB_ESCAPES["\\"] + _TEXT_BRACES.get(escaped, escaped.translate(table)))
        pos = match.end()
    out.append(text[pos:].translate(table))
    return "".join(out)


_SMALL_WORDS = {
    "a", "an", "and", "as", "at", "but", "by", "for", "from", "in", "into", "is", "of", "on",
    "or", "the", "to", "via", "vs", "with", "without", "under", "over", "are", "be", "its",
}  # fmt: skip


def _title_case(text: str) -> bool:
    """Most longer words capitalised: a Title Case title, whose capitals a sentence-case
    style may lower (so only acronyms and names-with-inner-capitals are protected)."""
    words = [w for w in _WORD_RE.findall(text) if w[0].isalpha() and w.lower() not in _SMALL_WORDS]
    if len(words) < 3:
        return True
    capitalised = sum(1 for w in words if w[0].isupper())
    return capitalised / len(words) >= 0.6


def _needs_protection(word: str, title_case: bool, sentence_start: bool) -> bool:
    if len(word) < 2 or not word[0].isalpha():
        return False
    if any(ch.isupper() for ch in word[1:]):  # RSE, GANs, ImageNet, LiDAR
        return True
    # a capitalised word inside a sentence-case title is a name (Gaussian, Boolean, Shapley)
    return word[0].isupper() and not title_case and not sentence_start


_KEY_STOP = {"a", "an", "the", "of", "for", "and", "on", "in", "to", "with", "via", "we", "is"}


def bibtex_key(rec: Record, taken: set[str] | None = None) -> str:
    """``lastname2026firstword`` when the authors are known (a clash gets the paper id's
    first digits: stable whatever else is exported), else ``venue2026TwoWords_id6``."""
    if rec.authors:
        given, family = split_name(rec.authors[0])
        last = re.sub(r"[^a-z]", "", _ascii(family.split()[-1] if family else given).lower())
        words = [
            w.lower()
            for w in re.findall(r"[A-Za-z0-9]+", _ascii(_strip_math(rec.title)))
            if w.lower() not in _KEY_STOP
        ]
        base = f"{last or 'anon'}{rec.year or ''}{words[0] if words else 'untitled'}"
        key = base
        length = 4
        while taken is not None and key in taken and length <= len(rec.id):
            key = f"{base}_{rec.id[:length]}"
            length += 1
        if taken is not None:
            taken.add(key)
        return key
    venue = re.sub(r"[^a-z0-9]", "", ((rec.venue or "").split() or ["paper"])[0].lower()) or "paper"
    words = [
        w
        for w in re.findall(r"[A-Za-z0-9]+", _ascii(_strip_math(rec.title)))
        if w.lower() not in _KEY_STOP
    ]
    title_part = "".join(w[:1].upper() + w[1:].lower() for w in words[:2]) or "Untitled"
    year = str(rec.year) if rec.year and str(rec.year) not in venue else ""
    length = 6
    key = f"{venue}{year}{title_part}_{rec.id[:length]}"
    while taken is not None and key in taken and length < len(rec.id):
        length += 1
        key = f"{venue}{year}{title_part}_{rec.id[:length]}"
    if taken is not None:
        taken.add(key)
    return key


def _strip_math(text: str) -> str:
    return _MATH_SPAN.sub(" ", text)


def _ascii(text: str) -> str:
    import unicodedata

    return unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")


_PARTICLES = {
    "de", "da", "del", "della", "der", "den", "des", "di", "du", "la", "le", "van", "von",
    "ten", "ter", "dos", "das", "do", "y", "al", "el", "bin", "ibn", "zu", "af", "av",
}  # fmt: skip
_SUFFIXES = {"jr", "jr.", "sr", "sr.", "ii", "iii", "iv"}


def split_name(name: str) -> tuple[str, str]:
    """(given, family) of "First Last", "First de la Last" or "Last, First"."""
    name = " ".join(name.split())
    if "," in name:
        family, _, given = name.partition(",")
        rest = given.strip()
        if rest.lower() in _SUFFIXES:  # "First Last, Jr."
            given, family = split_name(family)
            return given, f"{family}, {rest}"
        return rest, family.strip()
    parts = name.split(" ")
    if len(parts) == 1:
        return "", name
    for i in range(1, len(parts) - 1):
        if parts[i].lower() in _PARTICLES:
            return " ".join(parts[:i]), " ".join(parts[i:])
    return " ".join(parts[:-1]), parts[-1]


def _initials(given: str) -> str:
    out: list[str] = []
    for part in given.split():
        pieces = [p for p in part.split("-") if p]
        if not pieces:
            continue
        if part.endswith(".") and len(part) <= 3:
            out.append(part)
            continue
        out.append("-".join(p[0] + "." for p in pieces))
    return " ".join(out)


def short_author(name: str) -> str:
    """ "Ada Lovelace" → "A. Lovelace"; "María de la Cruz" → "M. de la Cruz"."""
    given, family = split_name(name)
    initials = _initials(given)
    return f"{initials} {family}" if initials else family


def author_list(authors: Sequence[str]) -> str:
    """ "A. Lovelace", "A. Lovelace and J. Müller", "A. Lovelace, J. Müller, and M. de la
    Cruz"."""
    names = [short_author(a) for a in authors]
    if len(names) <= 2:
        return " and ".join(names)
    return ", ".join(names[:-1]) + ", and " + names[-1]


def bibtex_person(name: str) -> str:
    """ "Last, First" (what BibTeX parses unambiguously, particles included), encoded for a
    BibTeX ``author`` field. A name with the word "and" in it (``Procter and Gamble``) is
    braced whole, as BibTeX would otherwise split it into two authors; a given name with a
    comma in it is braced, as a fourth comma-separated part is an error to BibTeX."""
    name = " ".join(name.split())
    if any(word.lower() == "and" for word in name.split(" ")):
        return f"{{{bibtex_escape(name)}}}"
    given, family = split_name(name)
    if not given:
        return bibtex_escape(family)
    encoded = bibtex_escape(given)
    return f"{bibtex_escape(family)}, {f'{{{encoded}}}' if ',' in encoded else encoded}"


def bibtex_authors(authors: Sequence[str]) -> str:
    """The ``author`` field's value: each name through ``bibtex_person``, joined by "and"
    (names with nothing to print left out)."""
    return " and ".join(p for a in authors if (p := bibtex_person(a)))


def citation_title(rec: Record) -> str:
    """The title as cited: a derived title is never cut with "…" — it runs on to the end
    of its clause in the abstract."""
    title = rec.title
    if not rec.title_derived or "…" not in title:
        return title
    head = re.sub(r"\s*\[[0-9a-f]+\]$", "", title).rstrip("…").rstrip()
    text = " ".join(rec.abstract.split())
    at = text.find(head)
    if at < 0:
        return head
    rest = text[at + len(head) :]
    stop = re.search(r"[.;:!?](?:\s|$)", rest)
    return (head + (rest[: stop.start()] if stop else rest)).rstrip(" ,")


def bibtex_entry(rec: Record, key: str, *, with_abstract: bool = False) -> str:
    title = citation_title(rec)
    venue_known = bool(rec.booktitle)
    kind = "misc" if rec.eprint and not venue_known else "inproceedings"
    fields: list[tuple[str, str | Sequence[str]]] = [("title", title)]
    if bibtex_authors(rec.authors):
        fields.append(("author", rec.authors))
    if rec.booktitle:
        fields.append(("booktitle", rec.booktitle))
    if rec.year:
        fields.append(("year", str(rec.year)))
    if rec.eprint:
        fields.append(("eprint", rec.eprint))
        fields.append(("archivePrefix", "arXiv"))
        if rec.primary_class:
            fields.append(("primaryClass", rec.primary_class))
    url = web_url(rec.url) or (
        web_url(f"https://arxiv.org/abs/{rec.eprint}") if rec.eprint else None
    )
    if url:
        fields.append(("url", url))
    doi = _valid_doi(rec.doi)
    if doi:
        fields.append(("doi", doi))
    if rec.title_derived:
        fields.append(("note", f"Title derived from the abstract; abstract-reader id {rec.id}"))
    if with_abstract:
        fields.append(("abstract", bibtex_abstract(rec.abstract)))
        if rec.tags:
            fields.append(("keywords", ", ".join(rec.tags)))
    width = max(len(name) for name, _ in fields)
    body = ",\n".join(
        f"  {name.ljust(width)} = {{{bibtex_value(name, value)}}}" for name, value in fields
    )
    return clean(f"@{kind}{{{key},\n{body}\n}}")


def _valid_doi(doi: str | None) -> str | None:
    if not doi:
        return None
    try:
        return normalise_doi(doi)
    except ValueError:
        return None


def web_url(url: str | None) -> str | None:
    """``url`` as a citation links to it: the form the reader's `O` opens (http or https
    with a host, non-ASCII percent-encoded), or None when `O` would refuse it
    (``javascript:``, ``file:``, no host, control characters …)."""
    if not url:
        return None
    try:
        return web_link(url)
    except LinkRefused:
        return None


def doi_url(doi: str | None) -> str | None:
    """The doi.org link of a valid DOI (as ``web_url`` gives it), else None."""
    valid = _valid_doi(doi)
    return web_url(doi_link(valid)) if valid else None


#: fields whose value is an identifier, not text: LaTeX escapes would change it
_BIB_VERBATIM = frozenset({"url", "doi", "eprint"})


def bibtex_value(name: str, value: str | Sequence[str]) -> str:
    """The one encoder of every BibTeX field's value (what goes between the field's braces):
    text through ``bibtex_escape`` (titles with capitals protected), a list of names
    (``author``) through ``bibtex_authors``, identifiers (``url``, ``doi``, ``eprint``) with
    ``{``, ``}`` and ``\\`` percent-encoded. Whatever the value, its braces balance as BibTeX
    counts them: it can neither end its field (and add fields) nor its entry."""
    if not isinstance(value, str):
        return bibtex_authors(value)
    if name in _BIB_VERBATIM:
        encoded = value.replace("{", "%7B").replace("}", "%7D").replace("\\", "%5C")
        return " ".join(encoded.split())
    if name == "abstract":  # LaTeX already, by `bibtex_abstract` (balanced by construction)
        return value if bibtex_braces_balance(value) else bibtex_escape(value)
    return bibtex_escape(value, protect=name == "title")


# ---------------------------------------------------------------------------------------
# Other formats
# ---------------------------------------------------------------------------------------


def _venue_year(rec: Record) -> str:
    return venue_year(rec.venue, rec.year)


def _plain_title(rec: Record) -> str:
    """The title as text and Markdown cite it: BibTeX's protection braces dropped (``{GAN}``
    → ``GAN``; the braces of ``$…$`` math kept for it), math and emphasis rendered."""
    title = shown_title(citation_title(rec))
    return render(title).text if ("$" in title or "*" in title) else title


#: CSL's mark for text a style must not change the case of (citeproc-js, pandoc, Zotero)
NOCASE = ('<span class="nocase">', "</span>")


def csl_title(rec: Record) -> str:
    """The title in CSL-JSON: each of the user's ``{…}`` groups becomes CSL's
    ``<span class="nocase">…</span>``, so a sentence-case style keeps ``GAN`` or ``Gaussian``
    as BibTeX's braces would, and none prints a brace."""
    return unbrace(clean(citation_title(rec)), *NOCASE)


def _link(rec: Record) -> str | None:
    return doi_url(rec.doi) or web_url(rec.url)


def plain_text(rec: Record) -> str:
    """ "A. Lovelace and J. Müller (2026). Title. In Booktitle. https://doi.org/…"."""
    title = _plain_title(rec)
    parts: list[str] = []
    if rec.authors:
        parts.append(f"{author_list(rec.authors)} ({rec.year or 'n.d.'}).")
        parts.append(f"{title}.")
    else:
        parts.append(f"{title}{' [title derived from the abstract]' if rec.title_derived else ''}.")
        parts.append(f"({rec.year or 'n.d.'}).")
    if rec.booktitle:
        parts.append(f"In {rec.booktitle}.")
    elif rec.eprint:
        parts.append(f"arXiv:{rec.eprint}.")
    link = _link(rec)
    if link:
        parts.append(link)
    parts.append(f"[abstract-reader:{rec.id[:12]}]")
    return clean(" ".join(parts))


_MD_SPECIAL = re.compile(r"([\\`*_\[\]<>|#~&])")  #: & too: `&lt;` would show as `<`


def markdown_link_target(url: str) -> str:
    """A ``web_url`` as a Markdown link's target: its parentheses percent-encoded, as a
    lone ``(`` or ``)`` would end the link early or keep it from being one (``web_link``
    leaves no space, ``<``, ``>`` or backslash)."""
    return url.replace("(", "%28").replace(")", "%29")


#: a ``$…$`` math span of a title (a ``\$`` is a dollar, not a delimiter)
_TITLE_MATH = re.compile(r"(?<!\\)\$[^$]+?(?<!\\)\$")


def _markdown_title(rec: Record) -> str:
    """The title in Markdown: its math converted as `_plain_title` converts it, and the rest
    kept as typed, escaped — a title with ``*em*`` is ``\\*em\\*``, as the digest writes it,
    not the emphasis ``em`` (which lost the user's asterisks)."""
    title = shown_title(citation_title(rec))
    pieces: list[str] = []
    pos = 0
    for math in _TITLE_MATH.finditer(title):
        pieces += [title[pos : math.start()], render(math.group()).text]
        pos = math.end()
    pieces.append(title[pos:])
    return "".join(_MD_SPECIAL.sub(r"\\\1", piece) for piece in pieces)


def markdown(rec: Record) -> str:
    title = _markdown_title(rec)
    link = _link(rec)
    head = f"[{title}]({markdown_link_target(link)})" if link else f"**{title}**"
    bits = [head]
    if rec.authors:
        bits.append(_MD_SPECIAL.sub(r"\\\1", author_list(rec.authors)))
    # the venue and eprint as typed too (a venue is the dumps' or `match`'s: `*`, `[…](…)`
    # or `&lt;` in it were read as Markdown)
    if _venue_year(rec):
        bits.append(_MD_SPECIAL.sub(r"\\\1", _venue_year(rec)))
    elif rec.eprint:
        bits.append(_MD_SPECIAL.sub(r"\\\1", f"arXiv:{rec.eprint}"))
    if rec.title_derived:
        bits.append("*derived title*")
    bits.append(f"`{rec.id[:12]}`")
    return clean("- " + " — ".join(bits))


def _csl_name(name: str) -> dict[str, str]:
    given, family = split_name(name)
    if not given:
        return {"literal": family}
    first = family.split(" ")[0]
    if first.lower() in _PARTICLES and " " in family:
        rest = family[len(first) :].strip()
        particle = first
        while rest.split(" ")[0].lower() in _PARTICLES and " " in rest:
            word = rest.split(" ")[0]
            particle, rest = f"{particle} {word}", rest[len(word) :].strip()
        return {"family": rest, "given": given, "non-dropping-particle": particle}
    return {"family": family, "given": given}


def csl_item(rec: Record, *, with_abstract: bool = False) -> dict[str, Any]:
    """One CSL-JSON item; ``with_abstract``: also its abstract (rendered: CSL is plain
    text) and its tags as ``keyword``, as BibTeX carries them."""
    item: dict[str, Any] = {
        "id": rec.id,
        "type": "paper-conference",
        "title": csl_title(rec),
    }
    if rec.authors:
        item["author"] = [_csl_name(clean(a)) for a in rec.authors]
    if rec.booktitle:
        item["container-title"] = rec.booktitle
    if rec.venue:
        item["event-title"] = _venue_year(rec)
    if rec.year:
        item["issued"] = {"date-parts": [[rec.year]]}
    url = web_url(rec.url)
    if url:
        item["URL"] = url
    if _valid_doi(rec.doi):
        item["DOI"] = clean(_valid_doi(rec.doi) or "")
    if rec.title_derived:
        item["note"] = "Title derived from the abstract by abstract-reader"
    if with_abstract:
        item["abstract"] = render(rec.abstract).text
        if rec.tags:
            item["keyword"] = ", ".join(clean(t) for t in rec.tags)
    return item


def json_record(rec: Record) -> dict[str, Any]:
    return {
        "id": rec.id,
        "title": shown_title(rec.title),
        "title_derived": rec.title_derived,
        "venue": rec.venue,
        "year": rec.year,
        "authors": list(rec.authors),
        "url": rec.url,
        "doi": rec.doi,
        "eprint": rec.eprint,
        "primary_class": rec.primary_class,
        "metadata_from": rec.origin,
        "provenance": (
            {"source": rec.provenance.source, "record": rec.provenance.record}
            if rec.provenance is not None
            else None
        ),
        "sources": list(rec.sources),
        "tags": list(rec.tags),
        "bookmarked": rec.bookmarked,
        "read": rec.read,
        "note": rec.note,
        "abstract": rec.abstract,
        "text": render(rec.abstract).text,
    }


CSV_FIELDS = [
    "id",
    "title",
    "title_derived",
    "venue",
    "year",
    "authors",
    "url",
    "doi",
    "tags",
    "bookmarked",
    "read",
    "note",
    "abstract",
]


def format_records(records: Sequence[Record], fmt: str, *, with_abstract: bool = False) -> str:
    """Citations / an export of ``records`` in ``fmt``. Keys are unique within one call.
    ``with_abstract``: BibTeX and CSL-JSON also carry the abstract and the tags (BibTeX's
    ``keywords``, CSL's ``keyword``); CSV and JSON Lines always do, text and Markdown
    never (`abstract_flag_unused`)."""
    if fmt == "bibtex":
        taken: set[str] = set()
        return (
            "\n\n".join(
                bibtex_entry(r, bibtex_key(r, taken), with_abstract=with_abstract) for r in records
            )
            + "\n"
        )
    if fmt == "text":
        return "\n".join(plain_text(r) for r in records) + "\n"
    if fmt == "markdown":
        return "\n".join(markdown(r) for r in records) + "\n"
    if fmt == "csl-json":
        items = [csl_item(r, with_abstract=with_abstract) for r in records]
        return json.dumps(items, ensure_ascii=False, indent=2) + "\n"
    if fmt == "jsonl":
        return "".join(json.dumps(json_record(r), ensure_ascii=False) + "\n" for r in records)
    if fmt == "csv":
        buffer = io.StringIO()
        writer = csv.DictWriter(buffer, fieldnames=CSV_FIELDS, lineterminator="\n")
        writer.writeheader()
        for r in records:
            row = json_record(r)
            row["authors"] = "; ".join(r.authors)
            row["tags"] = "; ".join(r.tags)
            writer.writerow(
                {k: _csv_cell(clean(str(row[k]))) if row[k] is not None else "" for k in CSV_FIELDS}
            )
        return buffer.getvalue()
    raise ValueError(f"unknown format {fmt!r}")


#: the formats whose output ``with_abstract`` changes
ABSTRACT_FORMATS = ("bibtex", "csl-json")
#: the formats that always carry the abstract (the records' data)
ALWAYS_ABSTRACT = ("csv", "jsonl")


def abstract_flag_unused(fmt: str, flag: bool) -> str | None:
    """What to say when ``--abstract`` (``flag`` True) or ``--no-abstract`` was given for a
    format it does not change (one line), else None."""
    if fmt in ABSTRACT_FORMATS:
        return None
    option = "--abstract" if flag else "--no-abstract"
    name = FORMAT_NAMES.get(fmt, fmt)
    if fmt in ALWAYS_ABSTRACT:
        return f"note: {option} has no effect on {name}: it always carries the abstract"
    return f"note: {option} has no effect on {name}: only BibTeX and CSL-JSON carry the abstract"


def abstract_setting(library: Library) -> bool:
    """The library's ``cite_abstract`` setting: whether BibTeX and CSL-JSON carry abstracts
    and tags."""
    return (library.setting("cite_abstract") or "off").lower() in ("on", "true", "1", "yes")


def export_to_file(
    records: Sequence[Record], fmt: str, path: Path, *, force: bool = False, with_abstract: bool
) -> None:
    """An export of ``records`` in ``fmt`` written to ``path`` under outfile.py's rule
    (``export -o`` and the reader's export dialog). Raises ``outfile.OutputError``."""
    from .outfile import write_file

    write_file(path, format_records(records, fmt, with_abstract=with_abstract), force=force)


def _csv_cell(value: str) -> str:
    """A cell a spreadsheet would run as a formula (``=``, ``+``, ``-``, ``@``, tab, CR at the
    start: text from a dump or a tag can be anything) is kept as text with a leading ``'``,
    as OWASP advises for CSV exports."""
    if value[:1] in ("=", "+", "-", "@", "\t", "\r"):
        return "'" + value
    return value


def write_atomic(path: Path, text: str, *, force: bool = False) -> None:
    """Write via a temporary file and rename; refuse to overwrite without ``force``, refuse
    non-file targets, write through symbolic links only with ``force`` (see outfile.py)."""
    from .outfile import write_output

    write_output(path, text, force=force)
