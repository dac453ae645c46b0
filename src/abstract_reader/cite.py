"""Citations and reading-list export: BibTeX, plain text, Markdown, CSL-JSON, CSV, JSONL.

Real metadata from the library (title, authors, URL, DOI, year) wins over what the dumps
give; authors are never invented. Every output is sanitised: it will be pasted into shells.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .corpus import Paper
from .library import Snapshot
from .metadata import Provenance, effective, venue_year
from .text import render, sanitise

FORMATS = ("bibtex", "text", "markdown", "csl-json")
EXPORT_FORMATS = ("bibtex", "markdown", "csl-json", "csv", "jsonl", "text")
FORMAT_NAMES = {
    "bibtex": "BibTeX",
    "text": "plain text",
    "markdown": "Markdown",
    "csl-json": "CSL-JSON",
    "csv": "CSV",
    "jsonl": "JSON Lines",
}
PROCEEDINGS = {
    "neurips": "Advances in Neural Information Processing Systems (NeurIPS)",
    "icml": "Proceedings of the International Conference on Machine Learning (ICML)",
    "iclr": "International Conference on Learning Representations (ICLR)",
    "aistats": "Proceedings of the International Conference on Artificial Intelligence "
    "and Statistics (AISTATS)",
    "colt": "Proceedings of the Conference on Learning Theory (COLT)",
    "uai": "Proceedings of the Conference on Uncertainty in Artificial Intelligence (UAI)",
    "acl": "Proceedings of the Annual Meeting of the Association for Computational "
    "Linguistics (ACL)",
    "emnlp": "Proceedings of the Conference on Empirical Methods in Natural Language "
    "Processing (EMNLP)",
    "cvpr": "Proceedings of the IEEE/CVF Conference on Computer Vision and Pattern "
    "Recognition (CVPR)",
    "iccv": "Proceedings of the IEEE/CVF International Conference on Computer Vision (ICCV)",
    "aaai": "Proceedings of the AAAI Conference on Artificial Intelligence (AAAI)",
}


@dataclass(frozen=True, slots=True)
class Record:
    """A paper as cited: the dumps' facts with the library's overrides applied."""

    id: str
    title: str
    title_derived: bool
    venue: str | None
    year: int | None
    authors: tuple[str, ...] = ()
    url: str | None = None
    doi: str | None = None
    abstract: str = ""
    tags: tuple[str, ...] = ()
    bookmarked: bool = False
    read: bool = False
    note: str | None = None
    sources: tuple[dict[str, Any], ...] = field(default_factory=tuple)
    eprint: str | None = None
    primary_class: str | None = None
    origin: str = "derived"  #: see ``metadata.EffectiveMetadata.origin``
    provenance: Provenance | None = None

    @property
    def booktitle(self) -> str | None:
        if not self.venue:
            return None
        return PROCEEDINGS.get(self.venue.lower(), self.venue)


def record(paper: Paper, snapshot: Snapshot | None = None) -> Record:
    """The paper as cited, by the one effective-metadata rule (``metadata.effective``)."""
    snap = snapshot or Snapshot()
    eff = effective(paper, snap)
    return Record(
        id=paper.id,
        title=eff.title,
        title_derived=eff.title_derived,
        venue=eff.venue,
        year=eff.year,
        authors=eff.authors,
        url=eff.url,
        doi=eff.doi,
        abstract=paper.abstract,
        tags=tuple(snap.tags.get(paper.id, ())),
        bookmarked=paper.id in snap.bookmarks,
        read=paper.id in snap.read,
        note=snap.notes.get(paper.id),
        sources=tuple({"file": s.file, "index": s.index} for s in paper.sources),
        eprint=eff.eprint,
        primary_class=eff.primary_class,
        origin=eff.origin,
        provenance=eff.provenance,
    )


def clean(text: str) -> str:
    """No control characters in anything we emit (newlines and tabs are kept)."""
    return sanitise(text)


# ---------------------------------------------------------------------------------------
# BibTeX
# ---------------------------------------------------------------------------------------

_BIB_ESCAPES = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "$": r"\$",
}
_MATH_SPAN = re.compile(r"(?<!\\)\$[^$]+?(?<!\\)\$")


def _balanced(text: str) -> bool:
    depth = 0
    escaped = False
    for ch in text:
        if escaped:
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth < 0:
                return False
    return depth == 0


def bibtex_escape(text: str) -> str:
    """Escape BibTeX specials outside math; ``$…$`` spans with balanced braces are kept."""
    out: list[str] = []
    pos = 0
    for match in _MATH_SPAN.finditer(text):
        if not _balanced(match.group()):
            continue
        out.append(_escape_plain(text[pos : match.start()]))
        out.append(match.group())
        pos = match.end()
    out.append(_escape_plain(text[pos:]))
    return " ".join("".join(out).split())


def _escape_plain(text: str) -> str:
    return "".join(_BIB_ESCAPES.get(ch, ch) for ch in text)


_KEY_STOP = {"a", "an", "the", "of", "for", "and", "on", "in", "to", "with", "via", "we", "is"}


def bibtex_key(rec: Record, taken: set[str] | None = None) -> str:
    venue = re.sub(r"[^a-z0-9]", "", (rec.venue or "paper").lower()) or "paper"
    words = [
        w for w in re.findall(r"[A-Za-z0-9]+", _ascii(rec.title)) if w.lower() not in _KEY_STOP
    ]
    title_part = "".join(w[:1].upper() + w[1:].lower() for w in words[:2]) or "Untitled"
    year = str(rec.year) if rec.year else ""
    length = 6
    key = f"{venue}{year}{title_part}_{rec.id[:length]}"
    while taken is not None and key in taken and length < len(rec.id):
        length += 1
        key = f"{venue}{year}{title_part}_{rec.id[:length]}"
    if taken is not None:
        taken.add(key)
    return key


def _ascii(text: str) -> str:
    import unicodedata

    return unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")


def bibtex_entry(rec: Record, key: str) -> str:
    fields: list[tuple[str, str]] = [("title", rec.title)]
    if rec.authors:
        fields.append(("author", " and ".join(rec.authors)))
    if rec.booktitle:
        fields.append(("booktitle", rec.booktitle))
    if rec.year:
        fields.append(("year", str(rec.year)))
    if rec.url:
        fields.append(("url", rec.url))
    if rec.doi:
        fields.append(("doi", rec.doi))
    if rec.title_derived:
        fields.append(("note", f"Title derived from the abstract; abstract-reader id {rec.id}"))
    width = max(len(name) for name, _ in fields)
    body = ",\n".join(
        f"  {name.ljust(width)} = {{{_bib_value(name, value)}}}" for name, value in fields
    )
    return clean(f"@inproceedings{{{key},\n{body}\n}}")


def _bib_value(name: str, value: str) -> str:
    if name in ("url", "doi"):
        return value.replace("{", "%7B").replace("}", "%7D").replace("\\", "%5C")
    return bibtex_escape(value)


# ---------------------------------------------------------------------------------------
# Other formats
# ---------------------------------------------------------------------------------------


def _venue_year(rec: Record) -> str:
    return venue_year(rec.venue, rec.year)


def _plain_title(rec: Record) -> str:
    return render(rec.title).text if ("$" in rec.title or "*" in rec.title) else rec.title


def plain_text(rec: Record) -> str:
    title = _plain_title(rec)
    parts: list[str] = []
    if rec.authors:
        authors = ", ".join(rec.authors[:-1]) + (" & " if len(rec.authors) > 1 else "")
        parts.append(f"{authors}{rec.authors[-1]} ({rec.year or 'n.d.'}).")
        parts.append(f"{title}.")
    else:
        parts.append(f"{title}{' [title derived from the abstract]' if rec.title_derived else ''}.")
        parts.append(f"({rec.year or 'n.d.'}).")
    if rec.venue:
        parts.append(f"In {rec.booktitle}.")
    if rec.doi:
        parts.append(f"https://doi.org/{rec.doi}")
    elif rec.url:
        parts.append(rec.url)
    parts.append(f"[abstract-reader:{rec.id[:12]}]")
    return clean(" ".join(parts))


_MD_SPECIAL = re.compile(r"([\\`*_\[\]<>|#])")


def markdown(rec: Record) -> str:
    title = _MD_SPECIAL.sub(r"\\\1", _plain_title(rec))
    link = rec.url or (f"https://doi.org/{rec.doi}" if rec.doi else None)
    head = f"[{title}]({link.replace(')', '%29').replace(' ', '%20')})" if link else f"**{title}**"
    bits = [head]
    if rec.authors:
        bits.append(_MD_SPECIAL.sub(r"\\\1", ", ".join(rec.authors)))
    if _venue_year(rec):
        bits.append(_venue_year(rec))
    if rec.title_derived:
        bits.append("*derived title*")
    bits.append(f"`{rec.id[:12]}`")
    return clean("- " + " — ".join(bits))


def _csl_name(name: str) -> dict[str, str]:
    if "," in name:
        family, given = (p.strip() for p in name.split(",", 1))
        return {"family": family, "given": given}
    parts = name.split()
    if len(parts) >= 2:
        return {"family": parts[-1], "given": " ".join(parts[:-1])}
    return {"literal": name}


def csl_item(rec: Record) -> dict[str, Any]:
    item: dict[str, Any] = {"id": rec.id, "type": "paper-conference", "title": clean(rec.title)}
    if rec.authors:
        item["author"] = [_csl_name(clean(a)) for a in rec.authors]
    if rec.booktitle:
        item["container-title"] = rec.booktitle
    if rec.venue:
        item["event-title"] = _venue_year(rec)
    if rec.year:
        item["issued"] = {"date-parts": [[rec.year]]}
    if rec.url:
        item["URL"] = clean(rec.url)
    if rec.doi:
        item["DOI"] = clean(rec.doi)
    if rec.title_derived:
        item["note"] = "Title derived from the abstract by abstract-reader"
    item["abstract"] = render(rec.abstract).text
    return item


def json_record(rec: Record) -> dict[str, Any]:
    return {
        "id": rec.id,
        "title": rec.title,
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


def format_records(records: Sequence[Record], fmt: str) -> str:
    """Citations / an export of ``records`` in ``fmt``. Keys are unique within one call."""
    if fmt == "bibtex":
        taken: set[str] = set()
        return "\n\n".join(bibtex_entry(r, bibtex_key(r, taken)) for r in records) + "\n"
    if fmt == "text":
        return "\n".join(plain_text(r) for r in records) + "\n"
    if fmt == "markdown":
        return "\n".join(markdown(r) for r in records) + "\n"
    if fmt == "csl-json":
        return json.dumps([csl_item(r) for r in records], ensure_ascii=False, indent=2) + "\n"
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
                {k: clean(str(row[k])) if row[k] is not None else "" for k in CSV_FIELDS}
            )
        return buffer.getvalue()
    raise ValueError(f"unknown format {fmt!r}")


def write_atomic(path: Path, text: str, *, force: bool = False) -> None:
    """Write via a temporary file and rename; refuse to overwrite without ``force``, refuse
    non-file targets, write through symbolic links only with ``force`` (see outfile.py)."""
    from .outfile import write_output

    write_output(path, text, force=force)
