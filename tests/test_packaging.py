"""The wheel: built, installed in a fresh venv, run from another directory."""

from __future__ import annotations

import subprocess
import sys
import venv
from pathlib import Path

import pytest

from .conftest import ROOT

pytestmark = pytest.mark.slow


def test_wheel_installs_and_lists_the_bundled_papers(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--outdir", str(dist), str(ROOT)],
        check=True,
        capture_output=True,
        timeout=600,
    )
    wheel = next(dist.glob("abstract_reader-*.whl"))
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True, system_site_packages=True)
    python = env_dir / "bin" / "python"
    subprocess.run(
        [str(python), "-m", "pip", "install", "--no-deps", "--quiet", str(wheel)],
        check=True,
        capture_output=True,
        timeout=600,
    )
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    result = subprocess.run(
        [str(env_dir / "bin" / "abstract-reader"), "list"],
        capture_output=True,
        text=True,
        cwd=elsewhere,
        timeout=120,
        env={
            "PATH": "/usr/bin:/bin",
            "ABSTRACT_READER_DB": str(tmp_path / "lib.sqlite3"),
            "HOME": str(tmp_path),
        },
    )
    assert result.returncode == 0, result.stderr
    assert len(result.stdout.splitlines()) == 55
    # the bundled dumps really are inside the installed package, not read from the checkout
    located = subprocess.run(
        [
            str(python),
            "-c",
            "from abstract_reader.corpus import bundled_dumps; print(bundled_dumps())",
        ],
        capture_output=True,
        text=True,
        cwd=elsewhere,
        timeout=60,
    )
    assert str(env_dir) in located.stdout
