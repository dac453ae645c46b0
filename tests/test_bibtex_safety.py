"""BibTeX output is valid whatever the titles, names and notes hold, and no value can end its
field or its entry (QA s17 finding 2): each entry parses back — with pybtex, which counts
braces as BibTeX and biber do, and with the reader's own .bib source — into exactly one entry
with exactly the fields written, and the title reads back as the title shown elsewhere."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pybtex.database import parse_string as pybtex_parse

from abstract_reader.cite import Record, bibtex_value, format_records
from abstract_reader.sources import MetaRecord, bib
from abstract_reader.text import sanitise, shown_title, unbrace

PAPER_ID = "0123456789abcdef0123"

#: what breaks BibTeX, LaTeX or an author list, drawn often among arbitrary characters
_HOSTILE = [
    "{", "}", "{", "}", "\\", '"', "@", "%", ",", "=", "$", "#", "&", "_", "~", "^", "\n",
    "\t", " ", " and ", "And", "\\{", "\\}", "\\\\", '\\"', "}, note = {", '", x = "', "@misc{",
    "{GAN}", "$x^{2}$", "$", "Ünï", "–", "\r\n", "\x1b[31m", "\u202e", "\x00",
]  # fmt: skip
_text = st.lists(
    st.one_of(st.sampled_from(_HOSTILE), st.characters(exclude_categories=("Cs",))),
    max_size=30,
).map("".join)


def _one_line(text: str) -> str:
    """Text as both sides put it on one line: whitespace runs one space, then sanitised."""
    return sanitise(" ".join(text.split()))


def _entry(
    title: str, authors: tuple[str, ...], venue: str, abstract: str, tags: tuple[str, ...]
) -> tuple[str, Record]:
    rec = Record(
        id=PAPER_ID,
        title=title,
        title_derived=False,
        venue=venue,
        year=2026,
        authors=authors,
        url="https://example.org/paper?a=1&b=2",
        doi="10.1000/x_y",
        abstract=abstract,
        tags=tags,
        eprint="2601.00001",
        primary_class="cs.LG",
    )
    return format_records([rec], "bibtex", with_abstract=True), rec


_MATH_SPAN = re.compile(r"(?<!\\)\$[^$]+?(?<!\\)\$")  # (a $…$ span, as cite.py finds it)


def _latex_in_math(text: str) -> bool:
    """Whether ``$…$`` math the export keeps as written holds a LaTeX command."""
    return any("\\" in math.group() for math in _MATH_SPAN.finditer(text))


_BARE_PERCENT = re.compile(r"(?<!\\)((?:\\\\)*)%")


def _percent(text: str | None) -> str:
    """Text compared as read: math is kept as LaTeX, where a % is written \\% (each bare %
    is escaped on both sides)."""
    return _BARE_PERCENT.sub(r"\1\\%", text or "")


def _expected_fields(rec: Record) -> set[str]:
    fields = {"title", "booktitle", "year", "eprint", "archiveprefix", "primaryclass", "url"}
    fields |= {"doi", "abstract"}
    if rec.tags:
        fields.add("keywords")
    return fields


def _persons(rec: Record) -> int:
    return sum(1 for name in rec.authors if _one_line(name).strip(" ,"))


def _read_back(text: str, tmp_path: Path) -> list[MetaRecord]:
    path = tmp_path / "out.bib"
    path.write_text(text, encoding="utf-8")
    items = list(bib.read(path))
    assert all(isinstance(item, MetaRecord) for item in items), items
    return [item for item in items if isinstance(item, MetaRecord)]


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    title=_text.filter(lambda t: _one_line(shown_title(t)) != ""),  # (else: "no title")
    authors=st.lists(_text, max_size=4).map(tuple),
    venue=_text.filter(lambda t: t.strip() != ""),
    abstract=_text,
    tags=st.lists(_text.filter(lambda t: t.strip() != ""), max_size=3).map(tuple),
)
def test_any_text_gives_one_entry_with_exactly_its_fields(
    title: str,
    authors: tuple[str, ...],
    venue: str,
    abstract: str,
    tags: tuple[str, ...],
    tmp_path: Path,
) -> None:
    text, rec = _entry(title, authors, venue, abstract, tags)
    expected = _expected_fields(rec)

    # pybtex: BibTeX's own brace counting (a backslash does not hide a brace)
    database = pybtex_parse(text, "bibtex")
    assert len(database.entries) == 1
    (entry,) = database.entries.values()
    assert {name.lower() for name in entry.fields} == expected
    assert entry.fields["title"] == sanitise(bibtex_value("title", title))  # nothing got out
    assert entry.fields["year"] == "2026" and entry.fields["doi"] == "10.1000/x_y"
    assert len(entry.persons.get("author", [])) == _persons(rec)

    # the reader's own BibTeX source (bibtexparser + LaTeX decoding)
    (item,) = _read_back(text, tmp_path)
    assert len(item.authors) == _persons(rec)
    assert item.year == 2026 and item.eprint == "2601.00001"
    assert item.doi == "10.1000/x_y"
    # (the abstract is its own LaTeX source in BibTeX, `cite.bibtex_abstract`: what it reads
    # back as is test_citation_fields.py's; here, that it stays in its field)
    assert item.abstract is not None or not abstract.strip()
    shown = [
        (item.title, shown_title(title)),
        (item.venue, unbrace(rec.booktitle or "")),
    ]
    for read, written in shown:
        if not _latex_in_math(written):  # (that is LaTeX: decoded as LaTeX when read)
            assert _percent(read) == _percent(_one_line(written))


@pytest.mark.parametrize(
    ("title", "shown"),
    [
        (  # QA: meta --title closed the field and added note and howpublished
            'Harmless title}, note = "INJECTED NOTE", howpublished = "pwned",',
            'Harmless title}, note = "INJECTED NOTE", howpublished = "pwned",',
        ),
        (  # QA: an arXiv record's title through match
            'Robot tasks}, note = "from arXiv",',
            'Robot tasks}, note = "from arXiv",',
        ),
        ('Imp}, note = "INJ",', 'Imp}, note = "INJ",'),  # QA: library import
        ("Unbalanced {{{ braces", "Unbalanced {{{ braces"),  # QA: made the whole file fail
        ("A Dataset for {GAN} Background", "A Dataset for GAN Background"),  # paired: grouping
        ("Escaped \\{ brace {RSE}", "Escaped \\{ brace RSE"),
        ("Math $\\{x$ and {GAN}", "Math $\\{x$ and GAN"),
    ],
)
def test_qa_titles_stay_in_their_field(title: str, shown: str, tmp_path: Path) -> None:
    text, rec = _entry(title, ("Eve Adams",), "NeurIPS", "An abstract.", ())
    both = pybtex_parse(text + "\n@misc{after,\n  title = {After}\n}\n", "bibtex")
    assert list(both.entries)[1:] == ["after"]  # the entry after it is not swallowed
    database = pybtex_parse(text, "bibtex")
    (entry,) = database.entries.values()
    assert "note" not in entry.fields and "howpublished" not in entry.fields
    assert [str(p) for p in entry.persons["author"]] == ["Adams, Eve"]
    assert entry.fields["year"] == "2026"
    (item,) = _read_back(text, tmp_path)
    assert item.title == shown
    assert item.authors == ("Eve Adams",)


def test_a_name_with_and_is_one_author(tmp_path: Path) -> None:
    authors = ("Procter and Gamble", "Ada Lovelace", "Research AND Development Lab")
    text, _ = _entry("Soap", authors, "NeurIPS", "An abstract.", ())
    assert "{Procter and Gamble} and Lovelace, Ada and {Research AND Development Lab}" in text
    (entry,) = pybtex_parse(text, "bibtex").entries.values()
    assert len(entry.persons["author"]) == 3
    (item,) = _read_back(text, tmp_path)
    assert item.authors == authors


def test_an_author_cannot_add_fields(tmp_path: Path) -> None:
    text, _ = _entry("Title", ("A}, title={pwn", "Bob Brown"), "NeurIPS", "An abstract.", ())
    (entry,) = pybtex_parse(text, "bibtex").entries.values()
    assert entry.fields["title"] == "Title"
    assert len(entry.persons["author"]) == 2
    (item,) = _read_back(text, tmp_path)
    assert item.title == "Title" and len(item.authors) == 2
