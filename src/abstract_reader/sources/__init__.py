"""Metadata sources: one reader per format, each yielding ``MetaRecord``s one at a time.

``.jsonl`` arXiv metadata snapshot (streamed a line at a time: the real one is 4+ GB),
``.json`` OpenReview API v2 notes or CSL-JSON, ``.bib`` BibTeX (bibtexparser v2), ``.ris``
RIS (rispy). A file is recognised by its extension and checked by its content: a file that
is not what its extension says raises ``SourceError`` (one line: the file is skipped); a
malformed record yields a ``RecordProblem`` naming it, and the rest of the file loads.

Every text field is untrusted: whitespace (hard wraps) collapsed and sanitised like dump text.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from ..infile import (
    METADATA_SUFFIXES,
    NotRegular,
    TooLarge,
    open_regular,
    read_whole,
)
from ..text import sanitise


class SourceError(Exception):
    """The whole file cannot be read as its format (worded for one line)."""


@dataclass(frozen=True, slots=True)
class MetaRecord:
    """One paper's metadata as a source gives it."""

    source: str  #: "arxiv", "openreview", "csl-json", "bibtex", "ris"
    record_id: str  #: the id within that source (arXiv id, note id, citation key, …)
    file: str  #: where it was read (file name or cache path)
    index: int  #: its 1-based position in that file (line for JSON Lines)
    title: str | None = None
    authors: tuple[str, ...] = ()  #: "First Last", in order
    year: int | None = None
    venue: str | None = None
    url: str | None = None
    doi: str | None = None
    abstract: str | None = None  #: whitespace-collapsed, sanitised
    eprint: str | None = None
    primary_class: str | None = None

    @property
    def label(self) -> str:
        return f"{self.source}:{self.record_id}"


@dataclass(frozen=True, slots=True)
class RecordProblem:
    """A malformed record: skipped, the rest of the file loads."""

    file: str
    where: str  #: "line 12", "entry 3 (key smith2020)", …
    message: str

    def __str__(self) -> str:
        return f"{self.where}: {self.message}"


Item = MetaRecord | RecordProblem


def clean_text(value: object) -> str | None:
    """Untrusted text → one line, sanitised; None when empty or not text."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str):
        return None
    text = " ".join(value.split())
    if not text:
        return None
    return sanitise(text) if not text.isprintable() else text


_YEAR_RE = re.compile(r"(?<!\d)(1[89]\d\d|20\d\d|21\d\d)(?!\d)")


def year_in(value: object) -> int | None:
    """The first plausible four-digit year in ``value``."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value if 1800 <= value <= 2199 else None
    if isinstance(value, str):
        found = _YEAR_RE.search(value)
        return int(found.group(1)) if found else None
    return None


#: A "venue" that is a preprint server, not where the paper appeared: Google Scholar's and
#: Zotero's ``journal = {arXiv preprint arXiv:2501.01234}``, DBLP's ``CoRR``, bioRxiv, ….
_PREPRINT_VENUE_RE = re.compile(
    r"^\W*(?:arxiv|corr|\w*rxiv)\b|\bpre-?prints?\b|\be-?prints?\b", re.IGNORECASE
)
_ARXIV_ID_RE = re.compile(r"(?<![\d.])(\d{4}\.\d{4,5})(?:v\d+)?(?![\d.])")


def is_preprint_venue(venue: str | None) -> bool:
    """True for a preprint server named as a venue ("arXiv preprint arXiv:…", "CoRR"):
    no venue for a citation (an ``@inproceedings`` whose booktitle is "arXiv preprint" is
    wrong); the paper is an arXiv eprint."""
    return bool(venue and _PREPRINT_VENUE_RE.search(venue))


def arxiv_id_in(text: str | None) -> str | None:
    """The new-style arXiv id in ``text`` ("arXiv preprint arXiv:2501.01234", "abs/2501.01234")."""
    found = _ARXIV_ID_RE.search(text) if text else None
    return found.group(1) if found else None


def clean_doi(value: object) -> str | None:
    """A normalised DOI, or None when the field holds none (a bad DOI is dropped)."""
    from ..metadata import normalise_doi

    text = clean_text(value)
    if not text:
        return None
    try:
        return normalise_doi(text)
    except ValueError:
        return None


def clean_url(value: object) -> str | None:
    text = clean_text(value)
    if text and re.match(r"^https?://\S+$", text):
        return text
    return None


def record(
    source: str,
    record_id: str,
    file: str,
    index: int,
    title: str,
    *,
    authors: object = None,
    person: Callable[[Any], str | None] = clean_text,
    year: int | None = None,
    venue: object = None,
    url: str | None = None,
    doi: object = None,
    abstract: object = None,
    eprint: str | None = None,
    primary_class: object = None,
) -> MetaRecord:
    """A reader's record from its raw fields, each cleaned the one way every reader cleans
    it: ``authors`` a list of people, each named by ``person`` (those left nameless dropped,
    nobody if it is not a list); venue, abstract and class as text; a DOI normalised (a bad
    one dropped). ``title`` and ``url`` come clean."""
    people = tuple(n for n in map(person, authors) if n) if isinstance(authors, list) else ()
    return MetaRecord(
        source=source,
        record_id=record_id,
        file=file,
        index=index,
        title=title,
        authors=people,
        year=year,
        venue=None if is_preprint_venue(venue_text := clean_text(venue)) else venue_text,
        url=url,
        doi=clean_doi(doi),
        abstract=clean_text(abstract),
        eprint=eprint,
        primary_class=clean_text(primary_class),
    )


def _readers() -> dict[str, Callable[[Path], Iterator[Item]]]:
    from . import arxiv, bib, jsonsource, ris

    return {
        ".jsonl": arxiv.read,
        ".json": jsonsource.read,
        ".bib": bib.read,
        ".ris": ris.read,
    }


def read_records(path: Path) -> Iterator[Item]:
    """The records of one metadata file, streamed. Raises ``SourceError`` (possibly only
    once iteration starts) when the file is not what its extension says."""
    reader = _readers().get(path.suffix.lower())
    if reader is None:
        raise SourceError(f"not a metadata file (expected one of {', '.join(METADATA_SUFFIXES)})")
    return reader(path)


#: a file that starts with UTF-16's (or UTF-32's) byte-order mark
UTF16 = "not UTF-8 text (UTF-16, by its byte-order mark: save it as UTF-8)"


def open_source(path: Path) -> BinaryIO:
    """A metadata file opened for reading, if it is a regular file (never a FIFO or a
    device: see `infile`); anything else is a SourceError."""
    try:
        return open_regular(path)
    except NotRegular as exc:
        raise SourceError(str(exc)) from None
    except OSError as exc:
        raise SourceError((exc.strerror or str(exc)).lower()) from None


def read_text(path: Path) -> str:
    """A whole metadata file as text (a regular file of at most `infile.MAX_WHOLE_BYTES`);
    anything else, OSError and bad UTF-8 become SourceError."""
    try:
        data = read_whole(path)
    except (NotRegular, TooLarge) as exc:
        raise SourceError(str(exc)) from None
    except OSError as exc:
        raise SourceError((exc.strerror or str(exc)).lower()) from None
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    elif data.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise SourceError(UTF16)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SourceError(f"not UTF-8 text (byte {exc.start})") from None
