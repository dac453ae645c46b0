"""A paper as cited (``Record``): its effective metadata (``metadata.effective``) with the
library's facts. Apart from ``cite`` (which re-exports it), so that the reader's first
abstract — whose view is made from a Record — does not import the citation formats (csv,
json, the link rules: ~3 ms on the way to the first frame).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .corpus import Paper
from .library import Snapshot
from .metadata import Provenance, effective

PROCEEDINGS = {
    "neurips": "Advances in Neural Information Processing Systems (NeurIPS)",
    "icml": "Proceedings of the International Conference on Machine Learning (ICML)",
    "iclr": "International Conference on Learning Representations (ICLR)",
    "aistats": "Proceedings of the International Conference on Artificial Intelligence "
    "and Statistics (AISTATS)",
    "colt": "Proceedings of the Conference on Learning Theory (COLT)",
    "uai": "Proceedings of the Conference on Uncertainty in Artificial Intelligence (UAI)",
    "acl": "Proceedings of the Annual Meeting of the Association for Computational "
    "Linguistics (ACL)",
    "emnlp": "Proceedings of the Conference on Empirical Methods in Natural Language "
    "Processing (EMNLP)",
    "cvpr": "Proceedings of the IEEE/CVF Conference on Computer Vision and Pattern "
    "Recognition (CVPR)",
    "iccv": "Proceedings of the IEEE/CVF International Conference on Computer Vision (ICCV)",
    "aaai": "Proceedings of the AAAI Conference on Artificial Intelligence (AAAI)",
}


@dataclass(frozen=True, slots=True)
class Record:
    """A paper as cited: the dumps' facts with the library's overrides applied."""

    id: str
    title: str
    title_derived: bool
    venue: str | None
    year: int | None
    authors: tuple[str, ...] = ()
    url: str | None = None
    doi: str | None = None
    abstract: str = ""
    tags: tuple[str, ...] = ()
    bookmarked: bool = False
    read: bool = False
    note: str | None = None
    sources: tuple[dict[str, Any], ...] = field(default_factory=tuple)
    eprint: str | None = None
    primary_class: str | None = None
    origin: str = "derived"  #: see ``metadata.EffectiveMetadata.origin``
    provenance: Provenance | None = None

    @property
    def booktitle(self) -> str | None:
        """The proceedings' name: "NeurIPS", "NeurIPS 2025 poster" → "Advances in Neural
        Information Processing Systems (NeurIPS)"; other venues as they are."""
        if not self.venue:
            return None
        first = self.venue.split()[0].lower() if self.venue.split() else ""
        return PROCEEDINGS.get(self.venue.lower()) or PROCEEDINGS.get(first) or self.venue


def record(paper: Paper, snapshot: Snapshot | None = None) -> Record:
    """The paper as cited, by the one effective-metadata rule (``metadata.effective``)."""
    snap = snapshot or Snapshot()
    eff = effective(paper, snap)
    return Record(
        id=paper.id,
        title=eff.title,
        title_derived=eff.title_derived,
        venue=eff.venue,
        year=eff.year,
        authors=eff.authors,
        url=eff.url,
        doi=eff.doi,
        abstract=paper.abstract,
        tags=tuple(snap.tags.get(paper.id, ())),
        bookmarked=paper.id in snap.bookmarks,
        read=paper.id in snap.read,
        note=snap.notes.get(paper.id),
        sources=tuple({"file": s.file, "index": s.index} for s in paper.sources),
        eprint=eff.eprint,
        primary_class=eff.primary_class,
        origin=eff.origin,
        provenance=eff.provenance,
    )
