"""Rendering in the reader: hostile abstracts stay responsive; math and hits look different."""

from __future__ import annotations

from pathlib import Path

from textual.content import Content

from abstract_reader.tui.widgets.paper_view import DISPLAY_LIMIT, PaperView

from ..conftest import write_dump
from .conftest import make_app, settle, type_filter, until


def _body(app: object) -> Content:
    view: PaperView = app.query_one(PaperView)  # type: ignore[attr-defined]
    return view.body


async def test_a_hostile_abstract_is_shown_capped_and_q_still_quits(tmp_path: Path) -> None:
    # 128 KB of emphasis markers and math openers: quadratic before, seconds per paper
    hostile = "**x \\( $a " * 13_000
    dump = write_dump(tmp_path / "hostile.txt", hostile, "A short abstract about robust $k$.")
    app = make_app(tmp_path, [dump])
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(app, pilot)
        await until(pilot, lambda: "**x" in _body(app).plain or "x \\(" in _body(app).plain)
        body = _body(app).plain
        assert len(body) < DISPLAY_LIMIT + 200
        assert "more characters not shown" in body
        await pilot.press("down", "up", "down")  # move away and back: rendered again (memo)
        await settle(app, pilot)
        await pilot.press("q")
        await until(pilot, lambda: not app.is_running)


async def test_math_and_search_hits_have_different_styles(tmp_path: Path) -> None:
    dump = write_dump(tmp_path / "d.txt", r"A bound $\ell_2$ for robust estimators of $\mu$.")
    app = make_app(tmp_path, [dump])
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(app, pilot)
        await type_filter(app, pilot, "robust")
        await until(pilot, lambda: any("underline" in str(s.style) for s in _body(app).spans))
        body = _body(app)
        styles = {body.plain[s.start : s.end]: str(s.style) for s in body.spans}
        assert styles["ℓ₂"] != styles["robust"]
        assert styles["ℓ₂"] == styles["μ"]
