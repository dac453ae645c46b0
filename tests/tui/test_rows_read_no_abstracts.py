"""The list's rows show titles, venues and marks, never the abstract: drawing them reads no
abstract. (Each read of a mapped abstract maps the whole page-cache folio around it; rows
drawn from all over a 100k corpus while a query was typed made every abstract resident,
~85 MB, before this.)"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from abstract_reader.papertable import PaperTable

from ..conftest import write_dump
from .conftest import list_lines, listed, make_app, settle, type_filter

WIDE = (140, 40)


async def test_typing_a_query_reads_only_the_shown_papers_abstract(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    texts = [f"Paper {n}: robust estimation of topic {n % 7} under noise." for n in range(400)]
    dump = write_dump(tmp_path / "big.txt", *texts)
    read: list[int] = []
    real_build = PaperTable._build

    def build(self: PaperTable, i: int, *, abstract: bool) -> Any:
        if abstract:
            read.append(i)
        return real_build(self, i, abstract=abstract)

    monkeypatch.setattr(PaperTable, "_build", build)
    app = make_app(tmp_path, [dump])
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        read.clear()
        for query in ("topic 3", "robust topic 5", "noise"):
            await pilot.press("slash", "ctrl+u")  # (a new query, not added to the last)
            await type_filter(app, pilot, query)
            shown = listed(app)
            assert shown and len(list_lines(app)) > 10  # a screenful of rows drawn
        # the paper view's abstracts only: one paper at a time, never a screenful of rows
        assert len(set(read)) <= 3 * 2
        view = app.main.current_paper()
        assert view is not None and view.abstract.startswith("Paper ")  # (the view has it)
        assert shown[0] == app.session.title_of(view)
