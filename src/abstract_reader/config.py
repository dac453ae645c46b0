"""The user's config file: ``config.toml`` in the user config dir (``$ABSTRACT_READER_CONFIG``).

```toml
auto_read = true            # mark a paper read after it has been shown for a while
auto_read_delay = 1.5       # seconds (0-60)
citation_format = "bibtex"  # what `c` copies and `cite` prints, until `d` in the reader's
                            # citation picker makes another the default (kept in the library)
theme = "nord"              # a Textual theme name
list_width = 60             # the paper list's width: columns (20-400) or "45%" (10-90%)

[keys]                      # binding id = key or [keys]; see `?` in the reader for the ids
bookmark = "B"
quit = ["q", "ctrl+q"]
```

Reading never fails: a file that is not TOML is one warning (file, line, problem) and every
default applies; a bad value is one warning naming its line and that setting's default
applies, the rest of the file still counts. The core reads it; the reader applies it.
"""

from __future__ import annotations

import math
import os
import re
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import platformdirs

from .paths import APP_NAME
from .text import escape_for_terminal

CONFIG_ENV = "ABSTRACT_READER_CONFIG"
MAX_CONFIG_BYTES = 1 << 20

#: The themes the reader has: Textual's (``App.available_themes``; a test keeps this list
#: in step with the Textual installed). The core does not import Textual, so it is named here.
THEMES: tuple[str, ...] = (
    *("textual-dark", "textual-light", "nord", "gruvbox", "catppuccin-mocha", "dracula"),
    *("tokyo-night", "monokai", "flexoki", "catppuccin-latte", "catppuccin-frappe"),
    *("catppuccin-macchiato", "solarized-light", "solarized-dark", "rose-pine"),
    *("rose-pine-moon", "rose-pine-dawn", "atom-one-dark", "atom-one-light", "ansi-dark"),
    "ansi-light",
)

_BINDING_ID = re.compile(r"[a-z][a-z0-9_.-]{0,63}")
# "q", "?", "B", "ctrl+b", "shift+tab", "f5", "space", "question_mark", "ctrl+shift+left"
_KEY = re.compile(r"(?:(?:ctrl|shift|alt|meta|super|hyper)\+)*(?:[a-z][a-z0-9_]*|[^\s+,])")


@dataclass(frozen=True, slots=True)
class Config:
    """The settings in effect. Defaults are what the reader does with no config file."""

    auto_read: bool = True
    auto_read_delay: float = 1.5
    #: what `c` copies and `cite` prints when the library has no choice of `d`'s; None: bibtex
    citation_format: str | None = None
    theme: str | None = None  #: None: the library's saved theme, else Textual's default
    list_width: int | str | None = None  #: columns, or "NN%"; None: the reader's layout
    keys: dict[str, tuple[str, ...]] = field(default_factory=dict)  #: binding id -> keys
    #: where they were read, for messages (not settings): the file as messages name it …
    source: str = field(default="", compare=False, repr=False)
    #: … and the line of each ``[keys]`` entry
    key_lines: dict[str, int] = field(default_factory=dict, compare=False, repr=False)

    def key_warning(self, binding_id: str, problem: str) -> str:
        """One line about the ``[keys]`` entry ``binding_id``, as the file's other warnings
        are written: the file, the line, ``keys.ID: problem``."""
        line = self.key_lines.get(binding_id)
        where = f"line {line}: " if line else ""
        name = escape_for_terminal(binding_id)
        return f"{self.source or 'config'}: {where}keys.{name}: {problem}"


#: the settings a config file can set (the fields of ``Config`` that are not about its source)
SETTINGS: tuple[str, ...] = tuple(f.name for f in fields(Config) if f.compare)


def config_path() -> Path:
    """``$ABSTRACT_READER_CONFIG``, else ``config.toml`` in the user config dir."""
    override = os.environ.get(CONFIG_ENV)
    if override:
        return Path(override).expanduser()
    return platformdirs.user_config_path(APP_NAME) / "config.toml"


def _line_of(text: str, key: str, table: str | None = None) -> int | None:
    """The line where ``key = …`` is set (inside ``[table]`` when given), for messages."""
    current: str | None = None
    pattern = re.compile(rf"""\s*(?:{re.escape(key)}|"{re.escape(key)}"|'{re.escape(key)}')\s*=""")
    for number, line in enumerate(text.splitlines(), 1):
        header = re.match(r"\s*\[\s*([^\]]+?)\s*\]", line)
        if header:
            current = header.group(1).strip("\"'")
            continue
        if current == table and pattern.match(line):
            return number
    return None


def _citation_formats() -> tuple[str, ...]:
    from .formats import FORMATS

    return FORMATS


def load_config(path: Path | None = None) -> tuple[Config, list[str]]:
    """The config in effect and one warning line per problem (empty when all is well).
    A missing file is no problem: the defaults."""
    from .infile import NotRegular, open_regular

    path = config_path() if path is None else path
    shown = escape_for_terminal(str(path))
    try:  # (looked at first and opened without waiting: a FIFO never blocks the start)
        with open_regular(path) as handle:
            raw = handle.read(MAX_CONFIG_BYTES + 1)
    except FileNotFoundError:
        if os.path.islink(path):
            return Config(), [f"{shown}: cannot read ({file_state(path)}); the defaults apply"]
        return Config(), []
    except NotRegular as exc:
        return Config(), [f"{shown}: cannot read (it {exc}); the defaults apply"]
    except OSError as exc:
        return Config(), [f"{shown}: cannot read ({exc.strerror or exc}); the defaults apply"]
    if len(raw) > MAX_CONFIG_BYTES:
        return Config(), [f"{shown}: larger than 1 MB, not a config file; the defaults apply"]
    import tomllib  # (~5 ms: only when there is a file to parse)

    try:
        text = raw.decode("utf-8")
        data = tomllib.loads(text)
    except UnicodeDecodeError:
        return Config(), [f"{shown}: not UTF-8 text; the defaults apply"]
    except tomllib.TOMLDecodeError as exc:
        message = str(exc)
        where = re.search(r"\(at line (\d+), column (\d+)\)", message)
        problem = re.sub(r"\s*\(at line \d+, column \d+\)|\s*\(at end of document\)", "", message)
        line = f"line {where.group(1)}: " if where else ""
        return Config(), [
            f"{shown}: {line}not valid TOML ({escape_for_terminal(problem)}); the defaults apply"
        ]
    return _validate(data, text, shown)


def file_state(path: Path) -> str | None:
    """None when ``path`` is a regular file (or a link to one), else what it is, for a
    message: "not there", "a FIFO, not a regular file", "a link to …, which is not there"."""
    from .infile import kind_of

    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        if os.path.islink(path):
            target = escape_for_terminal(os.readlink(path))
            return f"a link to {target}, which is not there"
        return "not there"
    except OSError as exc:
        return f"cannot be looked at: {exc.strerror or exc}"
    return None if stat.S_ISREG(mode) else f"{kind_of(mode)}, not a regular file"


def _validate(data: dict[str, Any], text: str, shown: str) -> tuple[Config, list[str]]:
    warnings: list[str] = []
    values: dict[str, Any] = {}
    defaults = Config()

    def warn(key: str, problem: str, table: str | None = None) -> None:
        line = _line_of(text, key, table)
        where = f"line {line}: " if line else ""
        name = f"{table}.{key}" if table else key
        warnings.append(f"{shown}: {where}{escape_for_terminal(name)}: {problem}")

    def default_of(key: str) -> str:
        value = getattr(defaults, key)
        if key == "theme":  # (what the reader applies when the file sets none)
            return "the theme last chosen in the reader applies (else the default)"
        return (
            "the default applies" if value is None else f"the default ({toml_value(value)}) applies"
        )

    known = list(SETTINGS)
    for key, value in data.items():
        if key not in known:
            warn(key, f"unknown setting (known: {', '.join(known)}); ignored")
            continue
        if key == "auto_read":
            if isinstance(value, bool):
                values[key] = value
            else:
                warn(key, f"expected true or false, got {_show(value)}; {default_of(key)}")
        elif key == "auto_read_delay":
            if (
                isinstance(value, int | float)
                and not isinstance(value, bool)
                and math.isfinite(value)
                and 0 <= value <= 60
            ):
                values[key] = float(value)
            else:
                warn(key, f"expected seconds from 0 to 60, got {_show(value)}; {default_of(key)}")
        elif key == "citation_format":
            formats = _citation_formats()
            if isinstance(value, str) and value in formats:
                values[key] = value
            else:
                warn(
                    key,
                    f"expected one of {', '.join(formats)}, got {_show(value)}; {default_of(key)}",
                )
        elif key == "theme":
            if isinstance(value, str) and value in THEMES:
                values[key] = value
            else:
                warn(key, f"{_no_theme(value)}; {default_of(key)}")
        elif key == "list_width":
            width = _list_width(value)
            if width is None:
                warn(
                    key,
                    f'expected columns (20-400) or a share such as "45%" (10-90%), got '
                    f"{_show(value)}; {default_of(key)}",
                )
            else:
                values[key] = width
        elif key == "keys":
            if not isinstance(value, dict):
                warn(key, f"expected a [keys] table, got {_show(value)}; ignored")
                continue
            keys: dict[str, tuple[str, ...]] = {}
            for binding, spec in value.items():
                if not _BINDING_ID.fullmatch(binding):
                    warn(binding, "not a binding id (see ? in the reader); ignored", "keys")
                    continue
                parsed = _keys(spec)
                if parsed is None:
                    warn(
                        binding,
                        f'expected a key such as "b" or "ctrl+b", or a list of them, got '
                        f"{_show(spec)}; ignored",
                        "keys",
                    )
                    continue
                keys[binding] = parsed
            values[key] = keys
            values["key_lines"] = {
                binding: line for binding in keys if (line := _line_of(text, binding, "keys"))
            }
    return Config(**values, source=shown), warnings


def warnings_notice(warnings: list[str]) -> str:
    """The config file's warnings as the reader's one start-up notice: the warning itself
    when there is one; else the count and the first ("config.toml: 12 problems — first:
    …"), and where they are all listed (a dozen toasts covered the whole list)."""
    if len(warnings) <= 1:
        return "".join(warnings)
    return (
        f"{len(warnings)} problems in the config file — first: {warnings[0]}\n"
        "abstract-reader config --show lists them all."
    )


def _no_theme(value: object) -> str:
    """Why ``value`` is not a theme, with the nearest names (else all of them)."""
    import difflib

    if not isinstance(value, str):
        return f"expected a theme name, got {_show(value)}"
    near = difflib.get_close_matches(value.lower(), THEMES, n=3, cutoff=0.6)
    if near:
        return f"no theme {_show(value)} (did you mean {', '.join(near)}?)"
    return f"no theme {_show(value)} (the themes: {', '.join(THEMES)})"


def _list_width(value: object) -> int | str | None:
    if isinstance(value, int) and not isinstance(value, bool) and 20 <= value <= 400:
        return value
    if isinstance(value, str):
        match = re.fullmatch(r"\s*(\d{1,2})\s*%\s*", value)
        if match and 10 <= int(match.group(1)) <= 90:
            return f"{int(match.group(1))}%"
    return None


def _keys(spec: object) -> tuple[str, ...] | None:
    items = [spec] if isinstance(spec, str) else spec
    if not isinstance(items, list) or not items:
        return None
    out: list[str] = []
    for item in items:
        if not isinstance(item, str):
            return None
        for key in (k.strip() for k in item.split(",")) if len(item) > 1 else [item]:
            if not key.isprintable() or not _KEY.fullmatch(key):
                return None
            out.append(key)
    return tuple(out)


def _show(value: object) -> str:
    text = repr(value)
    return escape_for_terminal(text if len(text) <= 60 else text[:57] + "...")


def to_toml(config: Config, key_notes: Mapping[str, tuple[bool, str]] | None = None) -> str:
    """The settings as a config file would set them (unset optional ones as comments).
    ``key_notes``: a ``[keys]`` entry not (wholly) in effect → (whether some of it is, why
    not): an entry wholly ignored is a comment saying so, one partly in effect says what
    is not."""
    key_notes = key_notes or {}
    lines: list[str] = []
    for name in SETTINGS:
        if name == "keys":
            continue
        value = getattr(config, name)
        if value is None:
            lines.append(f"# {name} = (not set)")
        else:
            lines.append(f"{name} = {toml_value(value)}")
    lines.append("")
    lines.append("[keys]")
    if not config.keys:
        lines.append("# (no remapped keys)")
    for binding, keys in sorted(config.keys.items()):
        shown = toml_value(keys[0]) if len(keys) == 1 else toml_value(list(keys))
        line = f"{escape_for_terminal(binding)} = {shown}"
        note = key_notes.get(binding)
        if note is None:
            lines.append(line)
        elif note[0]:
            lines.append(f"{line}  # not in effect: {note[1]}")
        else:
            lines.append(f"# {line}  # ignored: {note[1]}")
    return "\n".join(lines) + "\n"


def toml_value(value: object) -> str:
    """``value`` as TOML writes it (text escaped for a terminal too)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    text = str(value).replace("\\", "\\\\").replace('"', '\\"')
    return f'"{escape_for_terminal(text)}"'
