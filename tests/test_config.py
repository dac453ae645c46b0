"""The config file: `config --path`, `config --show`, load_config's typed result and warnings."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from abstract_reader.config import Config, config_path, load_config

from .conftest import cli


@pytest.fixture
def conf(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "conf" / "config.toml"
    path.parent.mkdir()
    monkeypatch.setenv("ABSTRACT_READER_CONFIG", str(path))
    return path


def test_path_and_defaults_without_a_file(conf: Path) -> None:
    assert config_path() == conf
    assert cli("config", "--path").stdout.strip() == str(conf)
    shown = cli("config", "--show")
    assert shown.returncode == 0 and shown.stderr == ""
    assert "not there: these are the defaults" in shown.stdout
    assert "auto_read = true" in shown.stdout and "auto_read_delay = 1.5" in shown.stdout
    assert load_config() == (Config(), [])


def test_every_setting_is_read_and_typed(conf: Path) -> None:
    conf.write_text(
        "auto_read = false\n"
        "auto_read_delay = 3\n"
        'citation_format = "markdown"\n'
        'theme = "nord"\n'
        'list_width = "45%"\n'
        "[keys]\n"
        'bookmark = "B"\n'
        'quit = ["q", "ctrl+q"]\n'
        'copy = "y,ctrl+c"\n'
    )
    config, warnings = load_config()
    assert warnings == []
    assert config == Config(
        auto_read=False,
        auto_read_delay=3.0,
        citation_format="markdown",
        theme="nord",
        list_width="45%",
        keys={"bookmark": ("B",), "quit": ("q", "ctrl+q"), "copy": ("y", "ctrl+c")},
    )
    shown = cli("config", "--show").stdout
    assert 'citation_format = "markdown"' in shown and 'quit = ["q", "ctrl+q"]' in shown
    # what --show prints is itself a valid config giving the same settings
    conf.write_text(shown)
    assert load_config() == (config, [])


def test_a_bad_value_is_one_line_with_its_line_and_the_rest_applies(conf: Path) -> None:
    conf.write_text(
        'theme = "nord"\nauto_read = "yes"\nlist_width = 5\ncolour = 1\n[keys]\nquit = 5\n'
    )
    config, warnings = load_config()
    assert config.theme == "nord" and config.auto_read is True and config.list_width is None
    assert config.keys == {}
    assert len(warnings) == 4
    assert warnings[0] == (
        f"{conf}: line 2: auto_read: expected true or false, got 'yes'; the default (true) applies"
    )
    assert any("line 3: list_width" in w for w in warnings)
    assert any("line 4: colour: unknown setting" in w for w in warnings)
    assert any("line 6: keys.quit" in w for w in warnings)
    result = cli("config", "--show")
    assert result.returncode == 1
    assert len(result.stderr.splitlines()) == 4 and "Traceback" not in result.stderr


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (b"auto_read = \n", "line 1: not valid TOML"),
        (b"[keys\n", "line 1: not valid TOML"),
        (b"theme = 'a'\ntheme = 'b'\n", "line 2: not valid TOML"),
        (b"\xff\xfe", "not UTF-8 text"),
        (b"auto_read_delay = nan\n", "auto_read_delay: expected seconds"),
        (b"auto_read_delay = 1e400\n", "auto_read_delay: expected seconds"),
        (b"citation_format = 'apa'\n", "expected one of bibtex"),
        (b"[keys]\nquit = '\\u001b'\n", "keys.quit: expected a key"),
    ],
)
def test_broken_files_are_one_clear_line_and_the_defaults_apply(
    conf: Path, content: bytes, expected: str
) -> None:
    conf.write_bytes(content)
    config, warnings = load_config()
    assert len(warnings) == 1 and expected in warnings[0], warnings
    assert warnings[0].startswith(str(conf))
    assert config.auto_read_delay == 1.5 and config.keys == {}
    result = cli("config")
    assert result.returncode == 1 and len(result.stderr.splitlines()) == 1
    assert "\x1b" not in result.stderr


def test_unreadable_config_is_a_warning(conf: Path) -> None:
    conf.mkdir()
    config, warnings = load_config()
    assert config == Config() and len(warnings) == 1 and "cannot read" in warnings[0]


def test_show_names_what_the_reader_set_in_the_library(conf: Path) -> None:
    """`d` in the citation picker, the palette's auto-read toggle and the last theme are
    kept in the library and win over the file (the theme only when the file sets none):
    `config --show` printed the file alone ("auto_read = true" while nothing was marked
    read, "citation_format (not set)" while `cite` printed Markdown)."""
    import os
    import tomllib

    from abstract_reader.library import Library

    conf.write_text('auto_read = true\ntheme = "nord"\n', encoding="utf-8")
    with Library(Path(os.environ["ABSTRACT_READER_DB"])) as library:
        library.set_setting("cite_format", "markdown")
        library.set_setting("auto_read", "off")
        library.set_setting("theme", "gruvbox")
    shown = cli("config", "--show")
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    assert any(line.startswith('# citation_format = "markdown"') for line in lines)
    assert any(line.startswith("# auto_read = false") for line in lines)
    assert not any("gruvbox" in line for line in lines)  # the file's theme wins
    assert tomllib.loads(shown.stdout)["theme"] == "nord"  # still a valid config file


def test_cite_uses_the_config_files_format_unless_the_reader_chose_one(conf: Path) -> None:
    """`citation_format` in the file is what `cite` prints (it printed BibTeX whatever the
    file said); `d` in the reader's picker (kept in the library) wins over it."""
    import os

    from abstract_reader.library import Library

    conf.write_text('citation_format = "markdown"\n', encoding="utf-8")
    paper = cli("list").stdout.split()[0]
    markdown = cli("cite", paper)
    assert markdown.returncode == 0 and markdown.stdout.startswith("- ")
    assert "@inproceedings" not in markdown.stdout
    with Library(Path(os.environ["ABSTRACT_READER_DB"])) as library:
        library.set_setting("cite_format", "bibtex")
    assert cli("cite", paper).stdout.startswith("@")


def test_cite_says_a_broken_config_file_is_ignored(conf: Path) -> None:
    """A config file `cite` cannot read is one warning line naming it, and the citation
    still comes (BibTeX, the default): it was ignored in silence, so a typo in
    ``citation_format`` passed for the reader's choice of BibTeX."""
    conf.write_text("citation_format = \n", encoding="utf-8")
    paper = cli("list").stdout.split()[0]
    result = cli("cite", paper)
    assert result.returncode == 0 and result.stdout.startswith("@inproceedings")
    warnings = result.stderr.splitlines()
    assert len(warnings) == 1 and str(conf) in warnings[0] and "not valid TOML" in warnings[0]


def test_show_says_a_remap_onto_another_bindings_key_and_who_wins(conf: Path) -> None:
    """`toggle_read = "j"` (j is also the list's down and the paper view's view_down) and
    `copy = "B"` after `bookmark = "B"`: `config --show` said nothing (the reader silently
    left read marks without a key). One line each, naming the file, the line, the key and
    both ids, and what is in effect; a mistyped id is said too, as the reader says it."""
    conf.write_text(
        '[keys]\nbookmark = "B"\ntoggle_read = "j"\ncopy = ["B", "y"]\nbookmrk = "x"\n',
        encoding="utf-8",
    )
    result = cli("config", "--show")
    assert result.returncode == 1
    lines = [line.removeprefix("abstract-reader: ") for line in result.stderr.splitlines()]
    assert len(lines) == 3, lines
    assert lines[0] == (
        f"{conf}: line 3: keys.toggle_read: j is also down's (the list) and view_down's "
        "(the paper view); the remap wins: j is toggle_read's, down and view_down lose it"
    )
    assert lines[1].startswith(f"{conf}: line 4: keys.copy: B is already bookmark's in")
    assert "copy does not get it" in lines[1]
    assert lines[2].startswith(f"{conf}: line 5: keys.bookmrk: no such binding id")
    assert 'toggle_read = "j"' in result.stdout  # the file's settings are still printed


def test_a_remap_that_only_takes_a_key_is_said_but_is_no_failure(conf: Path) -> None:
    """`toggle_read = "j"` works as written (j toggles read marks, ↓ still moves down):
    `config --show` says what the remap did, and exits 0 (it exited 1, as for a broken
    file); a remap that leaves another binding no key at all is still a problem (1)."""
    conf.write_text('[keys]\ntoggle_read = "j"\n', encoding="utf-8")
    result = cli("config", "--show")
    assert result.returncode == 0, result.stderr
    assert "the remap wins: j is toggle_read's" in result.stderr
    assert 'toggle_read = "j"' in result.stdout
    conf.write_text('[keys]\ntags = "b"\n', encoding="utf-8")  # bookmark's only key
    result = cli("config", "--show")
    assert result.returncode == 1
    assert "bookmark has no key left" in result.stderr


def test_an_unknown_theme_is_one_line_naming_the_themes(conf: Path) -> None:
    """`theme = "nosuchtheme"` passed `config --show` (and the reader) silently."""
    conf.write_text('theme = "nosuchtheme"\n', encoding="utf-8")
    result = cli("config", "--show")
    assert result.returncode == 1 and len(result.stderr.splitlines()) == 1
    line = result.stderr.strip().removeprefix("abstract-reader: ")
    assert line.startswith(f"{conf}: line 1: theme: no theme 'nosuchtheme' (the themes: ")
    assert (
        "nord" in line
        and "textual-dark" in line
        and line.endswith("the theme last chosen in the reader applies (else the default)")
    )
    assert "# theme = (not set)" in result.stdout
    conf.write_text('theme = "nordd"\n', encoding="utf-8")
    config, warnings = load_config()
    assert config.theme is None
    assert warnings == [
        f"{conf}: line 1: theme: no theme 'nordd' (did you mean nord?); the theme last chosen in the reader applies (else the default)"
    ]


def _config_show(path: Path) -> subprocess.CompletedProcess[str]:
    """`config --show` with ``path`` as the config file, in a process that is killed after
    60 s (a FIFO opened for reading waits for a writer forever: the test must not hang)."""
    env = {**os.environ, "ABSTRACT_READER_CONFIG": str(path)}
    return subprocess.run(
        [sys.executable, "-m", "abstract_reader", "config", "--show"],
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
        env=env,
    )


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_as_the_config_file_is_one_line_and_the_defaults(tmp_path: Path) -> None:
    fifo = tmp_path / "config.toml"
    os.mkfifo(fifo)
    result = _config_show(fifo)  # hung until killed before the fix
    assert result.returncode == 1
    assert result.stderr == (
        f"abstract-reader: {fifo}: cannot read (it is a FIFO, not a regular file); "
        "the defaults apply\n"
    )
    assert result.stdout.startswith(f"# {fifo} (a FIFO, not a regular file: these are the")
    assert "auto_read = true" in result.stdout


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="no /dev/zero")
def test_a_device_as_the_config_file_is_said_to_be_one(tmp_path: Path) -> None:
    result = _config_show(Path("/dev/zero"))
    assert result.returncode == 1
    assert "/dev/zero: cannot read (it is a device, not a regular file)" in result.stderr
    assert result.stdout.startswith("# /dev/zero (a device, not a regular file: these are")
    assert "not there" not in result.stdout


def test_a_dangling_link_as_the_config_file_names_its_target(tmp_path: Path) -> None:
    link = tmp_path / "config.toml"
    link.symlink_to(tmp_path / "gone.toml")
    result = _config_show(link)
    assert result.returncode == 1
    assert f"a link to {tmp_path / 'gone.toml'}, which is not there" in result.stderr
    assert result.stdout.startswith(f"# {link} (a link to {tmp_path / 'gone.toml'}, which")


def test_show_marks_the_keys_entries_not_in_effect_as_ignored_with_the_reason(conf: Path) -> None:
    """`config --show` listed `nonexistent_binding = "x"` and a remap refused (its key kept
    by an earlier remap) as if they were in effect. They are comments now, saying why; one
    partly in effect says which key is not; what is in effect reads as before."""
    conf.write_text(
        '[keys]\nnonexistent_binding = "x"\nbookmark = "j"\ntoggle_read = "j"\n'
        'copy = ["j", "y"]\nnote = "O"\n',
        encoding="utf-8",
    )
    shown = cli("config", "--show").stdout.splitlines()
    keys = shown[shown.index("[keys]") + 1 :]
    assert keys == [
        'bookmark = "j"',
        'copy = ["j", "y"]  # not in effect: j kept by an earlier remap (see the warning)',
        '# nonexistent_binding = "x"  # ignored: no such binding id',
        'note = "O"',
        '# toggle_read = "j"  # ignored: j kept by an earlier remap (see the warning)',
    ]


def test_show_says_a_key_a_dialogs_field_keeps_is_kept_by_that_field(conf: Path) -> None:
    """A remap refused because the focused field keeps the key was said to be "kept by an
    earlier remap" (there was none); the binding keeps its default key meanwhile."""
    conf.write_text('[keys]\neditor_save = "ctrl+e"\ncite_default = ["enter", "D"]\n', "utf-8")
    result = cli("config", "--show")
    keys = result.stdout.splitlines()
    keys = keys[keys.index("[keys]") + 1 :]
    assert keys == [
        'cite_default = ["enter", "D"]  # not in effect: Enter kept by the list in the '
        "citation formats (see the warning)",
        '# editor_save = "ctrl+e"  # ignored: ctrl+e kept by the text field in the tag editor '
        "(see the warning)",
    ]
    assert "editor_save keeps its default key ctrl+s" in result.stderr
