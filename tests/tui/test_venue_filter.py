"""The reader's ``venue:`` filter on the venue a paper shows: a venue ``match`` finds while the
reader is open (another process) moves the paper between venue filters."""

from __future__ import annotations

from pathlib import Path

from abstract_reader.library import Library, Metadata
from abstract_reader.metadata import PROVENANCE_PREFIX, Provenance

from .conftest import list_lines, listed, make_app, settle, type_filter, until

WIDE = (140, 40)


async def test_a_venue_matched_elsewhere_moves_the_paper_between_venue_filters(
    tmp_path: Path,
) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        paper = app.session.corpus.papers[7]
        await type_filter(app, pilot, "venue:journal")
        assert listed(app) == []
        with Library(tmp_path / "lib.sqlite3") as cli:  # `abstract-reader match refs.json`
            cli.set_metadata(paper.id, Metadata(title="Robust Things"))
            prov = Provenance("csl-json", "rse", "refs.json", 100.0, "Journal of Robust Things")
            cli.set_setting(PROVENANCE_PREFIX + paper.id, prov.to_json())
        await until(pilot, lambda: listed(app) == ["Robust Things"])
        assert "Journal of Robust" in list_lines(app)[0]  # (the venue the row shows)
        await pilot.press("ctrl+u", *"venue:neurips")
        await settle(app, pilot)
        assert len(listed(app)) == 54 and "Robust Things" not in listed(app)
