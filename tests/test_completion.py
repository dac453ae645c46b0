"""`abstract-reader completion bash|zsh|fish`, loaded by the real shells, and the hidden
`__complete tags` helper."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from abstract_reader.corpus import Corpus

from .conftest import cli, installed_script

# CI installs all three shells (.ci/run); there a missing shell is a failure, not a skip.
REQUIRE_SHELLS = os.environ.get("ABSTRACT_READER_REQUIRE_SHELLS") == "1"


def need(shell: str) -> str:
    found = shutil.which(shell)
    if not found:
        if REQUIRE_SHELLS:
            pytest.fail(f"{shell} is required in CI but not installed")
        pytest.skip(f"{shell} is not installed")
    return found


@pytest.fixture
def library(seeds: Corpus, tmp_path: Path) -> Path:
    db = tmp_path / "lib.sqlite3"
    assert cli("tag", seeds.papers[0].id, "robust", "to read", db=db).returncode == 0
    assert cli("tag", seeds.papers[1].id, "theory", db=db).returncode == 0
    return db


def shell_env(tmp_path: Path, db: Path) -> dict[str, str]:
    bindir = str(Path(installed_script()[0]).parent)
    home = tmp_path / "shellhome"
    home.mkdir(exist_ok=True)
    return {
        **os.environ,
        "PATH": f"{bindir}:{os.environ.get('PATH', '/usr/bin:/bin')}",
        "ABSTRACT_READER_DB": str(db),
        "HOME": str(home),
        "ZDOTDIR": str(home),
        "XDG_CONFIG_HOME": str(home),
        "XDG_DATA_HOME": str(home),
    }


def script(shell: str, tmp_path: Path) -> Path:
    result = cli("completion", shell)
    assert result.returncode == 0 and result.stderr == ""
    path = tmp_path / f"completion.{shell}"
    path.write_text(result.stdout)
    return path


CASES: list[tuple[list[str], set[str], set[str]]] = [
    # words typed (the last is being completed), must be offered, must not be offered
    (["li"], {"list", "library"}, {"show"}),
    (["export", "--format", ""], {"bibtex", "csl-json", "csv", "jsonl", "markdown"}, set()),
    (["cite", "-f", "b"], {"bibtex"}, {"csv"}),
    (["list", "--tag", ""], {"robust", "to\\ read", "theory"}, set()),
    (["list", "--tag", "t"], {"to\\ read", "theory"}, {"robust"}),
    (["tag", "d059a4d9", "r"], {"robust"}, set()),
    (["tags", "--delete", "th"], {"theory"}, set()),
    (["library", ""], {"export", "import"}, set()),
    (["list", "--"], {"--query", "--tag", "--json", "--bookmarked"}, {"--format"}),
    (["list", "--sort", ""], {"relevance", "dump", "recent", "unread"}, {"bookmarked"}),
    (["export", "--f"], {"--format", "--force"}, set()),
    (["completion", ""], {"bash", "zsh", "fish"}, set()),
]


def _bash_like(shell: str, tmp_path: Path, db: Path, zsh: bool) -> None:
    path = script(shell, tmp_path)
    (tmp_path / "dumpdir").mkdir()
    calls = []
    for words, _, _ in CASES:
        quoted = " ".join("'" + w + "'" for w in ["abstract-reader", *words])
        calls.append(f"c {quoted}")
    prelude = "setopt ksharrays\n" if zsh else ""  # zsh's bashcompinit calls it this way
    program = (
        f"source {path}\n{prelude}"
        'c() { COMP_WORDS=("$@"); COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 )); _abstract_reader;'
        " printf '%s\\n' \"${COMPREPLY[@]}\"; echo ---; }\n" + "\n".join(calls) + "\n"
    )
    argv = [need(shell), "-f"] if zsh else [need(shell), "--norc", "--noprofile"]
    result = subprocess.run(
        [*argv, "-c", program],
        capture_output=True,
        text=True,
        timeout=120,
        env=shell_env(tmp_path, db),
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    blocks = result.stdout.split("---\n")
    for (words, wanted, unwanted), block in zip(CASES, blocks, strict=False):
        offered = set(block.splitlines())
        # zsh's compgen leaves the prefix filtering to zsh itself; do it here
        offered = {o for o in offered if o.startswith(words[-1])}
        assert wanted <= offered, (shell, words, offered)
        assert not unwanted & offered, (shell, words, offered)


def test_bash_completion(library: Path, tmp_path: Path) -> None:
    _bash_like("bash", tmp_path, library, zsh=False)


def test_zsh_completion(library: Path, tmp_path: Path) -> None:
    _bash_like("zsh", tmp_path, library, zsh=True)


def test_fish_completion(library: Path, tmp_path: Path) -> None:
    fish = need("fish")
    path = script("fish", tmp_path)
    env = shell_env(tmp_path, library)
    for words, wanted, unwanted in CASES:
        line = " ".join(["abstract-reader", *words]).replace("\\", "")
        result = subprocess.run(
            [fish, "--no-config", "-c", f"source {path}; complete -C {_fish_arg(line)}"],
            capture_output=True,
            text=True,
            timeout=120,
            env=env,
            cwd=tmp_path,
        )
        assert result.returncode == 0, result.stderr
        offered = {row.split("\t")[0] for row in result.stdout.splitlines()}
        want = {w.replace("\\ ", " ") for w in wanted}
        assert want <= offered, (words, offered)
        assert not {w.replace("\\ ", " ") for w in unwanted} & offered, (words, offered)


def _fish_arg(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def test_completion_follows_the_db_option(library: Path, tmp_path: Path) -> None:
    other = tmp_path / "other.sqlite3"
    assert cli("tag", "d059a4d9", "elsewhere", db=other).returncode == 0
    path = script("bash", tmp_path)
    program = (
        f"source {path}\nCOMP_WORDS=(abstract-reader list --db {other} --tag '');"
        " COMP_CWORD=5; _abstract_reader; printf '%s\\n' \"${COMPREPLY[@]}\""
    )
    result = subprocess.run(
        [need("bash"), "--norc", "-c", program],
        capture_output=True,
        text=True,
        env=shell_env(tmp_path, library),
        timeout=60,
    )
    assert result.stdout.split() == ["elsewhere"]


def test_complete_tags_helper_is_read_only_and_quiet(library: Path, tmp_path: Path) -> None:
    before = library.read_bytes()
    result = cli("__complete", "tags", "--db", str(library))
    assert result.returncode == 0 and result.stderr == ""
    assert result.stdout.splitlines() == ["robust", "theory", "to read"]
    assert library.read_bytes() == before
    missing = tmp_path / "none.sqlite3"
    nothing = cli("__complete", "tags", "--db", str(missing))
    assert nothing.returncode == 0 and nothing.stdout == "" and not missing.exists()
    garbage = tmp_path / "garbage.sqlite3"
    garbage.write_bytes(b"not a database" * 100)
    bad = cli("__complete", "tags", "--db", str(garbage))
    assert bad.returncode == 0 and bad.stdout == "" and bad.stderr == ""


def test_completion_usage() -> None:
    assert cli("completion", "powershell").returncode == 2
    assert "completion" in cli("--help").stdout
    assert "__complete" not in cli("--help").stdout
