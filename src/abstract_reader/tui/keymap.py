"""The config file's ``[keys]`` settled against the reader's bindings.

Textual's keymap replaces a binding's keys by id and leaves every other binding alone, so a
remap onto a key another binding of the same place already has (``toggle_read = "j"``: j is
also the list's ``down``) silently lost to whichever binding Textual asks first — the list's,
nearer the focus — and ``toggle_read`` had no working key at all. Here a remapped key is
checked against every binding active in the same place (``commands.PLACES``), and the rule
(docs/keys.md, "Remapping keys") is:

- a remap wins over a default: the default binding loses that key (and keeps its others);
- of two remaps onto one key in one place, the one earlier in the file keeps it;

each clash is one warning line naming the file, the line, the key and both ids. The reader
notifies them at start-up; ``abstract-reader config --show`` prints them.

A dialog's keys meet the keys of the Textual widget that has the focus there too (its text
field: ``Input``'s ctrl+a / ctrl+e / ctrl+k …, and every letter; its list: ``OptionList``'s
↑ / ↓ …; the note's ``TextArea``): the focused widget runs its own keys before its screen's
bindings, so ``editor_save = "ctrl+e"`` moved the cursor to the end of the field and never
saved, without a word — and a priority binding (``saved_delete = "ctrl+a"``) took the key
from the field. A remap of a dialog key onto such a key is refused (the widget keeps it),
except for a priority binding onto a key that is not text: that one wins, as it does, and
the warning says the widget loses the key there.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from textual.binding import Binding

from ..config import Config
from .commands import EXTRA_BINDING_IDS, NO_KEY, PLACES, default_keys, group_bindings, key_label

#: The widgets that take the focus in a dialog (``PLACES``' names), as kinds: "field" (a
#: one-line ``Input``), "text" (the note's ``TextArea``), "read-only text", "list" (an
#: ``OptionList``). The tag list's rename field and the export dialog's file name field
#: have no dialog key of their own meant for them (the tag list's letters act on its list;
#: y / n are asked for with the field unfocused), so they are left out.
FOCUSED: dict[str, tuple[str, ...]] = {
    "the filter bar": ("field",),
    "the tag editor": ("field", "list"),
    "the metadata editor": ("field",),
    "the note editor": ("text",),
    "the export dialog": ("field",),
    "the saved searches": ("field", "list"),
    "the tag list": ("list",),
    "the metadata conflict": ("list",),
    "the citation formats": ("list",),
    "the text not copied": ("read-only text",),
}
#: Dialog keys meant for one of their dialog's widgets only (the others never have the
#: focus when they are used): the tag editor's remove acts on its list of tags; export's
#: y / n are asked with the file name field unfocused.
FOCUSED_FOR: dict[str, tuple[str, ...]] = {
    "tags_remove": ("list",),
    "export_yes": (),
    "export_no": (),
}
#: How a warning names each kind of widget.
_WIDGET_NAMES = {
    "field": "the text field",
    "text": "the text area",
    "read-only text": "the read-only text",
    "list": "the list",
}


@dataclass(frozen=True, slots=True)
class KeySettings:
    #: for ``App.set_keymap``: every binding whose keys are not its defaults
    keymap: dict[str, str] = field(default_factory=dict)
    #: the same bindings' keys in effect (empty: none left), for the help
    keys: dict[str, tuple[str, ...]] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    #: those of the warnings that only say what a remap did (it took a key another binding
    #: had, which keeps a key of its own): the file is in effect as written
    notes: list[str] = field(default_factory=list)
    #: the keys of remaps refused, by binding id: key → why, for ``config --show``
    #: ("kept by the text field in the tag editor"; absent: kept by an earlier remap)
    refused: dict[str, dict[str, str]] = field(default_factory=dict)


def _places_of() -> dict[str, list[tuple[str, list[str]]]]:
    """binding id → [(place, the ids of that place)]."""
    out: dict[str, list[tuple[str, list[str]]]] = {}
    for place, groups in PLACES.items():
        ids = list(dict.fromkeys(b.id for g in groups for b in group_bindings(g) if b.id))
        for binding_id in ids:
            out.setdefault(binding_id, []).append((place, ids))
    return out


def _normal_keys(keys: tuple[str, ...]) -> list[str]:
    """``keys`` as Textual names them in bindings ("?" → ``question_mark``, "B" stays), by
    Textual's public ``Binding.make_bindings``: the rule its BINDINGS and keymaps follow
    (its ``_normalize_key_list`` is private). The config file allows no "," in a key."""
    return [b.key for b in Binding.make_bindings([Binding(",".join(keys), "")])]


def _own_keys(kind: str) -> dict[str, str]:
    """The keys a kind of widget binds itself (Textual's ``BINDINGS`` of the class), each
    with what it does there. (Imported only when a remap is checked: the first frame does
    without ``TextArea``.)"""
    from textual.widget import Widget
    from textual.widgets import Input, OptionList, TextArea

    widget: type[Widget] = Input if kind == "field" else OptionList if kind == "list" else TextArea
    keys: dict[str, str] = {}
    for binding in Binding.make_bindings(widget.BINDINGS):
        keys.setdefault(binding.key, binding.description.lower())
    if kind == "text":
        keys.setdefault("enter", "a new line")  # (TextArea's own key handler, not a binding)
    return keys


def _widget_key(binding_id: str, key: str) -> tuple[str, str, str] | None:
    """(place, widget name, what the key does there) when ``key`` is the own key of a
    widget focused where the dialog key ``binding_id`` acts ("" for a letter typed into a
    text), else None."""
    from textual.keys import key_to_character

    if binding_id not in EXTRA_BINDING_IDS:
        return None  # the table's commands: they act in the list and the paper, where the
        # filter field's keys are not (in the filter bar a letter of theirs is text too)
    character = key_to_character(key)
    typed = character is not None and character.isprintable()
    for place, groups in PLACES.items():
        if place not in FOCUSED or not any(
            b.id == binding_id for g in groups for b in group_bindings(g)
        ):
            continue
        for kind in FOCUSED_FOR.get(binding_id, FOCUSED[place]):
            if typed and kind in ("field", "text"):
                return place, _WIDGET_NAMES[kind], ""
            what = _own_keys(kind).get(key)
            if what is not None:
                return place, _WIDGET_NAMES[kind], what
    return None


def _names(ids: list[str]) -> str:
    return ids[0] if len(ids) == 1 else ", ".join(ids[:-1]) + " and " + ids[-1]


def resolve_keys(config: Config) -> KeySettings:
    """The keymap for ``config.keys``, and one warning per unknown id and per clash."""
    defaults = default_keys()
    warnings: list[tuple[str, str]] = []  # (id, line)
    notes: list[str] = []  # (the warnings that only say what a remap did)
    remaps: dict[str, tuple[str, ...]] = {}
    for binding_id, keys in config.keys.items():  # (in the file's order)
        if binding_id not in defaults:
            problem = "no such binding id (see docs/keys.md); ignored"
            warnings.append((binding_id, config.key_warning(binding_id, problem)))
            continue
        remaps[binding_id] = tuple(dict.fromkeys(_normal_keys(keys)))
    if not remaps:
        return KeySettings(warnings=[w for _, w in warnings])
    places_of = _places_of()
    keys_of = {i: list(remaps.get(i, defaults[i])) for i in defaults}
    priority = {
        b.id: b.priority for groups in PLACES.values() for g in groups for b in group_bindings(g)
    }
    order = list(remaps)
    #: remaps refused whole: their bindings are back on their default keys, defaults again
    #: for the remaps after them (which win over them, as over any default)
    restored: set[str] = set()
    refused: dict[str, dict[str, str]] = {}

    def keep_defaults(binding_id: str) -> str:
        """Every key of ``binding_id``'s remap was refused: it keeps its default keys, but
        those a remap earlier in the file has in a place it shares (a remap wins over a
        default); what the warning adds to say so. (It was left with no key at all, and the
        hints said "(no key)", for a remap that never took effect.)"""
        earlier = order[: order.index(binding_id)]  # (a later one takes a key when judged)
        taken = {
            k
            for _place, ids in places_of.get(binding_id, [])
            for other in ids
            if other in earlier and other not in restored
            for k in keys_of[other]
        }
        kept = [k for k in defaults[binding_id] if k not in taken]
        keys_of[binding_id] = kept
        restored.add(binding_id)
        if not kept:
            default = "key is" if len(defaults[binding_id]) == 1 else "keys are"
            return f"; its default {default} taken too: {binding_id} has no key left"
        shown = ", ".join(key_label(k) for k in kept)
        return f"; {binding_id} keeps its default key{'s' if len(kept) > 1 else ''} {shown}"

    for binding_id in order:
        for key in list(keys_of[binding_id]):
            if key not in keys_of[binding_id]:
                continue
            meets = None if key in defaults[binding_id] else _widget_key(binding_id, key)
            if meets is not None:
                place, widget, what = meets
                shown = key_label(key)
                # a priority binding runs before the widget's keys; a letter stays text
                wins = bool(what) and priority.get(binding_id, False)
                if wins:
                    problem = (
                        f"{shown} is also {widget}'s own key in {place} ({what}); the remap "
                        f"wins: {shown} is {binding_id}'s there, {widget} loses it"
                    )
                else:  # the focused widget runs its keys first: the binding would never run
                    keys_of[binding_id].remove(key)
                    refused.setdefault(binding_id, {})[key] = f"kept by {widget} in {place}"
                    left = "" if keys_of[binding_id] else keep_defaults(binding_id)
                    problem = (
                        f"{shown} is {widget}'s own key in {place} ({what}), which it keeps"
                        if what
                        else f"{shown} is typed as text into {widget} in {place}"
                    ) + f"; {binding_id} does not get it{left}"
                warnings.append((binding_id, config.key_warning(binding_id, problem)))
                if not wins:
                    continue
            earlier = ""  # a remap earlier in the file with this key in a shared place
            losers: dict[str, str] = {}  # default binding → the first place shared
            for place, ids in places_of.get(binding_id, []):
                for other in ids:
                    if other == binding_id or key not in keys_of[other]:
                        continue
                    if other in remaps and other not in restored:
                        if order.index(other) < order.index(binding_id) and not earlier:
                            earlier = f"{other}'s in {place}"
                        continue  # (a later remap loses it when its turn comes)
                    losers.setdefault(other, place)
            shown = key_label(key)
            if earlier:
                keys_of[binding_id].remove(key)
                left = "" if keys_of[binding_id] else keep_defaults(binding_id)
                warnings.append(
                    (
                        binding_id,
                        config.key_warning(
                            binding_id,
                            f"{shown} is already {earlier} (set earlier in the file, which wins); "
                            f"{binding_id} does not get it{left}",
                        ),
                    )
                )
                continue
            if not losers or key in defaults[binding_id]:  # (its own default key: shared so
                continue  # by design, as quit's q is triage_leave's too; nobody loses it)
            for other in losers:
                keys_of[other].remove(key)
            whose = _names([f"{o}'s ({p})" for o, p in losers.items()])
            keyless = [o for o in losers if not keys_of[o]]
            left = (
                f"; {_names(keyless)} {'has' if len(keyless) == 1 else 'have'} no key left"
                if keyless
                else ""
            )
            said = config.key_warning(
                binding_id,
                f"{shown} is also {whose}; the remap wins: {shown} is {binding_id}'s, "
                f"{_names(list(losers))} {'loses' if len(losers) == 1 else 'lose'} it{left}",
            )
            warnings.append((binding_id, said))
            if not keyless:
                notes.append(said)
    changed = {i: tuple(k) for i, k in keys_of.items() if tuple(k) != defaults[i]}
    return KeySettings(
        keymap={i: ",".join(k) or NO_KEY for i, k in changed.items()},
        keys=changed,
        # in the file's order
        warnings=[w for _, w in sorted(warnings, key=lambda w: config.key_lines.get(w[0], 0))],
        notes=notes,
        refused=refused,
    )


def not_in_effect(config: Config, settings: KeySettings) -> dict[str, tuple[bool, str]]:
    """For ``config --show``: each ``[keys]`` entry not (wholly) in effect → (whether any of
    it is, and what is not and why), so that an ignored entry is not listed as a setting."""
    defaults = default_keys()
    out: dict[str, tuple[bool, str]] = {}
    for binding_id, keys in config.keys.items():
        if binding_id not in defaults:
            out[binding_id] = (False, "no such binding id")
            continue
        effective = settings.keys.get(binding_id, defaults[binding_id])
        lost = [k for k in dict.fromkeys(_normal_keys(keys)) if k not in effective]
        if lost:
            why: dict[str, list[str]] = {}  # reason → its keys, in the file's order
            for key in lost:
                reason = settings.refused.get(binding_id, {}).get(key, "kept by an earlier remap")
                why.setdefault(reason, []).append(key_label(key))
            said = "; ".join(f"{', '.join(shown)} {reason}" for reason, shown in why.items())
            out[binding_id] = (
                len(lost) < len(set(_normal_keys(keys))),
                f"{said} (see the warning)",
            )
    return out
