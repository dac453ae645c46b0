"""The citation actions of the reader: copy in the default format, or pick one.

A mixin of ReaderApp. Formats come from `cite`, the copy chain from `clipboard`; this only
decides which papers, and tells the user which way the copy went.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import TYPE_CHECKING

from textual import work

from .library_actions import LibraryActions

if TYPE_CHECKING:
    from ..cite import Record
    from ..clipboard import CopyResult
    from ..corpus import Paper


class CitationActions(LibraryActions):
    def _records(self, papers: Iterable[Paper]) -> list[Record]:
        from ..cite import record

        snap = self.library.snapshot
        return [record(p, snap) for p in papers]

    def default_format(self) -> str:
        from ..cite import FORMATS

        fmt = self.library.setting("cite_format", "bibtex") or "bibtex"
        return fmt if fmt in FORMATS else "bibtex"

    def action_copy(self, fmt: str | None = None) -> None:
        from ..cite import FORMAT_NAMES, format_records

        papers = self._targets()
        if not papers:
            return
        chosen = fmt or self.default_format()
        text = format_records(self._records(papers), chosen)
        count = f"{len(papers)} paper{'s' if len(papers) != 1 else ''}"
        self._copy(text, f"{FORMAT_NAMES[chosen]} for {count}")

    def action_cite_picker(self) -> None:
        from ..cite import format_records
        from .screens.pickers import CitePicker

        papers = self._targets()
        if not papers:
            return
        records = self._records(papers)

        def done(choice: tuple[str, bool] | None) -> None:
            if choice is None:
                return
            fmt, make_default = choice
            if make_default:
                self._write(lambda: self.library.set_setting("cite_format", fmt))
            self.action_copy(fmt)

        self.push_screen(
            CitePicker(
                lambda f: format_records(records, f), self.default_format(), self._what(papers)
            ),
            done,
        )

    @work(thread=True, group="copy")
    def _copy(self, text: str, what: str) -> None:
        from ..clipboard import copy_with_system_tool

        result = copy_with_system_tool(text)
        self.call_from_thread(self._copied, text, what, result)

    def _copied(self, text: str, what: str, result: CopyResult) -> None:
        from ..clipboard import OSC52_NOTE
        from .screens.pickers import CopyFallback

        if result.ok:
            self.notify(f"Copied {what} ({result.method})", markup=False)
            return
        if self._terminal_clipboard(text):
            self.notify(f"Copied {what} ({OSC52_NOTE})", markup=False, timeout=6)
            return
        self.push_screen(
            CopyFallback(
                text, f"{result.detail}; and no terminal to send OSC 52 to. The text is below."
            )
        )

    def _terminal_clipboard(self, text: str) -> bool:
        """OSC 52 through the terminal (wrapped for tmux); False when there is none."""
        from ..clipboard import osc52_sequence

        driver = self._driver
        if self.is_headless or driver is None or os.environ.get("TERM") == "dumb":
            return False
        if os.environ.get("TMUX"):
            driver.write(osc52_sequence(text, tmux=True))
        else:
            self.copy_to_clipboard(text)
        return True
