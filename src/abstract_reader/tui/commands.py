"""Every command of the reader, declared once.

One row gives a command its key bindings (each with an ``id``, so keys can be remapped with
``App.set_keymap``), its command-palette entry and its line on the ``?`` help screen; a test
checks that ``docs/keys.md`` lists each of them. Where a command lives:

- ``app``: the App (quit, help, suspend) — works on every screen;
- ``main``: the main screen (library and citation actions, moving between unread papers …);
  the ones marked ``on_paper`` also work on the narrow full-screen paper;
- ``list`` / ``view``: the paper list and the paper view (moving, scrolling);
- ``paper``: the full-screen paper only.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

from textual.binding import Binding

Where = Literal["app", "main", "list", "view", "paper"]


@dataclass(frozen=True, slots=True)
class Command:
    id: str  #: the binding id (the name used to remap its keys)
    title: str  #: the palette entry
    help: str  #: the help line and the palette's description
    section: str  #: the help screen's section
    keys: str = ""  #: Textual key names, comma-separated; "" → palette only
    display: str = ""  #: the keys as the help screen and docs/keys.md write them
    where: Where = "main"
    action: str = ""  #: the action it runs (default: its id)
    footer: str = ""  #: its label in the footer ("" → not shown there)
    palette: bool = True
    priority: bool = False
    on_paper: bool = False  #: a main-screen command that also works on the paper screen
    #: its ``footer`` label in the paper screen's footer too (that footer has room at 70
    #: columns for the keys that act on the paper, and Esc, only)
    paper_footer: bool = True

    @property
    def action_name(self) -> str:
        return self.action or self.id


C = Command
# fmt: off
COMMANDS: tuple[Command, ...] = (
    # -- moving ------------------------------------------------------------------------------
    C("down", "Next paper", "next / previous paper", "Moving", "j,down", "j / k, ↓ / ↑",
      "list", "cursor_down", palette=False),
    C("up", "Previous paper", "previous paper", "Moving", "k,up", "", "list", "cursor_up",
      palette=False),
    C("first", "First paper", "first / last paper", "Moving", "g,home", "g / G, Home / End",
      "list", palette=False),
    C("last", "Last paper", "last paper", "Moving", "G,end", "", "list", palette=False),
    C("page_down", "Page down", "a page down / up", "Moving", "pagedown", "PgDn / PgUp", "list",
      palette=False),
    C("page_up", "Page up", "a page up", "Moving", "pageup", "", "list", palette=False),
    C("open", "Open paper", "open the paper (focus the view; full screen when narrow)",
      "Moving", "enter", "Enter", "list", footer="Open", palette=False),
    C("next_unread", "Next unread", "next / previous unread paper", "Moving", "n", "n / N",
      on_paper=True),
    C("previous_unread", "Previous unread", "Move to the previous unread paper", "Moving", "N",
      on_paper=True),
    C("view_page_down", "Page the paper", "page the paper down / up (in the paper view)",
      "Moving", "space,pagedown", "space / shift+space", "view", "page_down", palette=False),
    C("view_page_up", "Page the paper up", "page the paper up", "Moving", "shift+space,pageup",
      "", "view", "page_up", palette=False),
    C("view_down", "Scroll down", "scroll the paper / to its top or bottom (in the paper view)",
      "Moving", "j,down", "j / k, g / G", "view", "scroll_down", palette=False),
    C("view_up", "Scroll up", "scroll the paper up", "Moving", "k,up", "", "view", "scroll_up",
      palette=False),
    C("view_top", "Top of the paper", "top of the paper", "Moving", "g,home", "", "view",
      "scroll_home", palette=False),
    C("view_bottom", "Bottom of the paper", "bottom of the paper", "Moving", "G,end", "", "view",
      "scroll_end", palette=False),
    C("back", "Back to the list", "back to the list", "Moving", "escape", "", "paper",
      footer="Back", palette=False),
    # -- filtering ---------------------------------------------------------------------------
    C("focus_filter", "Filter", "focus the filter bar (Enter or Esc leaves it)", "Filtering",
      "slash", "/", footer="Filter", priority=True, on_paper=True, paper_footer=False),
    C("escape", "Back / clear", "leave the filter or the paper / clear the marks / clear the "
      "filter (Esc again brings it back)", "Filtering", "escape", "Esc", palette=False),
    C("history_back", "Earlier query", "in the filter bar: earlier / later queries (kept in the "
      "library)", "Filtering", "up", "↑ / ↓ (filter)", palette=False),
    C("history_forward", "Later query", "a later query", "Filtering", "down", palette=False),
    C("sort", "Sort", "sort by relevance, dump order, title, year, recently tagged or "
      "bookmarked, unread first (cycles; shown in the status)", "Filtering", "s", "s",
      footer="Sort"),
    C("show_bookmarked", "Show bookmarked", "Filter to bookmarked papers", "Filtering",
      action="set_filter('is:bookmarked')"),
    C("show_unread", "Show unread", "Filter to unread papers", "Filtering",
      action="set_filter('is:unread')"),
    C("clear_filter", "Clear filter", "Show every paper", "Filtering", action="set_filter('')"),
    C("more_like", "More like this", "every paper ranked by likeness to this one (like:ID)",
      "Filtering", "m", "m", on_paper=True),
    C("save_search", "Save search", "name the filter's query: @name in the filter (or -q @name "
      "in the CLI) runs it again", "Filtering", "S", "S", on_paper=True),
    C("saved_searches", "Saved searches", "the saved searches with their queries: type to "
      "filter, Enter runs one, ctrl+d deletes one", "Filtering", "at", "@", on_paper=True),
    C("triage", "Triage", "triage the filter's papers one at a time: b keep, r skip, t tag, "
      "l later, p back, u undo, Esc leaves", "Filtering", "exclamation_mark", "!",
      on_paper=True),
    # -- library -----------------------------------------------------------------------------
    C("bookmark", "Bookmark", "bookmark on/off (all marked papers when some are marked)",
      "Library", "b", "b", footer="Bookmark", on_paper=True),
    C("toggle_read", "Toggle read", "read on/off (marked papers too)", "Library", "r", "r",
      footer="Read", on_paper=True),
    C("mark", "Mark for bulk action", "mark / unmark the paper for a bulk action, and move "
      "down", "Library", "space", "space", "list", "screen.mark", footer="Mark"),
    C("tags", "Edit tags", "edit tags (Tab completes, Enter adds, Enter on empty saves)",
      "Library", "t", "t", footer="Tags", on_paper=True),
    C("tag_list", "Tag list", "every tag with its count: Enter filters, m ranks like it, r "
      "renames, d d deletes", "Library", "T", "T", on_paper=True),
    C("edit_metadata", "Edit metadata", "edit the real title, authors, URL, DOI, year",
      "Library", "e", "e", on_paper=True),
    C("match_metadata", "Match metadata", "match the papers to the loaded metadata files "
      "(.jsonl .json .bib .ris) and store their real titles and authors", "Library", "M", "M"),
    C("note", "Edit note", "edit the note (ctrl+s saves, Esc asks before dropping changes)",
      "Library", "o", "o", on_paper=True),
    C("undo", "Undo", "undo the last change to the library (says what it undid)", "Library",
      "u", "u", on_paper=True),
    C("toggle_auto_read", "Toggle auto-read", "Mark papers read when shown for a moment",
      "Library"),
    # -- citations ---------------------------------------------------------------------------
    C("copy", "Copy citation", "copy the citation (marked papers too) in the default format",
      "Citations", "c", "c", footer="Copy", on_paper=True),
    C("cite_picker", "Copy citation as…", "choose a format, with a live preview", "Citations",
      "C", "C", on_paper=True),
    C("open_link", "Open link", "open the paper's link (URL, DOI or arXiv page) in the web "
      "browser ($BROWSER)", "Citations", "O", "O", on_paper=True),
    C("export", "Export to a file…", "export the view (in its order) or the marked papers to "
      "a file: BibTeX, Markdown, CSL-JSON, CSV, JSON Lines, text", "Citations", "E", "E",
      on_paper=True),
    C("copy_id", "Copy id", "Copy the paper's id (marked papers too)", "Citations",
      action="copy_part('id')"),
    C("copy_abstract", "Copy abstract", "Copy the abstract's text (marked papers too)",
      "Citations", action="copy_part('abstract')"),
    C("copy_link", "Copy link", "Copy the paper's link (marked papers too)", "Citations",
      action="copy_part('link')"),
    # -- app ---------------------------------------------------------------------------------
    C("help", "Help", "this help: keys and the query language", "App", "question_mark", "?",
      "app", footer="Help"),
    C("command_palette", "Command palette", "command palette: every action by name", "App",
      "ctrl+p", "ctrl+p", "app", palette=False),
    C("quit", "Quit", "quit (the filter, the paper and the theme are restored next time)",
      "App", "q,ctrl+c", "q, ctrl+c", "app", footer="Quit", palette=False),
    C("suspend_process", "Suspend", "suspend to the shell (fg comes back)", "App", "ctrl+z",
      "ctrl+z", "app", palette=False),
)
# fmt: on
del C

BY_ID: dict[str, Command] = {c.id: c for c in COMMANDS}

#: The main screen's footer keys, most wanted first. Where they do not all fit (under 120
#: columns), the footer leaves out the last ones (``FittedFooter``): `? Help` and `q Quit`
#: stay, then the command palette key (``MAIN_FOOTER_PALETTE_AFTER``), then the rest. The
#: keys left out still work, and `?` lists them.
MAIN_FOOTER_PRIORITY: tuple[str, ...] = (
    *("help", "quit", "open", "focus_filter", "bookmark"),
    *("mark", "sort", "toggle_read", "tags", "copy"),
)
MAIN_FOOTER_PALETTE_AFTER = 2


#: The full-screen paper's footer keys, most wanted first: the way back, `? Help` and
#: `q Quit`, then the keys that act on the paper. Under 61 columns the last ones are left
#: out (they still work, and `?` lists them).
PAPER_FOOTER_PRIORITY: tuple[str, ...] = (
    *("back", "help", "quit"),
    *("bookmark", "toggle_read", "tags", "copy"),
)


def footer_priority(ids: tuple[str, ...]) -> list[str]:
    """The actions of the commands ``ids`` (what a footer key knows of its binding)."""
    return [BY_ID[id_].action_name for id_ in ids]


def paper_footer_priority() -> list[str]:
    """``PAPER_FOOTER_PRIORITY`` as the actions of the paper screen's bindings (a main-screen
    command's key there runs ``app.main_command(...)``) and of the App's."""
    actions = {b.id: b.action for b in [*paper_screen_bindings(), *bindings("app")]}
    return [actions[id_] for id_ in PAPER_FOOTER_PRIORITY]


#: Binding ids of the dialogs' own keys (remappable too).
EXTRA_BINDING_IDS = frozenset(
    {
        "editor_cancel",
        "editor_save",
        "meta_next",
        "meta_previous",
        "meta_candidate",
        "note_external_editor",
        "conflict_mine",
        "conflict_theirs",
        "conflict_merge",
        "conflict_cancel",
        "conflict_save",
        *("triage_keep", "triage_skip", "triage_tag", "triage_later", "triage_back"),
        *("triage_undo", "triage_leave", "taglist_like"),
        *("filter_apply", "filter_back"),
        *("saved_close", "saved_delete"),
        *("export_yes", "export_no"),
    }
)


def _binding(command: Command, action: str | None = None, *, show: bool = True) -> Binding:
    return Binding(
        command.keys,
        action or command.action_name,
        command.footer or command.title,
        show=show and bool(command.footer),
        priority=command.priority,
        id=command.id,
    )


def bindings(where: Where) -> list[Binding]:
    """The bindings of one place, from the table."""
    return [_binding(c) for c in COMMANDS if c.where == where and c.keys]


def paper_screen_bindings() -> list[Binding]:
    """The full-screen paper's own keys, plus the main-screen commands that work there (they
    run on the main screen, through the App)."""
    own = bindings("paper")
    forwarded = [
        _binding(c, f"app.main_command({c.action_name!r})", show=c.paper_footer)
        for c in COMMANDS
        if c.where == "main" and c.on_paper and c.keys
    ]
    return own + forwarded


def palette_commands() -> Iterator[Command]:
    return (c for c in COMMANDS if c.palette)


def help_rows() -> Iterator[tuple[str, list[tuple[str, str]]]]:
    """(section, [(keys, what)]) in table order; a command without keys of its own (the
    second half of a pair such as k in j / k) is described by its partner's line."""
    sections: dict[str, list[tuple[str, str]]] = {}
    for command in COMMANDS:
        if command.display:
            sections.setdefault(command.section, []).append((command.display, command.help))
    sections.setdefault("Moving", []).extend(
        [
            ("Tab / Shift+Tab", "move focus between filter, list and paper"),
            ("mouse", "click a row to select it (again to open), scroll with the wheel"),
        ]
    )
    yield from sections.items()
