"""What the first frame does not wait for: the reader opened on the bundled dumps, in a
fresh interpreter, shows its first abstract without importing what only a later action
needs — Textual's TextArea (the note editor), the metadata readers, the title process, the
citation formats, and the TOML parser (no config file). Each of
these was once on the way to the first frame and cost start-up time (issue #14: start-up
against a bare Textual app)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

DEFERRED = (
    "textual.widgets._text_area",
    "textual.document",
    "abstract_reader.sources",
    "abstract_reader.text.titler",
    "abstract_reader.cite",
    "tomllib",
)

SCRIPT = textwrap.dedent(
    """
    import asyncio, json, sys
    from pathlib import Path
    from abstract_reader.tui.app import ReaderApp
    from abstract_reader.tui.widgets.paper_view import PaperView

    tmp = Path(sys.argv[1])

    async def run() -> None:
        app = ReaderApp(None, tmp / "lib.sqlite3", cache_dir=tmp / "cache", read_delay=3600.0)
        async with app.run_test(size=(120, 40)) as pilot:
            view = app.main.query_one(PaperView)
            for _ in range(500):
                if view.details is not None:
                    break
                await pilot.pause(0.01)
            loaded = sorted(m for m in sys.modules if m.split(".")[0] in ("textual", "abstract_reader", "tomllib", "numpy"))
            print(json.dumps({"shown": view.details is not None, "modules": loaded}))
            await app.action_quit()

    asyncio.run(run())
    """
)


def test_first_abstract_without_the_later_imports(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "ABSTRACT_READER_CONFIG": str(tmp_path / "none.toml"),  # no config file
        "ABSTRACT_READER_CACHE": str(tmp_path / "cache"),
    }
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["shown"], "the first abstract was not shown"
    loaded = result["modules"]
    early = [m for m in loaded if any(m == d or m.startswith(d + ".") for d in DEFERRED)]
    assert early == [], f"imported before the first abstract: {early}"


def test_the_saved_searches_lexer_does_not_bring_the_search_package() -> None:
    """`saved` (on the way to the first frame: the last session's filter may name ``@name``)
    finds ``@name`` terms with the filter's own lexer, from a module of its own: importing
    the search package for it brought numpy (~90 ms) before the first frame."""
    code = (
        "import sys, abstract_reader.saved, abstract_reader.session;"
        "print(sorted(m for m in sys.modules"
        " if m.split('.')[0] == 'numpy' or m.startswith('abstract_reader.search')))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
