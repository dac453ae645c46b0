"""A reading digest: the matching papers grouped by tag, as Markdown, plain text or HTML.

Each paper, with the same fields in every format: its title, venue and year, authors, tags,
whether it is bookmarked, whether its title is derived, the user's note, the first sentences
of the abstract (LaTeX rendered to Unicode, emphasis markers dropped) and its citation key
(the BibTeX key ``cite`` would give it). A paper with several tags appears under each; papers
without tags come last, under "Untagged". When the selection names tags (``-q '#a | #b'``,
``--tag a``), only those tags are groups: a paper is under each of them it has, and one it
matched otherwise (``#a | word``) under "Other matches", last. Whenever a paper is under
several groups, the heading counts papers and entries ("5 papers, 7 entries") and a line
under it says why. Markdown is written for GitHub: every piece of dump or library text is
escaped, so a title with ``*`` or ``#`` stays text.
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

UNTAGGED = "Untagged"  #: the group of papers with no tag
OTHER = "Other matches"  #: the group of papers with none of the tags the selection named

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


@dataclass(frozen=True, slots=True)
class Group:
    """A section of the digest: a tag's papers, or those under no tag (``tag`` None)."""

    tag: str | None  #: None: `UNTAGGED` or `OTHER` (so a tag named "Untagged" stays a tag)
    label: str  #: the tag, or UNTAGGED / OTHER
    entries: list[Entry]


def group_by_tag(records: Sequence[Record], named: Sequence[str] = ()) -> list[Group]:
    """The groups in tag order (case-insensitive), then "Untagged" (or "Other matches");
    within a group the records' own order (the query's ranking). ``named``: the tags the
    selection asked for (`search.named_tags`, ``--tag``): only those are groups, and a
    paper with none of them is under "Other matches"."""
    taken: set[str] = set()
    entries = [Entry(r, bibtex_key(r, taken), first_sentences(r.abstract)) for r in records]
    wanted = {t.casefold() for t in named}
    rest = OTHER if wanted else UNTAGGED
    groups: dict[str, list[Entry]] = {}
    left: list[Entry] = []
    for entry in entries:
        tags: Sequence[str] = entry.record.tags
        if wanted:
            tags = [t for t in tags if t.casefold() in wanted]
        for tag in tags:
            groups.setdefault(tag, []).append(entry)
        if not tags:
            left.append(entry)
    found = [Group(t, t, groups[t]) for t in sorted(groups, key=str.casefold)]
    return found + ([Group(None, rest, left)] if left else [])


def digest(
    records: Sequence[Record], fmt: str, *, subtitle: str = "", named: Sequence[str] = ()
) -> str:
    """The digest of ``records`` in ``fmt`` (one of `formats.DIGEST_FORMATS`). ``subtitle``: what was
    selected (the query, the date), shown under the heading. ``named``: the tags the
    selection asked for, the only ones grouped by (see `group_by_tag`)."""
    groups = group_by_tag(records, named)
    count = papers_phrase(len(records))
    entries = sum(len(g.entries) for g in groups)
    why = ""
    if entries != len(records):  # the heading counts what it lists, and says why it differs
        count += f", {entries:,} entries"
        which = "of the tags asked for" if named else "tags"
        why = f"a paper with several {which} is listed under each"
    if fmt == "markdown":
        return _markdown(groups, count, subtitle, why)
    if fmt == "text":
        return _text(groups, count, subtitle, why)
    if fmt == "html":
        return _html(groups, count, subtitle, why)
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


def _markdown(groups: list[Group], count: str, subtitle: str, why: str) -> str:
    lines = [f"# Reading digest: {count}", ""]
    if subtitle:
        lines += [f"*{_md(subtitle)}*", ""]
    if why:
        lines += [f"*{_md(why)}*", ""]
    for group in groups:
        heading = group.label if group.tag is None else f"\\#{_md(group.tag)}"
        lines += [f"## {heading} ({len(group.entries)})", ""]
        for e in group.entries:
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


def _text(groups: list[Group], count: str, subtitle: str, why: str) -> str:
    head = f"Reading digest: {count}"
    lines = [head, "=" * len(head)]
    if subtitle:
        lines.append(subtitle)
    if why:
        lines.append(why)
    for group in groups:
        name = group.label if group.tag is None else f"#{group.tag}"
        size = len(group.entries)
        lines += ["", f"{name} ({size})", "-" * (len(name) + 3 + len(str(size)))]
        for e in group.entries:
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


def _html(groups: list[Group], count: str, subtitle: str, why: str) -> str:
    esc = html.escape
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>Reading digest: {esc(count)}</title></head><body>",
        f"<h1>Reading digest: {esc(count)}</h1>",
    ]
    if subtitle:
        parts.append(f"<p><em>{esc(subtitle)}</em></p>")
    if why:
        parts.append(f"<p><em>{esc(why)}</em></p>")
    for group in groups:
        name = group.label if group.tag is None else f"#{group.tag}"
        parts.append(f"<section><h2>{esc(name)} ({len(group.entries)})</h2>")
        for e in group.entries:
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
