"""The paper full screen, for narrow terminals."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widgets import Footer

from ..widgets.paper_view import PaperDetails, PaperView


class PaperScreen(Screen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "app.pop_screen", "Back")]

    def __init__(self, details: PaperDetails) -> None:
        super().__init__()
        self.details = details

    def compose(self) -> ComposeResult:
        yield PaperView(id="paper-full")
        yield Footer()

    def on_mount(self) -> None:
        view = self.query_one(PaperView)
        view.show(self.details)
        view.focus()

    def update(self, details: PaperDetails) -> None:
        self.details = details
        self.query_one(PaperView).show(details)
