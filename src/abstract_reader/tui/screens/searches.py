"""Saved searches: name the current filter (a small name prompt), and the list of saved
searches (filter as you type, Enter runs one, ctrl+d deletes one after asking).

The searches themselves live in the library's settings (``abstract_reader.saved``), so the
CLI (``-q @name``, ``abstract-reader searches``) and every reader share them; these screens only
ask and show. Esc follows the one rule: it cancels, and asks first when something typed
would be lost (a name) or a question is pending (it then only takes the question back).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Footer, Input, OptionList, Static
from textual.widgets.option_list import Option

from ...saved import SavedSearchError, check_name, matching, problems, saving_problem
from ..commands import DIALOG_BINDINGS, keyed
from ..widgets.fitted_input import FittedInput
from ..widgets.keys_in_order import OrderedOptionList
from .editors import _Editor

#: How often an open list looks for searches saved or deleted elsewhere (the CLI, another
#: reader); the same rate as the main screen's poll of the library.
POLL_S = 1.0


def _shown_query(query: str, limit: int = 200) -> str:
    return query if len(query) <= limit else query[: limit - 1] + "…"


class SaveSearchDialog(_Editor[str]):
    """Ask for a name for ``query``; the name goes to the caller's save (``saves_with``),
    and the dialog stays open, with the name typed, until the library has it (a busy or
    failing library closed it and lost the name). A name already saved with another query
    is replaced only after a second Enter."""

    def __init__(self, query: str, existing: Callable[[], dict[str, str]]) -> None:
        super().__init__()
        self.query_text = query
        self.existing = existing  #: the saved searches now (read when Enter is pressed)
        self._overwrite: str | None = None  #: the name Enter again replaces

    def compose(self) -> ComposeResult:
        with Vertical(id="save-search-box", classes="modal-box"):
            yield Static("Save the filter as a search", classes="modal-title")
            yield Static(
                Content.assemble(("Query  ", "$text-muted"), _shown_query(self.query_text)),
                id="save-search-query",
                markup=False,
            )
            yield FittedInput(
                placeholder="name — letters, digits, - and _",
                on_enter=self.action_save,
                id="save-search-name",
            )
            yield Static(id="save-search-message", markup=False)
            yield Static(  # wraps on a small terminal (a Label would be cut)
                keyed(self.app, "Enter: save · {editor_cancel}: cancel · ")
                + "then @name in the filter (or -q @name in the "
                "CLI) runs it",
                classes="modal-hint",
                markup=False,
            )
        yield Footer()  # the dialog's own keys

    def on_mount(self) -> None:
        self.query_one("#save-search-name", Input).focus()

    @property
    def name_typed(self) -> str:
        return self.query_one("#save-search-name", Input).value.strip()

    def changed(self) -> bool:
        return bool(self.name_typed)

    def edits(self) -> tuple[object, ...]:
        return (self.query_one("#save-search-name", Input).value,)

    def show_message(self, message: Content) -> None:
        self.query_one("#save-search-message", Static).update(message)

    @on(Input.Changed, "#save-search-name")
    def _typed(self) -> None:
        self._overwrite = None  # a question about another name no longer stands
        self.query_one("#save-search-message", Static).update("")

    def action_save(self) -> None:
        try:
            name = check_name(self.name_typed)
        except SavedSearchError as exc:
            self.warn(str(exc))
            return
        existing = self.existing()
        problem = saving_problem(existing, name, self.query_text.strip())
        if problem is not None:  # (@a using @b using @a: it would match nothing, ever)
            self.warn(problem)
            return
        stored = existing.get(name)
        if stored is not None and stored != self.query_text.strip() and self._overwrite != name:
            self._overwrite = name
            self.warn(  # (the stored query is library text: never read for key names)
                f"@{name} is saved as “{_shown_query(stored, 80)}”: "
                + keyed(self.app, "Enter again replaces it, {editor_cancel} keeps it.")
            )
            return
        self.submit(name)

    def action_cancel(self) -> None:
        if self._overwrite is not None:  # Esc answers the question: keep the stored one
            self._overwrite = None
            self.say(
                Content(
                    keyed(
                        self.app,
                        "Kept the stored search: type another name, or {editor_cancel} to cancel.",
                    )
                )
            )
            self._asked_at = self.edits()  # as it says: the next Esc cancels, not asks again
            return
        super().action_cancel()


@dataclass(frozen=True, slots=True)
class SearchAction:
    """What the list of saved searches asks for: run one, or delete one."""

    kind: str  # "run" | "delete"
    name: str
    query: str


class _FilterField(FittedInput):
    """The list's filter field: ↑ / ↓ / PgUp / PgDn move through the list below it (they
    mean nothing in a one-line field), everything else is text. The moves have ids
    (``saved_up`` …): remappable, and checked for clashes with the dialog's keys. They run
    as the key reaches the field, in the order typed, with the config file's remaps
    (``FittedInput``: ``keys_in_order.run_own_binding``)."""

    BINDINGS: ClassVar[list[BindingType]] = list(DIALOG_BINDINGS["saved_filter"])

    def action_move(self, how: str) -> None:
        screen = self.screen
        if isinstance(screen, SavedSearches):
            screen.move(how)


class SavedSearches(ModalScreen[SearchAction | None]):
    """Every saved search with its query, filtered as you type. Enter runs the highlighted
    one; ctrl+d deletes it after a second ctrl+d; Esc takes a pending question back, else
    closes."""

    BINDINGS: ClassVar[list[BindingType]] = list(DIALOG_BINDINGS["saved"])

    def __init__(self, load: Callable[[], dict[str, str]]) -> None:
        super().__init__()
        self.load = load  #: the saved searches now (after a look at the library)
        self.searches = load()
        self._names: list[str] = []
        self._filled_for: str | None = None  # what was typed when the list was filled
        self._confirm_delete: str | None = None

    def compose(self) -> ComposeResult:
        with Vertical(id="saved-box", classes="modal-box"):
            yield Static("Saved searches", classes="modal-title")
            yield _FilterField(
                placeholder="type to filter by name or query",
                on_enter=self._enter,
                id="saved-filter",
            )
            yield OrderedOptionList(id="saved-list")
            yield Static(id="saved-message", markup=False)
            yield Static(
                keyed(
                    self.app, "Enter: run · ↑↓ move · {saved_delete}: delete · {saved_close}: close"
                ),
                classes="modal-hint",
                markup=False,
            )
        yield Footer()  # the dialog's own keys

    def on_mount(self) -> None:
        self._fill()
        self.query_one("#saved-filter", Input).focus()
        self.set_interval(POLL_S, self._poll)

    def _poll(self) -> None:
        searches = self.load()
        if searches != self.searches:
            self.searches = searches
            self._fill(keep=True)

    def _fill(self, *, keep: bool = False) -> None:
        """Show the searches matching what is typed, the best first and highlighted (or,
        ``keep``, the one highlighted before, when it is still there)."""
        options = self.query_one("#saved-list", OptionList)
        current = self._current() if keep else None
        typed = self.query_one("#saved-filter", Input).value
        self._filled_for = typed
        self._names = matching(self.searches, typed)
        options.clear_options()
        if not self.searches:
            options.add_option(
                Option(
                    Content("No saved searches yet: S in the list names the current filter."),
                    disabled=True,
                )
            )
            return
        if not self._names:
            options.add_option(Option(Content("No saved search matches."), disabled=True))
            return
        broken = problems(self.searches)  # a loop saved before they were refused, or elsewhere
        options.add_options(
            [
                Option(
                    Content.assemble(
                        ("@" + name, "bold"),
                        ("  " + _shown_query(self.searches[name]), "$text-muted"),
                        (
                            f"  ⚠ matches nothing: {broken[name]}" if name in broken else "",
                            "$text-warning",
                        ),
                    ),
                    id=name,
                )
                for name in self._names
            ]
        )
        options.highlighted = self._names.index(current) if current in self._names else 0

    def _current(self) -> str | None:
        options = self.query_one("#saved-list", OptionList)
        index = options.highlighted
        if index is None or not self._names or index >= len(self._names):
            return None
        return self._names[index]

    def _say(self, text: str, style: str = "") -> None:
        content = Content(text)
        self.query_one("#saved-message", Static).update(
            content.stylize(style) if style else content
        )

    @on(Input.Changed, "#saved-filter")
    def _typed(self) -> None:
        self._confirm_delete = None
        self._say("")
        self._fill()

    def move(self, how: str) -> None:
        """A move through the list from the field (``saved_down`` …), as it reaches the
        field: in the list shown for what is typed now (its Input.Changed may not have come
        yet). In a burst "rob ctrl+n ⏎" the move was made in the list as it was before
        "rob", and Enter, filling the list for "rob", put the highlight back on its first."""
        if self.query_one("#saved-filter", Input).value != self._filled_for:
            self._fill()
        getattr(self.query_one("#saved-list", OptionList), f"action_{how}")()

    def _enter(self) -> None:
        """Enter, as it reaches the field (`FittedInput.on_enter`): run the search that the
        list shows for what is typed now (its Input.Changed may not have come yet; when it
        has, the highlight the user moved to stays)."""
        if self.query_one("#saved-filter", Input).value != self._filled_for:
            self._fill()
        self._run(self._current())

    @on(OptionList.OptionSelected, "#saved-list")
    def _selected(self, event: OptionList.OptionSelected) -> None:
        self._run(event.option.id)

    def _run(self, name: str | None) -> None:
        if name is not None and name in self.searches:
            self.dismiss(SearchAction("run", name, self.searches[name]))

    def action_delete(self) -> None:
        name = self._current()
        if name is None:
            return
        if self._confirm_delete == name:
            self.dismiss(SearchAction("delete", name, self.searches[name]))
            return
        self._confirm_delete = name
        again = keyed(self.app, "{saved_delete} again deletes it, {saved_close} keeps it.")
        self._say(f"Delete @{name}? {again}", "$text-warning")

    def action_cancel(self) -> None:
        if self._confirm_delete is not None:
            self._confirm_delete = None
            self._say("Kept.")
            return
        self.dismiss(None)
