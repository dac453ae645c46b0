"""The paper list: a virtual list that draws only the rows on screen (the Line API).

It knows nothing of search or storage: the app gives it a ``RowSource`` (how many rows,
and how to describe row *i*) and it draws, scrolls and moves a cursor over it.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import pairwise
from math import ceil
from typing import ClassVar, Protocol, runtime_checkable

from rich.cells import cell_len, set_cell_size
from rich.segment import Segment
from rich.style import Style as RichStyle
from textual import events
from textual._border import get_box
from textual.binding import BindingType
from textual.color import Color
from textual.content import Content
from textual.filter import LineFilter
from textual.geometry import Region, Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.scrollbar import ScrollBar
from textual.strip import Strip
from textual.style import Style

from ...library import tag_query
from ..commands import bindings
from .keys_in_order import keys_follow_focus


@dataclass(frozen=True, slots=True)
class Row:
    """What one list row shows. All text is sanitised; spans index ``title``."""

    paper_id: str
    title: str
    venue: str
    tags: tuple[str, ...]
    bookmarked: bool
    read: bool
    marked: bool
    spans: tuple[tuple[int, int], ...] = ()


@runtime_checkable
class OpensPapers(Protocol):
    """The screen of a list: it opens a paper (`PaperList.action_open`) at once, before the
    list takes its next key (a message would be handled after the keys queued behind Enter)."""

    def open_paper(self, paper_id: str) -> None: ...


class RowSource(Protocol):
    def __len__(self) -> int: ...
    def row(self, index: int) -> Row: ...
    def paper_id(self, index: int) -> str: ...


class _Empty:
    def __len__(self) -> int:
        return 0

    def row(self, index: int) -> Row:
        raise IndexError(index)

    def paper_id(self, index: int) -> str:
        raise IndexError(index)


@dataclass(frozen=True, slots=True)
class _Frame:
    """What every row of one frame is drawn with (asked of the styles once per frame)."""

    width: int
    top: int
    base: Style
    cursor: Style
    read: Style


@dataclass(frozen=True, slots=True)
class _Edges:
    """What Textual's styling of a widget's lines adds to the list's rows, when that is only
    a background and a right border (see `PaperList._plain_edges`)."""

    width: int  #: the list's width, its border included
    content_width: int
    inner: RichStyle  #: the list's background (under a row shorter than the list)
    right: Segment | None  #: the right border's cell
    background: Color  #: for the app's line filters
    filters: tuple[LineFilter, ...]


#: Rows drawn kept (a few screens' worth: paging back and forth, refining a query).
_STRIP_CACHE = 512


class PaperList(ScrollView, can_focus=True):
    """A cursor over rows. Posts ``CursorMoved``; Enter opens the paper through its screen
    (``OpensPapers``)."""

    BINDINGS: ClassVar[list[BindingType]] = list(bindings("list"))

    async def _on_key(self, event: events.Key) -> None:
        """Its bindings run as the key arrives; a key that arrives once the focus has moved
        goes on to the focused widget (`keys_in_order.keys_follow_focus`)."""
        await keys_follow_focus(self, event)

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "paper-list--cursor",
        "paper-list--read",
        "paper-list--match",
        "paper-list--meta",
        "paper-list--flag",
        "paper-list--tag",
        "paper-list--marked",
        "paper-list--empty",
    }

    cursor: reactive[int] = reactive(0, always_update=True, init=False, repaint=False)

    class CursorMoved(Message):
        """The cursor is on another paper; ``by_user`` when a key or click of the user moved
        it (not a new result, a load or a restore): only then may the paper become read."""

        def __init__(self, paper_id: str | None, by_user: bool = False) -> None:
            self.paper_id = paper_id
            self.by_user = by_user
            super().__init__()

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.source: RowSource = _Empty()
        self.empty_message: Content = Content("")
        self._last_reported: str | None = "\0"
        self._by_user = False
        self._strips: dict[tuple[Row, int, Style, tuple[Style, ...]], Strip] = {}
        self._combined: dict[tuple[Style, ...], RichStyle] = {}
        self._frame: _Frame | None = None  #: while a frame's lines are drawn
        self._part_styles: tuple[Style, Style, Style, Style, Style] | None = None
        #: line (y on the widget) → what was last drawn there (see `_line_key`)
        self._drawn: dict[int, tuple[object, ...]] = {}
        #: rows made by `set_source` to compare, kept for the frame that draws them
        self._prepared: dict[int, Row] = {}
        #: line → (its row's strip, the edges it was drawn with, the line drawn): see
        #: `_render_plain`
        self._edged: dict[int, tuple[Strip, _Edges, Strip]] = {}
        self._plain = False  #: the last frame was drawn by `_render_plain`

    # -- data ------------------------------------------------------------------------------
    def set_source(self, source: RowSource, cursor: int = 0) -> None:
        """Show ``source`` with the cursor on row ``cursor``. Only the lines that look
        different are drawn again: refining a query often keeps most rows on screen as
        they were, and each line costs Textual ~50 µs to style and cut for the screen."""
        top = self.scroll_offset.y
        was_empty = len(self.source) == 0
        self._prepared.clear()
        self.source = source
        self._set_rows(len(source))
        self.cursor = max(0, min(cursor, len(source) - 1))
        if was_empty or len(source) == 0 or self.scroll_offset.y != top:
            self.refresh()  # (the empty message, or scrolled: every line)
        else:
            self._refresh_changed()

    def _refresh_changed(self) -> None:
        """Refresh the lines whose look differs from what was last drawn there."""
        height = self.scrollable_content_region.height
        if not self._drawn or not height:
            self.refresh()
            return
        frame = self._frame_styles()
        styles = self._styles_of_parts()
        width = max(self.virtual_size.width, self.size.width)
        changed: list[Region] = []
        count = len(self.source)
        for y in range(height):
            index = frame.top + y
            row = None
            if index < count:
                row = self._prepared[index] = self.source.row(index)
            if self._drawn.get(y) != self._line_key(frame, styles, index, row):
                last = changed[-1] if changed else None
                if last is not None and last.bottom == y:  # one region per run of lines
                    changed[-1] = Region(0, last.y, width, last.height + 1)
                else:
                    changed.append(Region(0, y, width, 1))
        if changed:
            self.refresh(*changed)

    def _set_rows(self, count: int) -> None:
        """The scrollable height. The list's own size never depends on its rows, so a new
        count costs no layout of the screen (``virtual_size`` is a layout reactive), only the
        scrollbar: shown or hidden (that is a layout), its thumb moved. No width: rows are
        cut to the list, never scrolled sideways."""
        size = Size(0, count)
        if size != self.virtual_size:
            old = self.virtual_size.height
            self.set_reactive(PaperList.virtual_size, size)
            bar = self._vertical_scrollbar
            if bar is not None and self._same_thumb(bar, old, count):
                # no scrollbar to draw again (35 lines, ~1 ms): only its count is new
                bar.set_reactive(ScrollBar.window_virtual_size, count)
                return
            self._scroll_update(size)

    def _same_thumb(self, bar: ScrollBar, old: int, new: int) -> bool:
        """The scrollbar, shown and at the top, draws its thumb the same for ``new`` rows
        as for ``old`` (as ``ScrollBarRender.render_bar`` sizes it, in eighths of a cell):
        100,000 papers narrowed to 2,000 keep a one-cell thumb."""
        window = bar.window_size
        height = bar.size.height
        if not (bar.display and window and height) or self.scroll_offset.y != 0:
            return False
        if bar.window_virtual_size != old or min(old, new) <= max(window, height):
            return False  # (shown and hidden as the rows overflow: Textual decides)

        def eighths(rows: int) -> int:
            return ceil(max(1.0, window / (rows / height)) * 8)

        return eighths(old) == eighths(new)

    def refresh_rows(self) -> None:
        """Redraw (a paper's flags or tags changed)."""
        self._prepared.clear()
        self.refresh()

    @property
    def current_id(self) -> str | None:
        if len(self.source) == 0:
            return None
        return self.source.paper_id(self.cursor)

    # -- cursor ----------------------------------------------------------------------------
    def validate_cursor(self, value: int) -> int:
        return max(0, min(value, len(self.source) - 1)) if len(self.source) else 0

    def watch_cursor(self, old: int, value: int) -> None:
        top = self.scroll_offset.y
        self._keep_visible()
        if self.scroll_offset.y != top:
            self.refresh()
        elif old != value:  # only the two rows whose look changed: j/k repaint two lines
            if old >= 0:
                self.refresh_line(old)
            self.refresh_line(value)
        current = self.current_id
        if current != self._last_reported:
            self._last_reported = current
            self.post_message(self.CursorMoved(current, self._by_user))
        self._by_user = False

    def _keep_visible(self) -> None:
        height = self.scrollable_content_region.height or 1
        top = int(self.scroll_offset.y)
        if self.cursor < top:
            self.scroll_to(y=self.cursor, animate=False, immediate=True)
        elif self.cursor >= top + height:
            self.scroll_to(y=self.cursor - height + 1, animate=False, immediate=True)

    def _page(self) -> int:
        return max(1, (self.scrollable_content_region.height or 2) - 1)

    def move(self, index: int, *, by_user: bool) -> None:
        """Put the cursor on row ``index``; ``by_user``: a key or click of the user asked."""
        self._by_user = by_user
        self.cursor = index
        self._by_user = False

    def action_cursor_down(self) -> None:
        self.move(self.cursor + 1, by_user=True)

    def action_cursor_up(self) -> None:
        self.move(self.cursor - 1, by_user=True)

    def action_first(self) -> None:
        self.move(0, by_user=True)

    def action_last(self) -> None:
        self.move(len(self.source) - 1, by_user=True)

    def action_page_down(self) -> None:
        self.move(self.cursor + self._page(), by_user=True)

    def action_page_up(self) -> None:
        self.move(self.cursor - self._page(), by_user=True)

    def action_open(self) -> None:
        current = self.current_id
        if current is None:
            return
        screen = self.screen
        if isinstance(screen, OpensPapers):  # at once: a space typed right after Enter
            screen.open_paper(current)  # pages the paper opened, not marks a row here

    def on_click(self, event: events.Click) -> None:
        row = int(self.scroll_offset.y) + event.y
        if 0 <= row < len(self.source):
            if row == self.cursor and event.chain >= 2:
                self.action_open()
            self.move(row, by_user=True)

    def on_resize(self, event: events.Resize) -> None:
        self._set_rows(len(self.source))
        self._keep_visible()

    # -- drawing -----------------------------------------------------------------------------
    def _frame_styles(self) -> _Frame:
        return _Frame(
            width=self.scrollable_content_region.width,
            top=int(self.scroll_offset.y),
            base=self.get_visual_style(),
            cursor=self.get_visual_style("paper-list--cursor"),
            read=self.get_visual_style("paper-list--read"),
        )

    def render_lines(self, crop: Region) -> list[Strip]:
        """The lines of one frame: the styles, width and offset are looked up once for them
        all, not once per row."""
        self._frame = self._frame_styles()
        self._part_styles = None
        try:
            edges = self._plain_edges()
            if edges is not None:
                self._plain = True
                return self._render_plain(crop, edges)
            if self._plain:  # Textual's own pass again: its cache of lines is out of date
                self._plain = False
                self._edged.clear()
                self._styles_cache.clear()
            return super().render_lines(crop)
        finally:
            self._frame = None
            self._prepared.clear()

    def _plain_edges(self) -> _Edges | None:
        """What Textual's styling pass (``StylesCache.render_line`` and a crop: 35 lines
        of rows drawn before cost 4.9 ms that way, 2.0 ms here) adds to each row, when the
        list's styles add only its background and a right border; None when they add
        anything else (padding, a border on another side, an outline, a tint, opacity, a
        hatch, a hovered link), and Textual's own pass draws the list. The rows are drawn
        the same either way (tested)."""
        styles = self.styles
        (top, _), (right, right_color), (bottom, _), (left, _) = styles.border
        if top or bottom or left or any(edge for edge, _ in styles.outline):
            return None
        if any(styles.padding) or styles.tint.a or styles.text_opacity != 1.0:
            return None
        if self.BLANK or self.opacity != 1.0:
            return None
        if styles.has_rule("hatch") and styles.hatch != "none":
            return None
        hover = self.hover_style
        if self.auto_links and hover._link_id and hover._meta and "@click" in hover.meta:
            return None
        base_background, background = self.background_colors
        inner, outer = self._styles_cache.get_inner_outer(base_background, background)
        right_cell = None
        if right:
            edge = Style(foreground=base_background + right_color)
            right_cell = get_box(right, inner, outer, edge)[1][2]
        return _Edges(
            width=self.region.width,
            content_width=self.content_region.width,
            inner=inner.rich_style,
            right=right_cell,
            background=background,
            filters=tuple(self.get_line_filters()),
        )

    def _render_plain(self, crop: Region, edges: _Edges) -> list[Strip]:
        """The lines ``crop`` of the list as Textual's styling pass draws them (the row cut
        or padded to the content's width, then the right border's cell, then the app's line
        filters), each remembered with the row's strip it was made of: a row drawn again
        costs a lookup, and its filtered line is the one filtered before."""
        width, content_width, inner = edges.width, edges.content_width, edges.inner
        height = self.content_region.height
        edged = self._edged
        strips: list[Strip] = []
        for y in crop.line_range:
            if y < height:
                row = self.render_line(y)
            else:
                row = Strip.blank(content_width, inner)
            known = edged.get(y)
            if known is not None and known[0] is row and known[1] == edges:
                line = known[2]
            else:
                line = row.adjust_cell_length(content_width, inner)
                if edges.right is not None:
                    line = Strip([*line, edges.right], width)
                edged[y] = (row, edges, line)
            for line_filter in edges.filters:
                line = line.apply_filter(line_filter, edges.background)
            strips.append(line)
        if crop.column_span != (0, width):
            x1, x2 = crop.column_span
            strips = [strip.crop(x1, x2) for strip in strips]
        return strips

    def _styles_of_parts(self) -> tuple[Style, Style, Style, Style, Style]:
        styles = self._part_styles
        if styles is None or self._frame is None:  # looked up once per frame
            styles = self._part_styles = (
                self.get_visual_style("paper-list--marked"),
                self.get_visual_style("paper-list--flag"),
                self.get_visual_style("paper-list--match"),
                self.get_visual_style("paper-list--tag"),
                self.get_visual_style("paper-list--meta"),
            )
        return styles

    def _line_key(
        self,
        frame: _Frame,
        styles: tuple[Style, ...],
        index: int,
        row: Row | None,
    ) -> tuple[object, ...]:
        """What decides how line ``index`` (``row``, None past the last) looks: two
        lines with equal keys are drawn the same."""
        if row is None:
            return (None, frame.width, frame.base)
        return (row, frame.width, self._row_style(frame, index, row), styles)

    def _row_style(self, frame: _Frame, index: int, row: Row) -> Style:
        if index == self.cursor:
            return frame.cursor
        return frame.read if row.read else frame.base

    def render_line(self, y: int) -> Strip:
        frame = self._frame or self._frame_styles()
        width = frame.width
        index = frame.top + y
        base = frame.base
        if len(self.source) == 0:
            self._drawn.pop(y, None)
            lines = self.empty_message.split("\n")
            line = lines[y - 1] if 1 <= y <= len(lines) else Content("")
            style = self.get_visual_style("paper-list--empty")
            content = Content(" ") + line
            return Strip(content.truncate(width, pad=True).render_segments(style), width)
        styles = self._styles_of_parts()
        if index >= len(self.source):
            self._drawn[y] = self._line_key(frame, styles, index, None)
            return Strip.blank(width, base.rich_style)
        row = self._prepared.pop(index, None) or self.source.row(index)
        self._drawn[y] = self._line_key(frame, styles, index, row)
        return self._row_strip(row, width, self._row_style(frame, index, row), styles)

    def _row_strip(
        self, row: Row, width: int, base: Style, styles: tuple[Style, Style, Style, Style, Style]
    ) -> Strip:
        """Row ``row`` drawn ``width`` cells wide over ``base``; remembered, so a row that is
        drawn again (the cursor moved, the result was refined, another frame) costs a lookup."""
        key = (row, width, base, styles)
        cache = self._strips
        strip = cache.get(key)
        if strip is None:
            text, spans = _row_text(row, width, styles)
            strip = Strip(self._segments(text, spans, base), width)
            if len(cache) >= _STRIP_CACHE:
                del cache[next(iter(cache))]  # the oldest
            cache[key] = strip
        return strip

    def _segments(
        self, text: str, spans: list[tuple[int, int, Style]], base: Style
    ) -> list[Segment]:
        """What ``Content(text, spans).render_segments(base)`` draws, neighbours of one style
        joined, with the combined styles remembered across rows and frames."""
        if not spans:
            return [Segment(text, base.rich_style)]
        marks: list[tuple[int, bool, int]] = [(0, False, 0), (len(text), True, 0)]
        for index, (start, end, _style) in enumerate(spans, 1):
            marks.append((start, False, index))
            marks.append((end, True, index))
        marks.sort(key=lambda m: (m[0], m[1]))
        combined = self._combined
        stack: list[int] = []
        segments: list[Segment] = []
        for (offset, leaving, style_id), (next_offset, _, _) in pairwise(marks):
            if leaving:
                stack.remove(style_id)
            else:
                stack.append(style_id)
            if next_offset > offset:
                ids = sorted(stack)
                key = (base, *(spans[i - 1][2] for i in ids if i))
                rich = combined.get(key)
                if rich is None:
                    rich = Style.combine(key).rich_style
                    if len(combined) > 256:
                        combined.clear()
                    combined[key] = rich
                if segments and segments[-1].style is rich:  # one style change less to send
                    segments[-1] = Segment(segments[-1].text + text[offset:next_offset], rich)
                else:
                    segments.append(Segment(text[offset:next_offset], rich))
        return segments


def _cut(text: str, spans: list[tuple[int, int, Style]], width: int) -> str:
    """``text`` cut to ``width`` cells ending in "…" (as ``Content.truncate(ellipsis=True)``),
    with ``spans`` trimmed to it in place."""
    cut = set_cell_size(text, width - 1) + "…" if width else set_cell_size(text, 0)
    size = len(cut)
    spans[:] = [(s, min(size, e), st) for s, e, st in spans if s < size]
    return cut


def _row_text(
    row: Row, width: int, styles: tuple[Style, Style, Style, Style, Style]
) -> tuple[str, list[tuple[int, int, Style]]]:
    """The text of a row and its styled spans: flags, the title (matches marked), tags and
    venue on the right. Laid out as the former ``Content`` assembly did, cell for cell."""
    marked_style, flag_style, match_style, tag_style, meta_style = styles
    flags = ("▌" if row.marked else " ") + ("★" if row.bookmarked else " ")
    flags += ("●" if not row.read else " ") + " "
    flag_spans = [(0, 1, marked_style), (1, 2, flag_style), (2, 3, flag_style)]
    # the right part: tags, then the venue
    right_spans: list[tuple[int, int, Style]] = []
    room = width - 4 - 1
    if row.tags:
        tag_text = " ".join(tag_query(t) for t in row.tags)
        tag_spans = [(0, len(tag_text), tag_style)] if tag_text else []
        # too long: the tags are cut, not the venue after them (with room for 4 cells of tags)
        tag_room = max(0, room // 3) - cell_len(row.venue) - 1
        if row.venue and cell_len(tag_text) > tag_room >= 4:
            tag_text = _cut(tag_text, tag_spans, tag_room)
        right_spans += tag_spans
        right = tag_text + " " + row.venue
        if row.venue:
            right_spans.append((len(tag_text) + 1, len(right), meta_style))
    else:
        right = row.venue
        if right:
            right_spans.append((0, len(right), meta_style))
    right_cells = cell_len(right)
    right_room = min(right_cells, max(0, room // 3))
    if right_room < right_cells:
        right = _cut(right, right_spans, right_room)
        right_cells = cell_len(right)
    title_room = max(0, room - right_cells - 1)
    title = row.title
    title_spans = [(s, e, match_style) for s, e in row.spans if s < e and s < len(title)]
    title_spans = [(s, min(e, len(title)), st) for s, e, st in title_spans]
    title_cells = cell_len(title)
    if title_cells < title_room:
        title += " " * (title_room - title_cells)
    elif title_cells > title_room:
        title = _cut(title, title_spans, title_room)
    text = flags + title + " " + right + " "
    spans = flag_spans
    at = len(flags)
    spans += [(s + at, e + at, st) for s, e, st in title_spans]
    at += len(title) + 1
    spans += [(s + at, e + at, st) for s, e, st in right_spans]
    cells = cell_len(text)
    if cells < width:
        text += " " * (width - cells)
    elif cells > width:
        text = set_cell_size(text, width)
        size = len(text)
        spans = [(s, min(size, e), st) for s, e, st in spans if s < size]
    return text, spans
