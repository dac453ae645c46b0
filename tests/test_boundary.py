"""The core never imports Textual: each module outside ``tui/``, imported alone in a fresh
interpreter, leaves ``textual`` out of ``sys.modules``."""

from __future__ import annotations

import pkgutil
import subprocess
import sys

import pytest

import abstract_reader


def _core_modules() -> list[str]:
    names = []
    for info in pkgutil.walk_packages(abstract_reader.__path__, "abstract_reader."):
        if info.name == "abstract_reader.tui" or info.name.startswith("abstract_reader.tui."):
            continue
        names.append(info.name)
    return sorted(names)


def test_the_core_modules_are_found() -> None:
    names = _core_modules()
    assert "abstract_reader.session" in names and "abstract_reader.cli" in names
    assert not any(".tui" in n for n in names)


@pytest.mark.parametrize("module", _core_modules())
def test_core_module_does_not_import_textual(module: str) -> None:
    code = (
        f"import sys, {module}\n"
        "leaked = sorted(m for m in sys.modules if m == 'textual' or m.startswith('textual.'))\n"
        "print(' '.join(leaked[:5]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "", f"{module} imports Textual: {done.stdout.strip()}"
