"""The effective-metadata rule, in one place: what title, authors, year, … a paper shows.

Three layers, per field, first that has a value wins:

1. the library's metadata for the paper (set by hand with ``e`` / ``meta``, or written by
   ``match`` — then with a provenance record saying where it came from);
2. the paper's own record, when it was loaded from a metadata source (OpenReview, arXiv,
   BibTeX, RIS, CSL-JSON) rather than a bare dump;
3. the dump: venue and year from its header, and a title derived from the abstract.

Provenance of matched metadata lives in the library's key/value ``settings`` table under
``provenance:<paper id>`` (a JSON object), so no schema change was needed: it says which
source and record the metadata came from, and what ``match`` wrote — metadata that no longer
equals what was written has been edited by hand since, and ``match`` leaves it alone.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .text import sanitise

if TYPE_CHECKING:
    from .corpus import Paper
    from .library import Library, Metadata, Snapshot

PROVENANCE_PREFIX = "provenance:"

_DOI_RE = re.compile(r"^10\.\d{4,9}/\S+$")
_DOI_PREFIXES = re.compile(
    r"^(?:https?://(?:dx\.)?doi\.org/|doi:\s*|urn:doi:|info:doi/)", re.IGNORECASE
)
_ARXIV_URL_RE = re.compile(
    r"^https?://(?:www\.)?(?:export\.)?arxiv\.org/(?:abs|pdf)/"
    r"(?P<id>(?:\d{4}\.\d{4,5}|[a-z-]+(?:\.[A-Z]{2})?/\d{7}))(?:v\d+)?(?:\.pdf)?/?$",
)


#: A year written in a venue ("NeurIPS 2025 poster", "ICLR2026").
_VENUE_YEAR_RE = re.compile(r"(?<!\d)(?:1[89]|2[01])\d\d(?!\d)")
#: "NeurIPS poster", "EMNLP Findings", "NeurIPS Datasets and Benchmarks Track": a short name
#: (two capitals at least) then its track, so the year reads best between the two.
_VENUE_TRACK_RE = re.compile(
    r"^(?P<name>[^\s]*[A-Z][^\s]*[A-Z][^\s]*)\s+(?P<track>(?i:.*\b(?:posters?|orals?|"
    r"spotlights?|workshops?|tracks?|findings|demos?|demonstrations?|tutorials?|main|short|"
    r"long|papers?)\b.*))$"
)


#: The long names of the common ML venues → their short names, for ``venue:`` (a venue
#: ``match`` found as "Advances in Neural Information Processing Systems" is found by
#: ``venue:neurips`` as the dump's "NeurIPS" is). A phrase found in the venue, lowercase.
VENUE_LONG_NAMES = {
    "neural information processing systems": "neurips",
    "international conference on machine learning": "icml",
    "international conference on learning representations": "iclr",
    "artificial intelligence and statistics": "aistats",
    "conference on learning theory": "colt",
    "uncertainty in artificial intelligence": "uai",
    "association for computational linguistics": "acl",
    "empirical methods in natural language processing": "emnlp",
    "computer vision and pattern recognition": "cvpr",
    "international conference on computer vision": "iccv",
    "european conference on computer vision": "eccv",
    "aaai conference on artificial intelligence": "aaai",
    "international joint conference on artificial intelligence": "ijcai",
    "knowledge discovery and data mining": "kdd",
    "transactions on machine learning research": "tmlr",
    "journal of machine learning research": "jmlr",
}


def venue_matches(venue: str, prefix: str) -> bool:
    """Does ``venue:prefix`` find a paper shown at ``venue`` (both lowercase)? The venue
    starts with it, or the venue's short name does ("advances in neural information
    processing systems" → "neurips")."""
    if venue.startswith(prefix):
        return True
    short = venue_short_name(venue)
    return short is not None and short.startswith(prefix)


def venue_short_name(venue: str) -> str | None:
    """The short name of a venue written out long (lowercase in, lowercase out), else None."""
    return next((short for long, short in VENUE_LONG_NAMES.items() if long in venue), None)


#: What a person reads for a paper with no venue and no year known (the reader's rows and
#: paper view, `list`, `show`, the digest); machine formats (JSON, CSV) leave the field empty.
UNKNOWN_VENUE = "unknown venue"


def venue_label(venue: str | None, year: int | None) -> str:
    """`venue_year`, or `UNKNOWN_VENUE` when neither is known: the venue as people read it."""
    return venue_year(venue, year) or UNKNOWN_VENUE


def venue_year(venue: str | None, year: int | None) -> str:
    """ "NeurIPS 2026"; never a second year when the venue names one ("NeurIPS 2025
    poster"); a venue with a track gets the year after its name ("NeurIPS 2026 poster",
    "EMNLP 2024 Findings"); "" when neither is known."""
    if not venue or not year:
        return venue or (str(year) if year else "")
    if _VENUE_YEAR_RE.search(venue):
        return venue
    if track := _VENUE_TRACK_RE.match(venue):
        return f"{track.group('name')} {year} {track.group('track')}"
    return f"{venue} {year}"


def record_pair_wins(
    own_venue: str | None, own_year: int | None, rec_venue: str | None, rec_year: int | None
) -> bool:
    """Does a record's (venue, year) replace a paper's own (its dump's, or an earlier
    record's)? A venue and a year are one fact, never taken from two sources: an arXiv
    record's posting year beside a dump's "NeurIPS" would cite a NeurIPS that never had the
    paper. A record with a venue brings its year along (a record whose venue has no year
    leaves a paper's own dated venue alone); a record with no venue (an arXiv posting)
    gives only a year, and only to a paper with no venue of its own."""
    if rec_venue:
        return bool(rec_year) or not own_year
    return not own_venue


def paired_venue_year(
    own_venue: str | None, own_year: int | None, rec_venue: str | None, rec_year: int | None
) -> tuple[str | None, int | None]:
    """The (venue, year) a paper shows once a record is merged into it (`record_pair_wins`)."""
    if not record_pair_wins(own_venue, own_year, rec_venue, rec_year):
        return own_venue, own_year
    if rec_venue:
        return rec_venue, rec_year
    return None, rec_year or own_year


def normalise_doi(raw: str) -> str:
    """``https://doi.org/10.1/x``, ``doi:10.1/x`` … → ``10.1/x``. Raises ValueError when
    what remains is not a DOI (``10.NNNN/…``)."""
    doi = _DOI_PREFIXES.sub("", raw.strip()).strip()
    if not _DOI_RE.match(doi):
        raise ValueError(f"{raw!r} is not a DOI (expected 10.NNNN/…, or https://doi.org/10.…)")
    return doi


def arxiv_id_from_url(url: str | None) -> str | None:
    """``https://arxiv.org/abs/2401.01234v2`` → ``2401.01234`` (None for other URLs)."""
    if not url:
        return None
    found = _ARXIV_URL_RE.match(url.strip())
    return found.group("id") if found else None


@dataclass(frozen=True, slots=True)
class Provenance:
    """Where ``match`` found a paper's metadata, and what it wrote to the library."""

    source: str  #: "openreview", "arxiv", "bibtex", "ris", "csl-json"
    record: str  #: the record's id in that source (forum id, arXiv id, BibTeX key, …)
    location: str = ""  #: the file or cache it was read from
    score: float = 0.0
    venue: str | None = None
    primary_class: str | None = None
    written: dict[str, Any] | None = None  #: ``Metadata.as_dict()`` as written by match
    #: the venue set by hand (``e``, ``meta --venue``): over ``venue``, and the paper's
    #: metadata is then set by hand (``match`` keeps it unless forced)
    hand_venue: str | None = None

    @property
    def shown_venue(self) -> str | None:
        """The venue this provenance gives the paper: the one set by hand, else match's."""
        return self.hand_venue or self.venue

    def describe(self) -> str:
        if self.source == HAND:
            return "venue set by hand"
        where = f" in {self.location}" if self.location else ""
        return f"{self.source} record {self.record}{where} (matched, score {self.score:.0f})"

    def to_json(self) -> str:
        data: dict[str, Any] = {
            "source": self.source,
            "record": self.record,
            "location": self.location,
            "score": self.score,
            "venue": self.venue,
            "primary_class": self.primary_class,
            "written": self.written,
        }
        if self.hand_venue:
            data["hand_venue"] = self.hand_venue
        return json.dumps(data, ensure_ascii=False)

    @staticmethod
    def from_json(raw: str) -> Provenance | None:
        try:
            data = json.loads(raw)
            if not isinstance(data, dict):
                return None

            def text(key: str) -> str | None:
                value = data.get(key)
                return sanitise(value) if isinstance(value, str) and value else None

            written = data.get("written")
            score = data.get("score")
            return Provenance(
                source=text("source") or "unknown",
                record=text("record") or "?",
                location=text("location") or "",
                score=float(score) if isinstance(score, int | float) else 0.0,
                venue=text("venue"),
                primary_class=text("primary_class"),
                written=written if isinstance(written, dict) else None,
                hand_venue=text("hand_venue"),
            )
        except (ValueError, TypeError):
            return None


#: the source of a provenance that holds only a venue set by hand (no match)
HAND = "hand"


def with_hand_venue(prov: Provenance | None, venue: str | None) -> Provenance:
    """The provenance to store for a venue set by hand (None or "": the venue set by hand
    is cleared, match's or the paper's own shows again); match's record, if any, is kept."""
    from dataclasses import replace

    venue = " ".join(sanitise(venue).split()) if venue else None
    if prov is None:
        return Provenance(source=HAND, record="-", hand_venue=venue or None)
    return replace(prov, hand_venue=venue or None)


def set_venue(library: Library, paper_id: str, venue: str | None) -> None:
    """Set (or with None / "" clear) the venue of a paper by hand (``e``, ``meta --venue``):
    kept with its provenance, where the venue ``match`` found is, so every view of the
    venue (`effective_metadata`, ``venue:``, the reader's refresh) follows it."""
    snapshot = library.snapshot
    prov = with_hand_venue(provenance(snapshot, paper_id), venue)
    library.set_setting(PROVENANCE_PREFIX + paper_id, prov.to_json())


def provenance(snapshot: Snapshot | None, paper_id: str) -> Provenance | None:
    """The provenance ``match`` stored for a paper, if any."""
    if snapshot is None:
        return None
    raw = snapshot.settings.get(PROVENANCE_PREFIX + paper_id)
    return _parsed(raw) if raw else None


@functools.lru_cache(maxsize=4096)
def _parsed(raw: str) -> Provenance | None:
    """`Provenance.from_json`, kept for the texts last asked for: each row drawn asks for
    its paper's (a frame of a matched library parsed forty JSON texts); a `Provenance` is
    frozen, and a changed one is another text."""
    return Provenance.from_json(raw)


def set_by_hand(meta: Metadata | None, prov: Provenance | None) -> bool:
    """True when the library holds metadata that the user set (or edited) by hand: there is
    metadata, and it is not exactly what ``match`` wrote."""
    if prov is not None and prov.hand_venue:
        return True
    if meta is None or meta.empty:
        return False
    return prov is None or prov.written != meta.as_dict()


@dataclass(frozen=True, slots=True)
class EffectiveMetadata:
    """A paper's metadata as shown and cited."""

    title: str
    title_derived: bool  #: True: a stand-in derived from the abstract
    authors: tuple[str, ...]  #: "First Last", in order
    year: int | None
    venue: str | None
    url: str | None
    doi: str | None
    eprint: str | None = None  #: arXiv id, when known
    primary_class: str | None = None  #: arXiv primary category, when known
    origin: str = "derived"  #: "hand" (library, by hand), "match", "record", "derived"
    provenance: Provenance | None = None  #: set when ``match`` wrote (or once wrote) it

    @property
    def venue_label(self) -> str:
        """The venue as a row and the paper view show it: "NeurIPS 2026"."""
        return venue_label(self.venue, self.year)


def effective_metadata(
    paper: Paper, library_meta: Metadata | None, prov: Provenance | None = None
) -> EffectiveMetadata:
    """The one rule: library metadata (by hand or by ``match``) overrides the paper's record
    metadata, which overrides the dump's facts and the derived title — field by field.

    ``library_meta`` is ``snapshot.metadata.get(paper.id)``; ``prov`` is
    ``provenance(snapshot, paper.id)`` (only needed to show where matched metadata came from
    and for its venue / arXiv category). ``effective(paper, snapshot)`` does both lookups."""
    meta = library_meta if library_meta is not None and not library_meta.empty else None
    if meta is None and not (prov is not None and prov.hand_venue):
        origin = "derived" if paper.title_derived else "record"
    else:
        origin = "hand" if set_by_hand(meta, prov) else "match"
    title, derived = paper.title, paper.title_derived
    if meta is not None and meta.title:
        title, derived = meta.title, False
    url = (meta.url if meta and meta.url else None) or paper.url
    eprint = arxiv_id_from_url(url) or paper.eprint
    venue = (prov.shown_venue if prov is not None else None) or paper.venue
    return EffectiveMetadata(
        title=title,
        title_derived=derived,
        authors=meta.authors if meta and meta.authors else paper.authors,
        year=meta.year if meta and meta.year else paper.year,
        venue=venue,
        url=url,
        doi=(meta.doi if meta and meta.doi else None) or paper.doi,
        eprint=eprint,
        primary_class=(prov.primary_class if prov is not None else None) or paper.primary_class,
        origin=origin,
        provenance=prov,
    )


def effective(paper: Paper, snapshot: Snapshot | None) -> EffectiveMetadata:
    """``effective_metadata`` with the library lookups done (None: no library)."""
    if snapshot is None:
        return effective_metadata(paper, None)
    return effective_metadata(
        paper, snapshot.metadata.get(paper.id), provenance(snapshot, paper.id)
    )


def title_overrides(snapshot: Snapshot) -> dict[str, str]:
    """Paper id → title from the library, for the search index's titles (the first layer of
    the rule; the paper's own title is the index's default)."""
    return {pid: title for pid, m in snapshot.metadata.items() if (title := _title(m))}


def year_overrides(snapshot: Snapshot) -> dict[str, int]:
    """Paper id → year from the library, for the search index's ``year:`` (the first layer
    of the rule, as `effective_metadata` and the year order apply it; the paper's own year,
    its record's over its dump's, is the index's default)."""
    return {pid: year for pid, m in snapshot.metadata.items() if (year := _year(m))}


def _title(meta: Metadata) -> str | None:
    return meta.title or None


def _year(meta: Metadata) -> int | None:
    return meta.year if meta.year and not meta.empty else None


def _venue(raw: str) -> str | None:
    found = Provenance.from_json(raw)
    return found.shown_venue if found is not None else None


def provenance_entries(snapshot: Snapshot) -> dict[str, str]:
    """Paper id → its stored provenance (the raw JSON), as the library's settings hold it."""
    start = len(PROVENANCE_PREFIX)
    return {
        key[start:]: raw
        for key, raw in snapshot.settings.items()
        if key.startswith(PROVENANCE_PREFIX)
    }


class VenueOverrides:
    """Paper id → the venue ``match`` found for the paper (its provenance), for the search
    index's ``venue:`` — the first layer of the rule for the venue, as `effective_metadata`
    applies it (the paper's own venue, its record's over its dump's, is the index's default).

    Callable on each snapshot; a provenance is parsed once while it stays the same (the reader
    asks after every metadata write: parsing 100,000 provenances took ~1.7 s)."""

    def __init__(self) -> None:
        self._parsed: dict[str, tuple[str, str | None]] = {}  #: id → (raw JSON, its venue)

    def __call__(self, snapshot: Snapshot) -> dict[str, str]:
        parsed: dict[str, tuple[str, str | None]] = {}
        venues: dict[str, str] = {}
        for paper_id, raw in provenance_entries(snapshot).items():
            known = self._parsed.get(paper_id)
            if known is not None and known[0] == raw:
                venue = known[1]
            else:
                found = Provenance.from_json(raw)
                venue = found.shown_venue if found is not None else None
            parsed[paper_id] = (raw, venue)
            if venue:
                venues[paper_id] = venue
        self._parsed = parsed
        return venues


@dataclass(frozen=True, slots=True)
class OverrideChanges:
    """The overrides of the papers whose title, year or venue changed (None: it has none
    any more), for `SearchIndex.update_overrides`."""

    titles: dict[str, str | None]
    years: dict[str, int | None]
    venues: dict[str, str | None]

    def __bool__(self) -> bool:
        return bool(self.titles or self.years or self.venues)


class OverridesFollower:
    """The library's titles, years (`title_overrides`, `year_overrides`) and ``match``'s
    venues (`VenueOverrides`) followed from snapshot to snapshot: `follow` says which papers'
    changed since the last snapshot it saw, so that the reader gives the index those, not
    every matched paper's after each metadata change (100,000 of them took ~5 s a change).

    A snapshot shares the sections that were not read again, and a patched section keeps
    its unchanged entries (`Library._patch`): those are passed over by identity, so one
    change costs a walk of references, not a rebuild; a section read again whole (another
    tool's write) is compared by value."""

    def __init__(self) -> None:
        self._metadata: Mapping[str, Metadata] | None = None  #: the section last followed
        self._settings: dict[str, str] | None = None  #: (provenances are settings)
        self.titles: dict[str, str] = {}  #: as `title_overrides` of the last snapshot
        self.years: dict[str, int] = {}  #: as `year_overrides`
        self.venues: dict[str, str] = {}  #: as `venue_overrides`

    def follow(self, snapshot: Snapshot) -> OverrideChanges:
        """Catch up with ``snapshot``: the papers whose overrides changed (all of them, the
        first time)."""
        from .library.model import MetadataSection

        changes = OverrideChanges({}, {}, {})
        metadata = snapshot.metadata
        if metadata is not self._metadata:
            old = self._metadata
            patch = snapshot.metadata_patch
            if old is None and isinstance(metadata, MetadataSection):  # (the first time)
                titles, years = metadata.titles_and_years()  # (no `Metadata` built)
                self.titles, self.years = titles, dict(years)
                changes.titles.update(titles)
                changes.years.update(years)
                changed: Iterable[str] = ()
            elif old is not None and patch is not None and patch[0] is old:
                changed = patch[1]  # (the papers patched in: the rest is old's)
            elif isinstance(old, MetadataSection) and isinstance(metadata, MetadataSection):
                changed = metadata.differs_from(old)  # (read whole: another tool's write)
            else:
                old = old or {}
                changed = [
                    pid for pid, meta in metadata.items() if (was := old.get(pid)) is not meta
                    and was != meta
                ] + list(old.keys() - metadata.keys())  # fmt: skip
            self._metadata = metadata
            for pid in changed:
                meta = metadata.get(pid)
                _note(self.titles, changes.titles, pid, None if meta is None else _title(meta))
                _note(self.years, changes.years, pid, None if meta is None else _year(meta))
        settings = snapshot.settings
        # (the settings are read again with each write: mostly the same, compared in C)
        if settings is not self._settings and settings != self._settings:
            old_settings = self._settings or {}
            start = len(PROVENANCE_PREFIX)
            for key, raw in settings.items():
                if (was_raw := old_settings.get(key)) is raw or was_raw == raw:
                    continue
                if key.startswith(PROVENANCE_PREFIX):
                    _note(self.venues, changes.venues, key[start:], _venue(raw))
            for key in old_settings.keys() - settings.keys():
                if key.startswith(PROVENANCE_PREFIX):
                    _note(self.venues, changes.venues, key[start:], None)
        self._settings = settings
        return changes


def _note(
    current: dict[str, Any], changes: dict[str, Any], paper_id: str, value: Any | None
) -> None:
    """``paper_id``'s value is now ``value`` (None: none): kept in ``current``, and in
    ``changes`` if it is another than before."""
    if current.get(paper_id) == value:
        return
    if value is None:
        del current[paper_id]
    else:
        current[paper_id] = value
    changes[paper_id] = value


def venue_overrides(snapshot: Snapshot) -> dict[str, str]:
    """`VenueOverrides` once (a command that asks once)."""
    return VenueOverrides()(snapshot)
