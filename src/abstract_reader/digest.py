"""A reading digest: the matching papers grouped by tag, as Markdown, plain text or HTML.

Each paper, with the same fields in every format: its title, venue and year, authors, tags,
whether it is bookmarked, whether its title is derived, the user's note, the first sentences
of the abstract (LaTeX rendered to Unicode, emphasis markers dropped) and its citation key
(the BibTeX key ``cite`` would give it). A paper with several tags appears under each; papers
without tags come last, under "Untagged". Markdown is written for GitHub: every piece of
dump or library text is escaped, so a title with ``*`` or ``#`` stays text.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from dataclasses import dataclass

from .cite import bibtex_key, doi_url, web_url
from .metadata import venue_label
from .plural import papers_phrase
from .record import Record
from .text import render, shown_title

FORMATS = ("markdown", "text", "html")
UNTAGGED = "Untagged"

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z(\"'“])")
#: inline Markdown syntax (links and images need "[", so parentheses can stay)
_MD_SPECIAL = re.compile(r"([\\`*_\[\]<>|#~&$])")
#: what starts a list or a heading at the beginning of a line
_MD_LINE_START = re.compile(r"^(\d+)([.)])|^([-+=])")


def first_sentences(abstract: str, count: int = 2, limit: int = 400) -> str:
    """The abstract's first ``count`` sentences, rendered, at most ``limit`` characters."""
    text = " ".join(render(abstract).text.split())
    sentences = _SENTENCE_END.split(text)
    out = " ".join(sentences[:count])
    if len(out) > limit:
        out = out[: limit - 1].rsplit(" ", 1)[0] + "…"
    return out


@dataclass(frozen=True, slots=True)
class Entry:
    record: Record
    key: str  #: the citation key
    opening: str  #: the first sentences


def group_by_tag(records: Sequence[Record]) -> list[tuple[str, list[Entry]]]:
    """(tag, entries) in tag order (case-insensitive), "Untagged" last; within a tag the
    records' own order (the query's ranking)."""
    taken: set[str] = set()
    entries = [Entry(r, bibtex_key(r, taken), first_sentences(r.abstract)) for r in records]
    groups: dict[str, list[Entry]] = {}
    for entry in entries:
        for tag in entry.record.tags or (UNTAGGED,):
            groups.setdefault(tag, []).append(entry)
    names = sorted((t for t in groups if t != UNTAGGED), key=str.casefold)
    if UNTAGGED in groups:
        names.append(UNTAGGED)
    return [(name, groups[name]) for name in names]


def digest(records: Sequence[Record], fmt: str, *, subtitle: str = "") -> str:
    """The digest of ``records`` in ``fmt`` (one of FORMATS). ``subtitle``: what was
    selected (the query, the date), shown under the heading."""
    groups = group_by_tag(records)
    count = papers_phrase(len(records))
    if fmt == "markdown":
        return _markdown(groups, count, subtitle)
    if fmt == "text":
        return _text(groups, count, subtitle)
    if fmt == "html":
        return _html(groups, count, subtitle)
    raise ValueError(f"unknown digest format {fmt!r}")


def _venue(rec: Record) -> str:
    return venue_label(rec.venue, rec.year)


def _link(rec: Record) -> str | None:
    """The title's link: the URL, else the DOI's doi.org link — only one the reader's `O`
    would open (``cite.web_url``), as in citations."""
    return web_url(rec.url) or doi_url(rec.doi)


def _md(text: str) -> str:
    """Markdown-escaped inline text on one line (also safe at the start of a line)."""
    escaped = _MD_SPECIAL.sub(r"\\\1", " ".join(text.split()))
    return _MD_LINE_START.sub(lambda m: f"{m[1]}\\{m[2]}" if m[1] else f"\\{m[3]}", escaped)


def _markdown(groups: list[tuple[str, list[Entry]]], count: str, subtitle: str) -> str:
    lines = [f"# Reading digest: {count}", ""]
    if subtitle:
        lines += [f"*{_md(subtitle)}*", ""]
    for tag, entries in groups:
        heading = "Untagged" if tag == UNTAGGED else f"\\#{_md(tag)}"
        lines += [f"## {heading} ({len(entries)})", ""]
        for e in entries:
            rec = e.record
            link = _link(rec)
            title = _md(shown_title(rec.title))
            if link:  # (web_url leaves no space, "<" or ">" in it)
                title = f"[{title}](<{link}>)"
            lines += [f"### {title}", ""]
            facts = [_md(_venue(rec))]
            if rec.authors:
                facts.append(_md(", ".join(rec.authors)))
            if rec.tags:
                facts.append("tags: " + ", ".join(_md(t) for t in rec.tags))
            if rec.bookmarked:
                facts.append("★ bookmarked")
            facts.append(f"cite as `{e.key}`")
            lines += [" · ".join(facts), ""]
            if rec.title_derived:
                lines[-2] += " · *derived title*"
            if e.opening:
                lines += [f"> {_md(e.opening)}", ""]
            if rec.note:
                note = [_md(line) for line in rec.note.splitlines() if line.strip()]
                lines += ["**Note:** " + "  \n".join(note), ""]
    return "\n".join(lines).rstrip() + "\n"


def _text(groups: list[tuple[str, list[Entry]]], count: str, subtitle: str) -> str:
    head = f"Reading digest: {count}"
    lines = [head, "=" * len(head)]
    if subtitle:
        lines.append(subtitle)
    for tag, entries in groups:
        name = tag if tag == UNTAGGED else f"#{tag}"
        lines += ["", f"{name} ({len(entries)})", "-" * (len(name) + 3 + len(str(len(entries))))]
        for e in entries:
            rec = e.record
            lines += ["", f"* {shown_title(rec.title)}"]
            facts = [_venue(rec)]
            if rec.authors:
                facts.append(", ".join(rec.authors))
            if rec.tags:
                facts.append("tags: " + ", ".join(rec.tags))
            if rec.bookmarked:
                facts.append("bookmarked")
            facts.append(f"cite as {e.key}")
            if rec.title_derived:
                facts.append("derived title")
            lines.append("  " + " · ".join(facts))
            if e.opening:
                lines.append("  " + e.opening)
            if rec.note:
                lines.append("  Note: " + " / ".join(rec.note.splitlines()))
    return "\n".join(lines) + "\n"


def _html(groups: list[tuple[str, list[Entry]]], count: str, subtitle: str) -> str:
    esc = html.escape
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>Reading digest: {esc(count)}</title></head><body>",
        f"<h1>Reading digest: {esc(count)}</h1>",
    ]
    if subtitle:
        parts.append(f"<p><em>{esc(subtitle)}</em></p>")
    for tag, entries in groups:
        name = tag if tag == UNTAGGED else f"#{tag}"
        parts.append(f"<section><h2>{esc(name)} ({len(entries)})</h2>")
        for e in entries:
            rec = e.record
            link = _link(rec)
            title = esc(shown_title(rec.title))
            if link:
                title = f'<a href="{esc(link)}">{title}</a>'
            facts = [esc(_venue(rec))]
            if rec.authors:
                facts.append(esc(", ".join(rec.authors)))
            if rec.tags:
                facts.append("tags: " + esc(", ".join(rec.tags)))
            if rec.bookmarked:
                facts.append("★ bookmarked")
            facts.append(f"cite as <code>{esc(e.key)}</code>")
            if rec.title_derived:
                facts.append("<em>derived title</em>")
            parts.append(f"<article><h3>{title}</h3><p>{' · '.join(facts)}</p>")
            if e.opening:
                parts.append(f"<blockquote>{esc(e.opening)}</blockquote>")
            if rec.note:
                parts.append(f"<p><strong>Note:</strong> {esc(rec.note)}</p>")
            parts.append("</article>")
        parts.append("</section>")
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"
