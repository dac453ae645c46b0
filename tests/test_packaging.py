"""The wheel: built, installed in a fresh venv, run from another directory."""

from __future__ import annotations

import subprocess
import sys
import sysconfig
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
    venv.create(env_dir, with_pip=True)
    python = env_dir / "bin" / "python"
    # The dependencies come from the interpreter running the tests. `system_site_packages`
    # would mean the *base* interpreter's packages when the tests run inside a virtualenv,
    # so point the new venv at this interpreter's own site-packages with a .pth file instead
    # (a plain path line: the .pth files *in* those folders, such as our editable install,
    # are not processed, so the wheel is what gets imported).
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    ours = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    Path(purelib, "_parent_site.pth").write_text("\n".join(sorted(ours)) + "\n")
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
