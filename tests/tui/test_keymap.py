"""The config file's [keys] settled against the reader's bindings (``tui/keymap.py``)."""

from __future__ import annotations

import ast

from abstract_reader.config import Config
from abstract_reader.tui.commands import NO_KEY
from abstract_reader.tui.keymap import resolve_keys

from ..conftest import ROOT


def test_the_reader_imports_no_private_textual_name() -> None:
    """keymap.py normalised the config's keys with Textual's private ``_normalize_key_list``
    (free to change in any release); Textual's public ``Binding.make_bindings`` does it."""
    private = []
    for path in sorted((ROOT / "src" / "abstract_reader").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("textual"):
                private += [
                    f"{path.name}: {node.module}.{alias.name}"
                    for alias in node.names
                    if alias.name.startswith("_")
                ]
    assert private == []


def test_keys_are_normalised_as_textual_names_them() -> None:
    """`?` is the help's default (``question_mark``): no remap; `!` for bookmark is
    ``exclamation_mark``, and takes triage's key from the list (one warning)."""
    assert resolve_keys(Config(keys={"help": ("?",)})).keymap == {}
    settings = resolve_keys(Config(keys={"bookmark": ("!", "B")}))
    assert settings.keys["bookmark"] == ("exclamation_mark", "B")
    assert settings.keymap["bookmark"] == "exclamation_mark,B"
    assert settings.keys["triage"] == () and settings.keymap["triage"] == NO_KEY
    assert len(settings.warnings) == 1 and "! is also triage's" in settings.warnings[0]
