"""A fault of the reader's own while it loads dumps (not a bad dump: those are skipped with a
load error) never leaves it stuck with a half-loaded list and a filter that waits forever: the
dump is named in the status's load errors, the papers loaded so far are indexed and
filterable, and the partial parse is not saved as the dumps' cache."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from abstract_reader import corpus as corpus_module
from abstract_reader.corpus import LOAD_PROBLEMS_SHOWN, CorpusBuilder, PaperTable, load_corpus

from ..conftest import write_dump
from .conftest import listed, make_app, settle, type_filter, until

WIDE = (140, 40)


def _status(app: Any) -> str:
    return str(app.query_one("#status").render())


async def test_a_fault_mid_dump_stops_the_load_with_what_was_loaded_usable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = write_dump(tmp_path / "a.txt", *(f"Alpha paper {n} on kernels." for n in range(40)))
    second = write_dump(tmp_path / "b.txt", *(f"Beta paper {n} on graphs." for n in range(40)))
    monkeypatch.setattr("abstract_reader.tui.screens.main.SYNC_LOAD_BYTES", 0)  # a thread
    real_extend = PaperTable.extend
    added: list[int] = []

    def extend_then_fail(self: PaperTable, rows: Any) -> int:
        if added:  # the second dump's first batch: a fault of ours
            raise RuntimeError("simulated fault")
        added.append(len(rows))
        return real_extend(self, rows)

    monkeypatch.setattr(PaperTable, "extend", extend_then_fail)
    app = make_app(tmp_path, [first, second])
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        await until(pilot, lambda: app.session.index is not None)
        status = _status(app)
        assert "1 load error" in status and "indexing" not in status
        errors = [str(e) for e in app.session.corpus.fatal_errors]
        assert len(errors) == 1
        assert "b.txt" in errors[0] and "RuntimeError: simulated fault" in errors[0]
        assert len(listed(app)) == 40  # the first dump's papers stay
        await type_filter(app, pilot, "alpha kernels")
        assert len(listed(app)) == 40
        await type_filter(app, pilot, "graphs")
        assert listed(app) == []
    assert not list((tmp_path / "corpus").glob("*.corpus"))  # nothing partial is cached


def test_a_fault_parsing_one_dump_skips_it_and_names_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    good = write_dump(tmp_path / "good.txt", "A fine abstract on kernels.")
    bad = write_dump(tmp_path / "bad.txt", "An abstract the parser trips on.")
    real_parse = corpus_module._parse_text

    def parse(text: str, warnings: list[str] | None = None) -> Any:
        if "trips" in text:
            raise AttributeError("partially initialized module 'numpy'")
        return real_parse(text, warnings)

    monkeypatch.setattr(corpus_module, "_parse_text", parse)
    loaded = load_corpus([bad, good])
    assert [p.abstract for p in loaded.papers] == ["A fine abstract on kernels."]
    assert [str(e) for e in loaded.errors] == [
        f"{bad}: could not be parsed (AttributeError: partially initialized module 'numpy');"
        " skipped"
    ]


def test_a_faults_message_is_shown_as_one_line_of_plain_text(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The message of a fault may quote the dump's text: no control sequence of it reaches
    the terminal, and the load error stays one line."""
    dump = write_dump(tmp_path / "bad.txt", "An abstract.")

    def parse(text: str, warnings: list[str] | None = None) -> Any:
        raise ValueError("bad text \x1b[2J\x1b]0;pwned\x07 here\nsecond line" + "x" * 500)

    monkeypatch.setattr(corpus_module, "_parse_text", parse)
    [error] = load_corpus([dump]).errors
    shown = str(error)
    assert "\x1b" not in shown and "\x07" not in shown and "\n" not in shown
    assert shown.startswith(f"{dump}: could not be parsed (ValueError: bad text ")
    assert len(shown) < len(str(dump)) + 250


async def test_a_failed_loading_worker_stays_in_the_status(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A fault after every dump is read (here in `CorpusBuilder.finish`) ends the loading
    worker: the status says so for good (a load error), not only a passing toast, and no
    longer says the load goes on."""
    dump = write_dump(tmp_path / "a.txt", *(f"Alpha paper {n} on kernels." for n in range(40)))
    monkeypatch.setattr("abstract_reader.tui.screens.main.SYNC_LOAD_BYTES", 0)  # a thread

    def finish(self: CorpusBuilder) -> Any:
        raise RuntimeError("simulated fault \x1b[2J")

    monkeypatch.setattr(CorpusBuilder, "finish", finish)
    app = make_app(tmp_path, [dump])
    async with app.run_test(size=WIDE) as pilot:
        await until(pilot, lambda: "1 load error" in _status(app))
        assert "loading" not in _status(app)
        [error] = [str(e) for e in app.session.corpus.fatal_errors]
        assert error.startswith("loading: stopped (RuntimeError: simulated fault")
        assert "\x1b" not in error


async def test_the_load_notice_lists_a_failed_file_before_many_warnings(tmp_path: Path) -> None:
    """The reader's notice lists as many problems as the CLI (`LOAD_PROBLEMS_SHOWN`): a
    file that failed is listed even after more warned files than that, then a count."""
    folder = tmp_path / "mixed"
    folder.mkdir()
    for n in range(20):
        (folder / f"w{n:02}.txt").write_bytes(b"TestConf 2025 Papers\n\nA byte \xff here.\n")
    (folder / "z.txt").write_bytes(b"")
    app = make_app(tmp_path, [folder])
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        await until(pilot, lambda: bool(app._notifications))
        [notice] = list(app._notifications)
        lines = notice.message.splitlines()
        assert len(lines) == LOAD_PROBLEMS_SHOWN + 2
        assert f"{folder / 'z.txt'}: empty file" in lines
        assert lines[-2] == f"… and {21 - LOAD_PROBLEMS_SHOWN} more load warnings"
        assert lines[-1] == "L lists them; the load errors are printed again when you quit."
        # (the status's words: "⚠ 1 load error")
        assert notice.title == "1 load error · 20 files loaded, 20 with warnings"
