"""The reader's load notice counts the problems it does not list as the CLI does: every bad
record of a metadata file, not the lines kept for them (it said "… and 9 more load
warnings" for a file of 30 bad records)."""

from __future__ import annotations

import json
from pathlib import Path

from abstract_reader.corpus import LOAD_PROBLEMS_SHOWN

from .conftest import make_app, settle, until

WIDE = (140, 40)


async def test_the_notice_counts_every_bad_record(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    good = {"id": "2601.00001", "title": "Elsewhere", "abstract": "A paper on other things."}
    lines = [json.dumps(good), *(f"{{oops {n}" for n in range(30))]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    app = make_app(tmp_path, [path])
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        await until(pilot, lambda: bool(app._notifications))
        [notice] = list(app._notifications)
        said = notice.message.splitlines()
        assert len(said) == LOAD_PROBLEMS_SHOWN + 2
        assert said[-2] == f"… and {30 - LOAD_PROBLEMS_SHOWN} more load warnings"
        assert said[-1] == "L lists them."  # (every one: the load problems' key)
