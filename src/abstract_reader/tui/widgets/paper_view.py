"""The paper view: title, facts, tags, note, then the rendered abstract. Scrollable."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from textual import events
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.content import Content
from textual.geometry import Size
from textual.style import Style
from textual.widgets import Static

from ...library import tag_query
from ...text import Rendered, cap, sanitise
from ..commands import bindings
from .burst_scroll import BurstScroll
from .keys_in_order import keys_follow_focus

#: Characters of an abstract the view shows; the rest is announced, so nothing freezes.
DISPLAY_LIMIT = 20_000


@dataclass(frozen=True, slots=True)
class PaperDetails:
    """Everything the view shows of a paper; assembled by the app from the core."""

    paper_id: str
    title: str
    title_derived: bool
    venue: str
    sources: tuple[str, ...]  #: the first `SOURCES_SHOWN`
    tags: tuple[str, ...]
    bookmarked: bool
    read: bool
    marked: bool
    body: Rendered
    authors: tuple[str, ...] = ()
    url: str | None = None
    doi: str | None = None
    note: str | None = None
    provenance: str | None = None  #: where matched metadata came from (source, record, score)
    eprint: str | None = None  #: the arXiv id, when known (a link to its page)
    title_spans: tuple[tuple[int, int], ...] = ()
    body_spans: tuple[tuple[int, int], ...] = ()
    more_sources: int = 0  #: sources not in ``sources``


#: Math has its own colour, distinct from search hits ($text-warning underline).
_STYLE_FOR = {"bold": "bold", "italic": "italic", "math": "$text-primary"}


def linked(content: Content, url: str, start: int = 0, end: int | None = None) -> Content:
    """``content`` with ``start:end`` an OSC 8 hyperlink to ``url`` (clickable in terminals
    that support them), underlined. ``url`` must come from ``text.links.web_link``: Rich
    writes it into the escape sequence as it is. A Style object, never markup."""
    return content.stylize("underline", start, end).stylize(Style(link=url), start, end)


def _link_line(label: str, text: str, url: str) -> Content:
    """``label: text``, the text a link to ``url`` when it is a safe web link, else plain
    with the reason it is not a link."""
    from ...text.links import LinkRefused, web_link  # (not before a paper has a link)

    line = Content(f"{label}: {sanitise(text)}").stylize("$text-muted")
    try:
        safe = web_link(url)
    except LinkRefused as exc:
        return line + Content(f"  (not a link: {exc})").stylize("$text-warning")
    return linked(line, safe, len(label) + 2)


class _Part(Static):
    """The header or the body of the paper: as tall as its text (no scrolling of its own).

    A new paper lays the screen out once; Textual then told the part its new size through
    ``virtual_size``, a layout reactive, which laid the whole screen out a second time in
    the next frame for nothing (a part does not scroll: its virtual size moves nothing)."""

    def _size_updated(
        self, size: Size, virtual_size: Size, container_size: Size, layout: bool = True
    ) -> bool:
        return super()._size_updated(size, virtual_size, container_size, layout=False)


class PaperView(BurstScroll, can_focus=True):
    BINDINGS: ClassVar[list[BindingType]] = list(bindings("view"))

    async def _on_key(self, event: events.Key) -> None:
        """Its bindings run as the key arrives; a key that arrives once the focus has moved
        goes on to the focused widget (`keys_in_order.keys_follow_focus`)."""
        await keys_follow_focus(self, event)

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.details: PaperDetails | None = None
        #: the text shown in the header and the body (their styles aside)
        self._plain: dict[str, str] = {}

    def compose(self) -> ComposeResult:
        yield _Part(Content(""), id="paper-header", markup=False)
        yield _Part(Content(""), id="paper-body", markup=False)

    def show(self, details: PaperDetails | None, message: str = "") -> None:
        if details is not None and details == self.details:
            return  # the same paper, drawn the same: no repaint
        same_paper = (
            self.details is not None
            and details is not None
            and (self.details.paper_id == details.paper_id)
        )
        self.details = details
        if details is None:
            self._update("#paper-header", Content(message).stylize("$text-muted"))
            self._update("#paper-body", Content(""))
            return
        self._update("#paper-header", self._header(details))
        self._update("#paper-body", self._body(details))
        if not same_paper:
            self.scroll_home(animate=False)

    def _update(self, part: str, content: Content) -> None:
        """Show ``content`` in ``part``. The same text in other styles (the query's words
        marked anew, a flag's colour) takes the same lines: drawn again without laying out
        the screen (a layout re-measures and repaints every widget: ~1 frame)."""
        plain = content.plain
        same_text = self._plain.get(part) == plain
        self._plain[part] = plain
        self.query_one(part, Static).update(content, layout=not same_text)

    def _header(self, d: PaperDetails) -> Content:
        title = Content(d.title).stylize("bold")
        for start, end in d.title_spans:
            title = title.stylize("$text-warning underline", start, end)
        parts: list[Content] = [title]
        if d.title_derived:
            parts.append(Content("  derived title — e sets the real one").stylize("$text-muted"))
        lines: list[Content] = [Content.assemble(*parts)]
        if d.authors:
            lines.append(Content(", ".join(d.authors)).stylize("italic"))
        state = []
        state.append("★ bookmarked" if d.bookmarked else "☆ not bookmarked")
        state.append("read" if d.read else "● unread")
        if d.marked:
            state.append("▌marked")
        lines.append(
            Content.assemble(
                (d.venue, "$text-accent"),
                ("  ·  ", "$text-muted"),
                (d.paper_id, "$text-muted"),
                ("  ·  ", "$text-muted"),
                " · ".join(state),
            )
        )
        noun = "source" if len(d.sources) + d.more_sources == 1 else "sources"
        more = f", … and {d.more_sources:,} more" if d.more_sources else ""
        lines.append(Content(f"{noun}: " + ", ".join(d.sources) + more).stylize("$text-muted"))
        if d.tags:
            lines.append(Content(" ".join(tag_query(t) for t in d.tags)).stylize("$text-success"))
        if d.url:
            lines.append(_link_line("url", d.url, d.url))
        if d.doi:
            from ...text.links import doi_link

            lines.append(_link_line("doi", d.doi, doi_link(d.doi)))
        if d.eprint and not (d.url and d.eprint in d.url):
            lines.append(_link_line("arXiv", d.eprint, "https://arxiv.org/abs/" + d.eprint))
        if d.provenance:
            lines.append(Content(f"metadata: {d.provenance}").stylize("$text-muted"))
        if d.note:
            note = sanitise(d.note).replace("\u240a", "\n")
            lines.append(Content("note: ").stylize("bold $text-secondary") + Content(note))
        return Content("\n").join(lines)

    def _body(self, d: PaperDetails) -> Content:
        text, cut = cap(d.body.text, DISPLAY_LIMIT)
        cut += d.body.cut  # source left unrendered (the body is rendered up to the limit)
        content = Content("\n" + text)
        for span in d.body.spans:
            if span.start < len(text):
                content = content.stylize(_STYLE_FOR[span.style], span.start + 1, span.end + 1)
        for start, end in d.body_spans:
            if start < len(text):
                content = content.stylize("$text-warning underline", start + 1, end + 1)
        if "://" in text:  # URLs in the abstract: links, sanitised (text.links)
            from ...text.links import find_links  # (most abstracts have none)

            for link in find_links(text):
                content = linked(content, link.url, link.start + 1, link.end + 1)
        if cut:
            content += Content(f"\n\n… {cut:,} more characters not shown").stylize("$text-muted")
        return content
