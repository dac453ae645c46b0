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
"""

from __future__ import annotations

from dataclasses import dataclass, field

from textual.binding import Binding

from ..config import Config
from .commands import NO_KEY, PLACES, default_keys, group_bindings, key_label


@dataclass(frozen=True, slots=True)
class KeySettings:
    #: for ``App.set_keymap``: every binding whose keys are not its defaults
    keymap: dict[str, str] = field(default_factory=dict)
    #: the same bindings' keys in effect (empty: none left), for the help
    keys: dict[str, tuple[str, ...]] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)


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


def _names(ids: list[str]) -> str:
    return ids[0] if len(ids) == 1 else ", ".join(ids[:-1]) + " and " + ids[-1]


def resolve_keys(config: Config) -> KeySettings:
    """The keymap for ``config.keys``, and one warning per unknown id and per clash."""
    defaults = default_keys()
    warnings: list[tuple[str, str]] = []  # (id, line)
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
    order = list(remaps)
    for binding_id in order:
        for key in list(keys_of[binding_id]):
            if key not in keys_of[binding_id]:
                continue
            earlier = ""  # a remap earlier in the file with this key in a shared place
            losers: dict[str, str] = {}  # default binding → the first place shared
            for place, ids in places_of.get(binding_id, []):
                for other in ids:
                    if other == binding_id or key not in keys_of[other]:
                        continue
                    if other in remaps:
                        if order.index(other) < order.index(binding_id) and not earlier:
                            earlier = f"{other}'s in {place}"
                        continue  # (a later remap loses it when its turn comes)
                    losers.setdefault(other, place)
            shown = key_label(key)
            if earlier:
                keys_of[binding_id].remove(key)
                left = "" if keys_of[binding_id] else f"; {binding_id} has no key left"
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
            if not losers:
                continue
            for other in losers:
                keys_of[other].remove(key)
            whose = _names([f"{o}'s ({p})" for o, p in losers.items()])
            keyless = [o for o in losers if not keys_of[o]]
            left = (
                f"; {_names(keyless)} {'has' if len(keyless) == 1 else 'have'} no key left"
                if keyless
                else ""
            )
            warnings.append(
                (
                    binding_id,
                    config.key_warning(
                        binding_id,
                        f"{shown} is also {whose}; the remap wins: {shown} is {binding_id}'s, "
                        f"{_names(list(losers))} {'loses' if len(losers) == 1 else 'lose'} it"
                        f"{left}",
                    ),
                )
            )
    changed = {i: tuple(k) for i, k in keys_of.items() if tuple(k) != defaults[i]}
    return KeySettings(
        keymap={i: ",".join(k) or NO_KEY for i, k in changed.items()},
        keys=changed,
        # in the file's order
        warnings=[w for _, w in sorted(warnings, key=lambda w: config.key_lines.get(w[0], 0))],
    )
