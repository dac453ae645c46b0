"""The paper list: a virtual list that draws only the rows on screen (the Line API).

It knows nothing of search or storage: the app gives it a ``RowSource`` (how many rows,
and how to describe row *i*) and it draws, scrolls and moves a cursor over it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Protocol

from textual import events
from textual.binding import BindingType
from textual.content import Content
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from ..commands import bindings


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


def tag_label(tag: str) -> str:
    """How a tag is shown: `#theory`, and `#"reading list"` (quoted, as the filter takes it)
    when it has a space, so it reads as one tag."""
    return f'#"{tag}"' if " " in tag else f"#{tag}"


class RowSource(Protocol):
    def __len__(self) -> int: ...
    def row(self, index: int) -> Row: ...


class _Empty:
    def __len__(self) -> int:
        return 0

    def row(self, index: int) -> Row:
        raise IndexError(index)


class PaperList(ScrollView, can_focus=True):
    """A cursor over rows. Posts ``CursorMoved`` and ``Opened``."""

    BINDINGS: ClassVar[list[BindingType]] = list(bindings("list"))

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

    cursor: reactive[int] = reactive(0, always_update=True, init=False)

    class CursorMoved(Message):
        """The cursor is on another paper; ``by_user`` when a key or click of the user moved
        it (not a new result, a load or a restore): only then may the paper become read."""

        def __init__(self, paper_id: str | None, by_user: bool = False) -> None:
            self.paper_id = paper_id
            self.by_user = by_user
            super().__init__()

    class Opened(Message):
        def __init__(self, paper_id: str) -> None:
            self.paper_id = paper_id
            super().__init__()

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.source: RowSource = _Empty()
        self.empty_message: Content = Content("")
        self._last_reported: str | None = "\0"
        self._by_user = False

    # -- data ------------------------------------------------------------------------------
    def set_source(self, source: RowSource, cursor: int = 0) -> None:
        self.source = source
        self.virtual_size = Size(self.size.width, len(source))
        self.cursor = max(0, min(cursor, len(source) - 1))
        self.refresh()

    def refresh_rows(self) -> None:
        """Redraw (a paper's flags or tags changed)."""
        self.refresh()

    @property
    def current_id(self) -> str | None:
        if len(self.source) == 0:
            return None
        return self.source.row(self.cursor).paper_id

    # -- cursor ----------------------------------------------------------------------------
    def validate_cursor(self, value: int) -> int:
        return max(0, min(value, len(self.source) - 1)) if len(self.source) else 0

    def watch_cursor(self, value: int) -> None:
        self._keep_visible()
        self.refresh()
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
        if current is not None:
            self.post_message(self.Opened(current))

    def on_click(self, event: events.Click) -> None:
        row = int(self.scroll_offset.y) + event.y
        if 0 <= row < len(self.source):
            if row == self.cursor and event.chain >= 2:
                self.action_open()
            self.move(row, by_user=True)

    def on_resize(self, event: events.Resize) -> None:
        self.virtual_size = Size(event.size.width, len(self.source))
        self._keep_visible()

    # -- drawing -----------------------------------------------------------------------------
    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        index = int(self.scroll_offset.y) + y
        base = self.get_visual_style()
        if len(self.source) == 0:
            lines = self.empty_message.split("\n")
            line = lines[y - 1] if 1 <= y <= len(lines) else Content("")
            style = self.get_visual_style("paper-list--empty")
            content = Content(" ") + line
            return Strip(content.truncate(width, pad=True).render_segments(style), width)
        if index >= len(self.source):
            return Strip.blank(width, base.rich_style)
        row = self.source.row(index)
        content = self._row_content(row, width)
        if index == self.cursor:
            style = self.get_visual_style("paper-list--cursor")
        elif row.read:
            style = self.get_visual_style("paper-list--read")
        else:
            style = base
        return Strip(content.render_segments(style), width)

    def _row_content(self, row: Row, width: int) -> Content:
        flag_style = self.get_visual_style("paper-list--flag")
        meta_style = self.get_visual_style("paper-list--meta")
        match_style = self.get_visual_style("paper-list--match")
        marked = "▌" if row.marked else " "
        flags = Content.assemble(
            (marked, self.get_visual_style("paper-list--marked")),
            ("★" if row.bookmarked else " ", flag_style),
            ("●" if not row.read else " ", flag_style),
            " ",
        )
        right_parts: list[Content] = []
        if row.tags:
            tag_text = " ".join(tag_label(t) for t in row.tags)
            right_parts.append(Content(tag_text).stylize(self.get_visual_style("paper-list--tag")))
        right_parts.append(Content(row.venue).stylize(meta_style))
        right = Content(" ").join(right_parts)
        title = Content(row.title)
        for start, end in row.spans:
            title = title.stylize(match_style, start, end)
        room = width - flags.cell_length - 1
        right_room = min(right.cell_length, max(0, room // 3))
        if right_room < right.cell_length:
            right = right.truncate(right_room, ellipsis=True)
        title_room = max(0, room - right.cell_length - 1)
        title = title.truncate(title_room, ellipsis=True, pad=True)
        return Content.assemble(flags, title, " ", right, " ").truncate(width, pad=True)
