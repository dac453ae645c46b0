"""BibTeX (Zotero / Better BibTeX exports with ``abstract``), via bibtexparser v2: LaTeX in
fields decoded to Unicode (math kept), braces removed for display, authors read as people.
A bare ``%`` in a field is a percent sign, as its author meant (BibTeX has no comments inside
a value), not a LaTeX comment that would cut the rest of the field away."""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from . import (
    Item,
    RecordProblem,
    SourceError,
    arxiv_id_in,
    clean_text,
    clean_url,
    is_preprint_venue,
    read_text,
    record,
    year_in,
)

#: A % after an even number of backslashes (none, or escaped backslashes) is not escaped.
_BARE_PERCENT_RE = re.compile(r"(?<!\\)((?:\\\\)*)%")
_VENUE_FIELDS = ("booktitle", "journal", "journaltitle", "eventtitle", "publisher", "howpublished")


def _person(parts: object) -> str | None:
    first = getattr(parts, "first", None)
    if first is None:
        return clean_text(parts)
    words = [*parts.first, *parts.von, *parts.last]  # type: ignore[attr-defined]
    name = clean_text(" ".join(words))
    jr = clean_text(" ".join(parts.jr))  # type: ignore[attr-defined]
    return f"{name}, {jr}" if name and jr else name


def _quote_characters(value: str) -> str:
    r"""A quoted field's ``\"`` outside braces as the ``"`` it stands for (the escaped
    delimiter, as the parser read it), not LaTeX's umlaut accent, which took the next letter
    (``"Quote \" title"`` read as ``Quote ẗitle``). Inside braces (``{\"u}``) it is the
    accent, as BibTeX writes one in a quoted field."""
    out: list[str] = []
    depth = 0
    pos = 0
    while pos < len(value):
        char = value[pos]
        if char == "\\" and pos + 1 < len(value):
            pair = value[pos : pos + 2]
            out.append('"' if pair == '\\"' and depth == 0 else pair)
            pos += 2
            continue
        if char == "{":
            depth += 1
        elif char == "}" and depth:
            depth -= 1
        out.append(char)
        pos += 1
    return "".join(out)


def _literal_characters() -> Any:
    """A middleware (run before LaTeX decoding) that escapes every bare % in a field and
    turns a quoted field's escaped ``\"`` into the quote character."""
    from bibtexparser.middlewares.middleware import BlockMiddleware

    class LiteralCharacters(BlockMiddleware):
        def transform_entry(self, entry: Any, library: Any) -> Any:
            enclosings = entry.parser_metadata.get("removed_enclosing") or {}
            for found in entry.fields:
                if not isinstance(found.value, str):
                    continue
                if "%" in found.value:
                    found.value = _BARE_PERCENT_RE.sub(r"\1\\%", found.value)
                if enclosings.get(found.key) == '"' and '\\"' in found.value:
                    found.value = _quote_characters(found.value)
            return entry

    return LiteralCharacters()


_AND_RE = re.compile(r"[ \t\r\n]+and[ \t\r\n]+", re.I)


def split_people(names: str) -> list[str]:
    """The names of a BibTeX name list (``author``): split at each "and" between whitespace
    outside braces, as BibTeX splits (``{Procter and Gamble}`` is one name). bibtexparser's
    own splitter mis-counts a backslash escape after a space (``A and \\"Uber, B`` lost a
    letter: ``"Uber, B``), so this one is used, before LaTeX decoding drops the braces."""
    masked = []
    depth = 0
    for char in names:
        if char == "{":
            depth += 1
        masked.append(char if depth == 0 and char not in "{}" else "_")
        if char == "}" and depth:
            depth -= 1
    out: list[str] = []
    pos = 0
    for match in _AND_RE.finditer("".join(masked)):
        out.append(names[pos : match.start()])
        pos = match.end()
    out.append(names[pos:])
    return [name.strip() for name in out if name.strip()]


def _co_authors() -> Any:
    """bibtexparser's SeparateCoAuthors with ``split_people`` as its splitter."""
    from bibtexparser import middlewares as mw

    class CoAuthors(mw.SeparateCoAuthors):
        def _transform_field_value(self, name: str) -> list[str]:
            return split_people(name)

    return CoAuthors()


def _latex_decoding() -> Any:
    r"""bibtexparser's LaTeX decoding (math kept as written, braces dropped) that also knows
    ``\textbraceleft`` and ``\textbraceright``: the brace characters, as abstract-reader's
    own BibTeX writes a brace that does not pair up (pylatexenc dropped them); and
    ``\textasciicircum`` as ``^``, the character it names (pylatexenc gave U+02C6)."""
    from bibtexparser import middlewares as mw
    from bibtexparser.model import MiddlewareErrorBlock
    from pylatexenc.latex2text import (
        LatexNodes2Text,
        MacroTextSpec,
        get_default_latex_context_db,
    )

    context = get_default_latex_context_db()
    context.add_context_category(
        "abstract-reader",
        prepend=True,
        macros=[
            MacroTextSpec("url", simplify_repl="%s"),  # as bibtexparser's own: no < … >
            MacroTextSpec("textbraceleft", simplify_repl="{"),
            MacroTextSpec("textbraceright", simplify_repl="}"),
            MacroTextSpec("textasciicircum", simplify_repl="^"),  # (was "ˆ", U+02C6)
        ],
    )
    decoder = LatexNodes2Text(latex_context=context, keep_braced_groups=False, math_mode="verbatim")

    class LatexDecoding(mw.LatexDecodingMiddleware):
        """Also decodes the names of a list of people (split before decoding)."""

        def transform_entry(self, entry: Any, library: Any) -> Any:
            errors: list[str] = []
            for found in entry.fields:
                if isinstance(found.value, list):
                    for parts in found.value:
                        for kind in ("first", "von", "last", "jr"):
                            if isinstance(words := getattr(parts, kind, None), list):
                                setattr(parts, kind, self._transform_all_strings(words, errors))
            if any(errors):
                return MiddlewareErrorBlock(entry, ValueError("; ".join(e for e in errors if e)))
            return super().transform_entry(entry, library)

    return LatexDecoding(decoder=decoder)


#: Braces nested deeper than this are refused before LaTeX decoding (pylatexenc recurses per
#: group: ~250 levels exhausted Python's stack; real BibTeX nests a handful)
MAX_BRACE_DEPTH = 100
_TOO_DEEP = f"braces nested more than {MAX_BRACE_DEPTH} deep"


def _brace_depth(text: str) -> int:
    depth = deepest = 0
    for char in text:
        if char == "{":
            depth += 1
            deepest = max(deepest, depth)
        elif char == "}" and depth:
            depth -= 1
    return deepest


def _too_deep(value: object) -> bool:
    return (
        isinstance(value, str)
        and value.count("{") > MAX_BRACE_DEPTH
        and _brace_depth(value) > MAX_BRACE_DEPTH
    )


def _nesting_guard() -> Any:
    """A middleware (run first) that turns an entry or @string whose braces nest too deeply
    into a failed block, before the LaTeX decoder recurses into them."""
    from bibtexparser.middlewares.middleware import BlockMiddleware
    from bibtexparser.model import MiddlewareErrorBlock

    class NestingGuard(BlockMiddleware):
        def transform_entry(self, entry: Any, library: Any) -> Any:
            if any(_too_deep(found.value) for found in entry.fields):
                return MiddlewareErrorBlock(entry, ValueError(_TOO_DEEP))
            return entry

        def transform_string(self, string: Any, library: Any) -> Any:
            if _too_deep(string.value):
                return MiddlewareErrorBlock(string, ValueError(_TOO_DEEP))
            return string

    return NestingGuard()


def _failure(bad: Any) -> str:
    """Why a block failed, in one line."""
    error = str(getattr(bad, "error", "") or "").strip()
    if "maximum recursion depth" in error:  # (what the guard did not foresee)
        return "LaTeX nested too deeply to decode"
    return error.splitlines()[0] if error else "cannot be parsed (unbalanced braces?)"


def read(path: Path) -> Iterator[Item]:
    from bibtexparser import middlewares as mw
    from bibtexparser.entrypoint import parse_string

    text = read_text(path)
    logging.getLogger("bibtexparser").setLevel(logging.CRITICAL)  # failures are reported here
    library = parse_string(
        text,
        append_middleware=[
            _nesting_guard(),
            _literal_characters(),
            # names split before decoding, which drops the braces that keep
            # "{Procter and Gamble}" one name
            _co_authors(),
            mw.SplitNameParts(),
            _latex_decoding(),
        ],
    )
    if not library.entries and not library.failed_blocks:
        raise SourceError("no BibTeX entries")
    name = path.name
    items: list[Item] = []
    blocks: list[tuple[int, Any, Any]] = [
        (b.start_line or 0, None, b) for b in library.failed_blocks
    ]
    blocks += [(e.start_line or 0, e, None) for e in library.entries]
    for index, (start, entry, bad) in enumerate(sorted(blocks, key=lambda t: t[0]), 1):
        line = start + 1
        if entry is None:
            bad_key = clean_text(getattr(getattr(bad, "ignore_error_block", None), "key", None))
            where = f"entry {index} ({bad_key + ', ' if bad_key else ''}line {line})"
            items.append(RecordProblem(name, where, _failure(bad)))
            continue
        fields = entry.fields_dict
        key = clean_text(entry.key) or f"entry{index}"

        def field(name: str, fields: dict[str, Any] = fields) -> object:
            found = fields.get(name)
            return getattr(found, "value", None)

        title = clean_text(field("title"))
        if not title:
            items.append(RecordProblem(name, f"entry {index} ({key}, line {line})", "no title"))
            continue
        venues = [v for f in _VENUE_FIELDS if (v := clean_text(field(f)))]
        # "journal = {arXiv preprint arXiv:2501.01234}" names no venue, but the eprint
        preprint = next((v for v in venues if is_preprint_venue(v)), None)
        venue = next((v for v in venues if not is_preprint_venue(v)), None)
        eprint = clean_text(field("eprint"))
        archive = (clean_text(field("archiveprefix")) or "").lower()
        if not eprint and preprint:
            eprint = arxiv_id_in(preprint) or arxiv_id_in(clean_text(field("volume")))
        items.append(
            record(
                "bibtex",
                key,
                name,
                index,
                title,
                authors=field("author"),
                person=_person,
                year=year_in(clean_text(field("year")) or clean_text(field("date"))),
                venue=venue,
                url=clean_url(field("url")),
                doi=field("doi"),
                abstract=field("abstract"),
                eprint=eprint if eprint and archive in ("arxiv", "") else None,
                primary_class=field("primaryclass"),
            )
        )
    return iter(items)
