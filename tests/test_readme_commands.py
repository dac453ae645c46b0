"""The README's quick-start commands are the ones CI runs, and they work on PEP 668 Pythons."""

from __future__ import annotations

import re

from .conftest import ROOT


def quick_start_commands() -> list[str]:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    return [block.strip() for block in re.findall(r"```sh\n(.*?)```", section, re.S)]


def test_quick_start_is_two_one_line_commands_in_a_venv() -> None:
    install, tests = quick_start_commands()
    for command in (install, tests):
        assert "\n" not in command
        assert command.startswith("python3 -m venv .venv && .venv/bin/pip install ")
        # never pip into the system Python (refused there: "externally managed")
        assert "python3 -m pip" not in command
    assert install.endswith(".venv/bin/abstract-reader")
    assert tests.endswith(".venv/bin/python -m pytest -n auto")


def test_ci_runs_the_readme_test_command_verbatim() -> None:
    _, tests = quick_start_commands()
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert tests in ci.splitlines()
    # and installs the tools the skipping tests need first
    assert ci.index("apt-get install") < ci.index(tests)
    for package in ("xvfb", "xclip", "zsh", "fish"):
        assert package in ci
