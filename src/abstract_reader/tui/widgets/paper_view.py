"""The paper view: title, facts, tags, note, then the rendered abstract. Scrollable."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from textual import events
from textual.binding import BindingType
from textual.content import Content
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.selection import Selection
from textual.strip import Strip
from textual.style import Style
from textual.visual import Visual

from ...library import tag_query
from ...text import Rendered, cap, sanitise
from ..commands import bindings
from .burst_scroll import BurstScrolling
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


class PaperView(BurstScrolling, ScrollView, can_focus=True):
    """The paper: its header (title, facts, tags, note) and its abstract, drawn as lines of
    its own.

    A new paper changes only how many lines there are to scroll (``virtual_size``, set
    without a layout), so it costs one repaint of the pane. Built from Static parts in a
    scrolling container, each new paper laid the whole screen out, because the parts
    changed height: a frame of ~17 ms instead of ~10 at 100k papers (issue 14).

    The lines carry their offsets in the text, as Textual's ``Static`` draws them: the mouse
    selects text, and ctrl+c copies it (`get_selection`)."""

    BINDINGS: ClassVar[list[BindingType]] = list(bindings("view"))

    async def _on_key(self, event: events.Key) -> None:
        """Its bindings run as the key arrives; a key that arrives once the focus has moved
        goes on to the focused widget (`keys_in_order.keys_follow_focus`)."""
        await keys_follow_focus(self, event)

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.details: PaperDetails | None = None
        self.header = Content("")  #: the header shown (title, facts, tags, note)
        self.body = Content("")  #: the abstract shown (after a blank line)
        #: every line of the text, at the width and in the style it was drawn with
        self._lines: tuple[tuple[int, Style], list[Strip]] | None = None

    @property
    def text(self) -> Content:
        """All the pane shows: a blank line, the header, then the body."""
        return Content.assemble("\n", self.header, "\n", self.body)

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
            self.header = Content(message).stylize("$text-muted")
            self.body = Content("")
        else:
            self.header = self._header(details)
            self.body = self._body(details)
        self._redraw()
        if not same_paper:
            self.scroll_home(animate=False, immediate=True)

    # -- drawing -----------------------------------------------------------------------------
    def _redraw(self) -> None:
        """Draw the text anew: its lines, how far it scrolls, the whole pane repainted."""
        self._lines = None
        self._set_height()
        self.refresh()

    def _set_height(self) -> None:
        """The lines to scroll through. The view's own size never depends on its text, so
        this is no layout of the screen (``virtual_size`` is a layout reactive): only the
        scrollbar, shown or hidden as the text overflows, is one."""
        width = self.scrollable_content_region.width
        size = Size(width, len(self._strips()) if width else 0)
        if size != self.virtual_size:
            self.set_reactive(PaperView.virtual_size, size)
            self._scroll_update(size)

    def _strips(self) -> list[Strip]:
        """Every line of the text at the view's width, in its style (focus changes the
        background), the mouse's selection marked."""
        width = self.scrollable_content_region.width
        style = self.visual_style
        if self._lines is not None and self._lines[0] == (width, style):
            return self._lines[1]
        strips = Visual.to_strips(self, self.text, width, None, style, pad=True) if width else []
        self._lines = ((width, style), strips)
        return strips

    def render_line(self, y: int) -> Strip:
        strips = self._strips()
        index = int(self.scroll_offset.y) + y
        if index < len(strips):
            return strips[index]
        return Strip.blank(self.scrollable_content_region.width, self.visual_style.rich_style)

    def on_resize(self, event: events.Resize) -> None:
        self._lines = None
        self._set_height()

    def notify_style_update(self) -> None:
        self._lines = None  # a new theme: the same style object may draw other colours
        super().notify_style_update()

    # -- selection ---------------------------------------------------------------------------
    def get_selection(self, selection: Selection) -> tuple[str, str] | None:
        return selection.extract(self.text.plain), "\n"

    def selection_updated(self, selection: Selection | None) -> None:
        self._lines = None
        self.refresh()

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
