"""Each command is declared once: its bindings, palette entry, help line and docs row."""

from __future__ import annotations

import re
from pathlib import Path

from abstract_reader.tui.commands import COMMANDS, bindings, paper_screen_bindings
from abstract_reader.tui.screens.help import help_content

KEYS_MD = Path(__file__).resolve().parents[2] / "docs" / "keys.md"


def _documented_keys() -> set[str]:
    cells = set()
    for line in KEYS_MD.read_text(encoding="utf-8").splitlines():
        match = re.match(r"\|\s*`([^`]+)`\s*\|", line)
        if match:
            cells.add(match.group(1))
    return cells


def test_docs_keys_lists_every_binding() -> None:
    documented = _documented_keys()
    partner = ""
    for command in COMMANDS:
        if not command.keys:
            continue
        # a command without a display of its own (k in j / k) is the row of its partner
        shown = command.display or partner
        assert shown in documented, f"docs/keys.md misses {shown!r} ({command.id})"
        if command.display:
            partner = command.display


def test_help_lists_every_key_and_the_library_fields() -> None:
    text = help_content().plain
    for command in COMMANDS:
        if command.display:
            assert command.display in text, command.id
    for field in ("is:tagged", "is:noted", "is:marked", "is:unread", "#tag"):
        assert field in text


def test_help_names_every_form_of_the_query_language() -> None:
    """Each operator of docs/query-language.md's table (``is:new``, ``like:``, ``id:``,
    ``@name``, ``'word`` …) is in the `?` help: a new user found ``id:``, ``@``, ``like:``
    and ``is:new`` only in the docs."""
    import re

    from ..conftest import ROOT

    doc = (ROOT / "docs" / "query-language.md").read_text(encoding="utf-8")
    table = doc.split("| query | meaning |", 1)[1].split("\n\n", 1)[0]
    operators: set[str] = set()
    for row in table.splitlines()[2:]:
        for example in re.findall(r"`([^`]+)`", row.split(" | ", 1)[0]):
            field = re.match(r"[a-z]+:", example)
            if field:
                operators.add(field.group())
            elif example[0] in "'^!#@\"":
                operators.add(example[0])
    assert {"is:", "like:", "id:", "@", "'", "#"} <= operators  # the table was read
    text = help_content().plain
    shown = {op for op in operators if op in text}
    assert shown == operators, f"the help misses {sorted(operators - shown)}"
    assert "is:new" in text


def test_every_binding_has_a_unique_id_per_place() -> None:
    for where in ("app", "main", "list", "view", "paper"):
        ids = [b.id for b in bindings(where)]  # type: ignore[arg-type]
        assert all(ids) and len(ids) == len(set(ids)), where
    ids = [b.id for b in paper_screen_bindings()]
    assert len(ids) == len(set(ids))
