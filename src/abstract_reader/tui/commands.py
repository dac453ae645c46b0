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

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, cast

from textual.binding import Binding

Where = Literal["app", "main", "list", "view", "paper"]


@dataclass(frozen=True, slots=True)
class Command:
    id: str  #: the binding id (the name used to remap its keys)
    title: str  #: the palette entry
    #: the help line and the palette's description; ``{binding_id}`` names a key, written as
    #: the first key in effect of that binding (``with_keys``), so a remap shows there too
    help: str
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
    C("focus_filter", "Filter", "focus the filter bar ({filter_apply} or {filter_back} leaves "
      "it)", "Filtering",
      "slash", "/", footer="Filter", priority=True, on_paper=True, paper_footer=False),
    C("escape", "Back / clear", "leave the filter or the paper / clear the marks / clear the "
      "filter ({escape} again brings it back)", "Filtering", "escape", "Esc", palette=False),
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
      "filter, Enter runs one, {saved_delete} deletes one", "Filtering", "at", "@",
      on_paper=True),
    C("triage", "Triage", "triage the filter's papers one at a time: {triage_keep} keep, "
      "{triage_skip} skip, {triage_tag} tag, {triage_later} later, {triage_back} back, "
      "{triage_undo} undo, {triage_leave} leaves", "Filtering", "exclamation_mark", "!",
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
    C("tag_list", "Tag list", "every tag with its count: Enter filters, {taglist_like} ranks "
      "like it, {taglist_rename} renames, {taglist_delete} {taglist_delete} deletes", "Library",
      "T", "T", on_paper=True),
    C("edit_metadata", "Edit metadata", "edit the real title, authors, URL, DOI, year",
      "Library", "e", "e", on_paper=True),
    C("match_metadata", "Match metadata", "match the papers to the loaded metadata files "
      "(.jsonl .json .bib .ris) and store their real titles and authors", "Library", "M", "M"),
    C("note", "Edit note", "edit the note ({editor_save} saves, {editor_cancel} asks before "
      "dropping changes)", "Library", "o", "o", on_paper=True),
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
    C("load_problems", "Load problems", "every load problem: the paths not loaded, then the "
      "files loaded with warnings", "App", "L", "L", on_paper=True),
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


#: The dialogs' (and the filter bar's) own keys that have ids, so they can be remapped, by
#: the group of keys that are active together: each dialog's ``BINDINGS`` takes its group from
#: here, so the keys ``keymap.py`` checks for clashes are the keys bound.
DIALOG_BINDINGS: dict[str, tuple[Binding, ...]] = {
    "filter": (
        Binding("enter", "submit", "Apply", key_display="⏎", id="filter_apply", priority=True),
        Binding(
            "escape",
            "screen.escape",
            "Back to the list",
            key_display="Esc",
            id="filter_back",
            priority=True,
        ),
    ),
    "editor": (
        Binding("escape", "cancel", "Cancel", id="editor_cancel"),
        Binding("ctrl+s", "save", "Save", id="editor_save"),
    ),
    # priority: Tab moves the focus when it arrives, before the keys typed after it are
    # forwarded; otherwise a fast "title⇥authors" put the authors into the title.
    "meta": (
        Binding("tab", "app.focus_next", "Next field", show=False, priority=True, id="meta_next"),
        Binding(
            "shift+tab",
            "app.focus_previous",
            "Previous field",
            show=False,
            priority=True,
            id="meta_previous",
        ),
        Binding("ctrl+y", "use_candidate", "Use candidate", priority=True, id="meta_candidate"),
    ),
    "note": (Binding("ctrl+o", "external_editor", "$EDITOR", id="note_external_editor"),),
    # the tag editor's: the selected tag of its list; in the empty field its keys (not ↑,
    # which moves there as in any list) first select the last tag, as ⌫ goes back through
    # a text, and only then remove it
    "tags": (Binding("delete,backspace", "remove", "Remove tag", show=False, id="tags_remove"),),
    # only while the question is asked (check_action); the file name field gives up the
    # focus meanwhile (a focused Input takes every letter before any binding sees it)
    "export": (
        Binding("ctrl+s", "save", "Export", id="editor_save"),  # the editors' key, named
        Binding("y", "answer(True)", "Yes", priority=True, id="export_yes"),
        Binding("n", "answer(False)", "No", priority=True, id="export_no"),
    ),
    "conflict": (
        Binding("m", "choose('mine')", "Keep mine", id="conflict_mine"),
        Binding("t", "choose('theirs')", "Keep theirs", id="conflict_theirs"),
        Binding("g", "choose('merge')", "Merge both", id="conflict_merge"),
        Binding("escape", "choose('')", "Choose", show=False, id="conflict_cancel"),
    ),
    # the metadata conflict: the note conflict's ids for the same choices, for every field
    "meta_conflict": (
        Binding("m", "choose_all('mine')", "Keep mine", id="conflict_mine"),
        Binding("t", "choose_all('theirs')", "Keep theirs", id="conflict_theirs"),
        Binding("ctrl+s", "save", "Save as marked", id="conflict_save"),
        Binding("escape", "refuse", "Choose", show=False, id="conflict_cancel"),
    ),
    "triage": (
        Binding("b", "keep", "Keep", id="triage_keep"),
        Binding("r", "skip", "Skip", id="triage_skip"),
        Binding("t", "tag", "Tag", id="triage_tag"),
        Binding("l,right", "later", "Later", id="triage_later"),
        Binding("p,left", "back", "Back", id="triage_back"),
        Binding("u", "undo", "Undo", id="triage_undo"),
        Binding("escape,q", "leave", "Leave", id="triage_leave"),
    ),
    # (the tag list's Enter is its list's own: OptionList's select; in its footer's order)
    "taglist": (
        Binding("escape", "cancel", "Close", id="taglist_close"),
        Binding("r", "rename", "Rename", id="taglist_rename"),
        Binding("d", "delete", "Delete", id="taglist_delete"),
        Binding("m", "like", "Rank like it", id="taglist_like"),
    ),
    "help": (Binding("escape,question_mark,q", "dismiss", "Close", id="help_close"),),
    "problems": (Binding("escape,q", "dismiss", "Close", id="problems_close"),),
    "cite": (
        Binding("escape", "cancel", "Cancel", id="cite_cancel"),
        Binding("d", "make_default", "Copy & make default", id="cite_default"),
    ),
    "copied": (Binding("escape", "dismiss", "Close", id="copied_close"),),
    # a dialog's list (the tag editor's tags, the tag list, the saved searches, the citation
    # formats) moves with j / k as the reader's list does, besides ↓ / ↑
    "dialog_list": (
        Binding("j", "cursor_down", "Down", show=False, id="dialog_list_down"),
        Binding("k", "cursor_up", "Up", show=False, id="dialog_list_up"),
    ),
    "saved": (
        Binding("escape", "cancel", "Close", id="saved_close"),
        # priority: the field's own ctrl+d (delete the next letter) is also on Del
        Binding("ctrl+d", "delete", "Delete", priority=True, id="saved_delete"),
    ),
    # the saved searches' filter field: its keys that move through the list below it (they
    # mean nothing in a one-line field); the list's own keys move it when it has the focus
    "saved_filter": (
        Binding("up", "move('cursor_up')", "Up", show=False, id="saved_up"),
        Binding("down", "move('cursor_down')", "Down", show=False, id="saved_down"),
        Binding("pageup", "move('page_up')", "Page up", show=False, id="saved_page_up"),
        Binding("pagedown", "move('page_down')", "Page down", show=False, id="saved_page_down"),
    ),
}

#: Binding ids of the dialogs' own keys (remappable too).
EXTRA_BINDING_IDS = frozenset(
    b.id for group in DIALOG_BINDINGS.values() for b in group if b.id is not None
)

#: Where keys are active together (the focused widget, its screen and, under a screen that
#: is not modal, the App): the groups of bindings of each place. Two bindings of one place
#: must not share a key; ``keymap.py`` settles a remap that makes them.
PLACES: dict[str, tuple[str, ...]] = {
    "the list": ("app", "main", "list"),
    "the paper view": ("app", "main", "view"),
    "the filter bar": ("app", "main", "filter"),
    "the full-screen paper": ("app", "paper", "view"),
    "triage": ("app", "triage", "view"),
    "the help": ("help", "view"),
    "the load problems": ("problems", "view"),
    "the tag editor": ("editor", "tags", "dialog_list"),
    "the metadata editor": ("editor", "meta"),
    "the note editor": ("editor", "note"),
    "the export dialog": ("editor", "export"),
    "the note conflict": ("conflict",),
    "the metadata conflict": ("meta_conflict",),
    "the tag list": ("taglist", "dialog_list"),
    "the saved searches": ("saved", "saved_filter", "dialog_list"),
    "the citation formats": ("cite", "dialog_list"),
    "the text not copied": ("copied",),
}


def group_bindings(group: str) -> list[Binding]:
    """The bindings of one group of ``PLACES``, as declared (default keys)."""
    if group in DIALOG_BINDINGS:
        return list(DIALOG_BINDINGS[group])
    if group == "paper":
        return paper_screen_bindings()
    return bindings(cast(Where, group))


def default_keys() -> dict[str, tuple[str, ...]]:
    """Every binding id with its default keys."""
    out: dict[str, tuple[str, ...]] = {}
    for group in ("app", "main", "list", "view", "paper", *DIALOG_BINDINGS):
        for binding in group_bindings(group):
            if binding.id:
                out[binding.id] = tuple(k.strip() for k in binding.key.split(","))
    return out


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


#: How the help writes Textual's key names (as docs/keys.md does).
_KEY_LABELS = {
    "down": "↓",
    "up": "↑",
    "left": "←",
    "right": "→",
    "pagedown": "PgDn",
    "pageup": "PgUp",
    "home": "Home",
    "end": "End",
    "enter": "Enter",
    "escape": "Esc",
    "tab": "Tab",
    "backspace": "⌫",
    "delete": "Del",
    "space": "space",
    # (names Textual gives these characters that its key_to_character does not turn back)
    "at": "@",
    "slash": "/",
    "backslash": "\\",
    "minus": "-",
    "plus": "+",
    "underscore": "_",
}
#: The key a binding is given when a remap took its only key away (``keymap.py``): no
#: terminal sends it, and no footer shows it (``FittedFooter``).
NO_KEY = "abstract_reader_no_key"


def key_label(key: str) -> str:
    """A Textual key name as people write it: ``question_mark`` → ``?``, ``down`` → ``↓``."""
    from textual.keys import key_to_character

    *modifiers, name = key.split("+") if len(key) > 1 else [key]
    label = _KEY_LABELS.get(name)
    if label is None:
        character = key_to_character(name) if len(name) > 1 else name
        label = character if character and character.isprintable() else name
    return "+".join([*modifiers, label])


def keys_label(keys: Sequence[str], separator: str = ", ") -> str:
    """Keys as the help lists them; "(no key)" when a remap left a binding none."""
    shown = [key_label(k) for k in keys if k != NO_KEY]
    return separator.join(shown) if shown else "(no key)"


#: ``{binding_id}`` in a text: a key named in prose (``with_keys``)
_KEY_REF = re.compile(r"\{([a-z_]+)\}")


def keys_in_effect(
    binding_id: str, keys: Mapping[str, tuple[str, ...]] | None = None
) -> tuple[str, ...]:
    """The keys of ``binding_id`` in effect: ``keys`` (the bindings the config file remapped,
    ``keymap.KeySettings.keys``; () when a remap left it none), else its defaults."""
    if keys and binding_id in keys:
        return keys[binding_id]
    return default_keys()[binding_id]


def with_keys(text: str, keys: Mapping[str, tuple[str, ...]] | None = None) -> str:
    """``text`` with each ``{binding_id}`` written as the first key in effect of that binding
    ("b keep" by default, "K keep" for ``triage_keep = "K"``; "(no key)" when a remap left it
    none): every text that names a key names the key that works. Raises KeyError for an id
    no binding has (a test renders every text)."""
    defaults = default_keys()

    def key(match: re.Match[str]) -> str:
        binding_id = match.group(1)
        if binding_id not in defaults:
            raise KeyError(f"{{{binding_id}}} in {text!r}: no binding has that id")
        return keys_label(keys_in_effect(binding_id, keys)[:1])

    return _KEY_REF.sub(key, text)


def keyed(app: object, text: str) -> str:
    """`with_keys` with the keys in effect of ``app`` (the reader's ``keys_in_effect``; the
    defaults for another app). For fixed prose only: never a paper's text."""
    return with_keys(text, getattr(app, "keys_in_effect", None))


def command_help(command: Command, keys: Mapping[str, tuple[str, ...]] | None = None) -> str:
    """The command's help line and palette description, naming the keys in effect."""
    return with_keys(command.help, keys)


def _help_groups() -> Iterator[tuple[Command, list[Command]]]:
    """Each help line's command and the ones its line describes too (k in j / k: the keyed
    commands after it, without a display of their own, of the same place)."""
    group: list[Command] = []
    for command in COMMANDS:
        if command.display:
            if group:
                yield group[0], group
            group = [command]
        elif command.keys and group and command.where == group[0].where:
            group.append(command)
        elif command.keys:  # (the full-screen paper's Esc: the help has no line of its own)
            if group:
                yield group[0], group
            group = []
            yield command, [command]
    if group:
        yield group[0], group


def help_rows(
    keys: Mapping[str, tuple[str, ...]] | None = None,
) -> Iterator[tuple[str, list[tuple[str, str]]]]:
    """(section, [(keys, what)]) in table order; a command without keys of its own (the
    second half of a pair such as k in j / k) is described by its partner's line. ``keys``:
    the bindings remapped by the config file (id → the keys in effect); a line one of them
    is on lists the keys in effect, "x / k, ↑" for down = "x" (its commands separated by
    " / ", each one's keys by ", ")."""
    keys = keys or {}
    sections: dict[str, list[tuple[str, str]]] = {}
    for leader, group in _help_groups():
        remapped = [c for c in group if c.id in keys]
        if remapped:
            shown = " / ".join(keys_label(keys.get(c.id, tuple(c.keys.split(",")))) for c in group)
        elif leader.display:
            shown = leader.display
        else:
            continue  # (a line-less command, not remapped)
        sections.setdefault(leader.section, []).append((shown, command_help(leader, keys)))
    sections.setdefault("Moving", []).extend(
        [
            ("Tab / Shift+Tab", "move focus between filter, list and paper"),
            ("mouse", "click a row to select it (again to open), scroll with the wheel"),
        ]
    )
    yield from sections.items()
