"""Small HTTP clients for ``match``: the OpenReview API v2 and the arXiv API. Nothing else in
the program touches the network.

- OpenReview: ``GET {base}/notes?content.venueid=VENUE&limit=1000&offset=N``, paged until a
  short page (or ``count``) says done; public reads need no key. The whole download is cached
  as one OpenReview ``.json`` file (``{"notes": [...], "count": N}`` — a file the ``.json``
  reader loads) and reused, offline, until ``--refresh``.
- arXiv: ``GET {base}?search_query=abs:"PHRASE"&max_results=5``, Atom XML parsed with the
  standard library, at most one request per ``ABSTRACT_READER_ARXIV_INTERVAL`` seconds
  (default 3, as arXiv asks).

Both: a 429 waits for its ``Retry-After`` (capped) and tries again; timeouts, connection
errors and 5xx are retried a few times with backoff, then a ``NetworkError`` of one line.
Base URLs from ``ABSTRACT_READER_OPENREVIEW_URL`` / ``ABSTRACT_READER_ARXIV_URL``.
"""

from __future__ import annotations

import datetime as dt
import email.utils
import http.client
import json
import os
import re
import time
import urllib.error
import urllib.parse
import urllib.request
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path

from . import __version__
from .sources import MetaRecord, clean_doi, clean_text, year_in

OPENREVIEW_DEFAULT = "https://api2.openreview.net"
ARXIV_DEFAULT = "https://export.arxiv.org/api/query"
PAGE = 1000  #: OpenReview's largest page
RETRIES = 3  #: after the first try, for timeouts / connection errors / 5xx
MAX_429 = 5  #: rate-limit waits before giving up
MAX_RETRY_AFTER_S = 120.0
USER_AGENT = f"abstract-reader/{__version__} (metadata matching; one request at a time)"

Progress = Callable[[str], None]


class NetworkError(Exception):
    """A download that failed, worded for one line."""


def _env_float(name: str, default: float) -> float:
    try:
        return max(0.0, float(os.environ.get(name, default)))
    except ValueError:
        return default


def timeout_s() -> float:
    return _env_float("ABSTRACT_READER_NET_TIMEOUT", 30.0)


def backoff_s() -> float:
    """The first retry's wait (doubling after): ``ABSTRACT_READER_NET_BACKOFF`` (tests)."""
    return _env_float("ABSTRACT_READER_NET_BACKOFF", 2.0)


def _retry_after(value: str | None) -> float:
    if not value:
        return backoff_s()
    value = value.strip()
    if value.isdigit():
        return min(float(value), MAX_RETRY_AFTER_S)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return backoff_s()
    return min(max(0.0, (when - dt.datetime.now(dt.UTC)).total_seconds()), MAX_RETRY_AFTER_S)


def _host(url: str) -> str:
    return urllib.parse.urlsplit(url).netloc or url


def get(url: str, progress: Progress | None = None, *, accept: str = "*/*") -> bytes:
    """GET ``url`` with the retry rules above; raises NetworkError."""
    request = urllib.request.Request(url, headers={"User-Agent": USER_AGENT, "Accept": accept})
    failures = 0
    limited = 0
    wait = backoff_s()
    while True:
        try:
            with urllib.request.urlopen(request, timeout=timeout_s()) as response:
                data: bytes = response.read()
                return data
        except urllib.error.HTTPError as exc:
            if exc.code == 429 and limited < MAX_429:
                limited += 1
                pause = _retry_after(exc.headers.get("Retry-After") if exc.headers else None)
                if progress:
                    progress(f"{_host(url)}: rate-limited (429); waiting {pause:g} s")
                time.sleep(pause)
                continue
            if exc.code == 429:
                raise NetworkError(
                    f"{_host(url)}: still rate-limited (HTTP 429) after {limited} waits"
                ) from None
            if exc.code < 500:
                raise NetworkError(f"{url}: HTTP {exc.code} {exc.reason}") from None
            problem = f"HTTP {exc.code} {exc.reason}"
        except (OSError, http.client.HTTPException) as exc:  # URLError, timeouts, resets
            reason = getattr(exc, "reason", exc)
            if isinstance(reason, TimeoutError) or "timed out" in str(reason):
                problem = f"no answer within {timeout_s():g} s"
            else:
                problem = f"cannot connect ({reason})"
        failures += 1
        if failures > RETRIES:
            raise NetworkError(f"{_host(url)}: {problem}, {failures} tries; is the network up?")
        if progress:
            progress(f"{_host(url)}: {problem}; retrying in {wait:g} s")
        time.sleep(wait)
        wait *= 2


# ---------------------------------------------------------------------------------------
# OpenReview
# ---------------------------------------------------------------------------------------


def openreview_base() -> str:
    return os.environ.get("ABSTRACT_READER_OPENREVIEW_URL", OPENREVIEW_DEFAULT).rstrip("/")


def openreview_cache(cache_dir: Path, venue_id: str) -> Path:
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", venue_id).strip("._") or "venue"
    return cache_dir / "openreview" / f"{safe}.json"


def openreview_notes(
    venue_id: str,
    cache_dir: Path,
    progress: Progress | None = None,
    *,
    refresh: bool = False,
) -> tuple[Path, bool]:
    """The venue's notes as a cached ``.json`` file: (path, True if it was downloaded now).
    The cache is written only once every page has arrived."""
    cache = openreview_cache(cache_dir, venue_id)
    if cache.is_file() and not refresh:
        return cache, False
    base = openreview_base()
    notes: list[object] = []
    offset = 0
    while True:
        query = urllib.parse.urlencode(
            {"content.venueid": venue_id, "limit": PAGE, "offset": offset}
        )
        url = f"{base}/notes?{query}"
        raw = get(url, progress, accept="application/json")
        try:
            data = json.loads(raw)
        except (ValueError, UnicodeDecodeError):
            raise NetworkError(f"{_host(url)}: the answer is not JSON (offset {offset})") from None
        page = data.get("notes") if isinstance(data, dict) else None
        if not isinstance(page, list):
            raise NetworkError(f"{_host(url)}: the answer has no 'notes' list (offset {offset})")
        notes.extend(page)
        count = data.get("count") if isinstance(data.get("count"), int) else None
        if progress:
            progress(f"OpenReview {venue_id}: {len(notes)}/{count if count else '?'} notes")
        if not page or len(page) < PAGE or (count is not None and len(notes) >= count):
            break
        offset += len(page)
    if not notes:
        raise NetworkError(
            f"OpenReview has no notes for venue id {venue_id!r} "
            "(venue ids look like NeurIPS.cc/2025/Conference)"
        )
    body = {
        "notes": notes,
        "count": len(notes),
        "venueid": venue_id,
        "downloaded": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "source": base,
    }
    try:
        cache.parent.mkdir(parents=True, exist_ok=True)
        tmp = cache.with_name(f".{cache.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(body, ensure_ascii=False), encoding="utf-8")
        os.replace(tmp, cache)
    except OSError as exc:
        raise NetworkError(f"{cache}: cannot write the download ({exc.strerror})") from None
    return cache, True


# ---------------------------------------------------------------------------------------
# arXiv
# ---------------------------------------------------------------------------------------

_ATOM = "{http://www.w3.org/2005/Atom}"
_ARXIV = "{http://arxiv.org/schemas/atom}"
_ID_RE = re.compile(r"arxiv\.org/abs/(?P<id>.+?)(?:v\d+)?$")


def arxiv_base() -> str:
    return os.environ.get("ABSTRACT_READER_ARXIV_URL", ARXIV_DEFAULT)


def arxiv_interval() -> float:
    return _env_float("ABSTRACT_READER_ARXIV_INTERVAL", 3.0)


def parse_atom(data: bytes, where: str = "arXiv") -> list[MetaRecord]:
    """arXiv API results (Atom) → records. Raises NetworkError for a malformed answer."""
    try:
        root = ET.fromstring(data)
    except ET.ParseError as exc:
        raise NetworkError(f"{where}: the answer is not valid XML ({exc})") from None
    if root.tag != f"{_ATOM}feed":
        raise NetworkError(f"{where}: the answer is not an Atom feed")
    records: list[MetaRecord] = []
    for n, entry in enumerate(root.findall(f"{_ATOM}entry"), start=1):
        found = _ID_RE.search(entry.findtext(f"{_ATOM}id", "") or "")
        title = clean_text(entry.findtext(f"{_ATOM}title"))
        if not found or not title:
            continue  # arXiv's "Error" entries have neither
        arxiv_id = found.group("id")
        primary = entry.find(f"{_ARXIV}primary_category")
        authors = tuple(
            name
            for a in entry.findall(f"{_ATOM}author")
            if (name := clean_text(a.findtext(f"{_ATOM}name")))
        )
        records.append(
            MetaRecord(
                source="arxiv",
                record_id=arxiv_id,
                file=where,
                index=n,
                title=title,
                authors=authors,
                year=year_in(entry.findtext(f"{_ATOM}published")),
                venue=clean_text(entry.findtext(f"{_ARXIV}journal_ref")),
                url=f"https://arxiv.org/abs/{arxiv_id}",
                doi=clean_doi(entry.findtext(f"{_ARXIV}doi")),
                abstract=clean_text(entry.findtext(f"{_ATOM}summary")),
                eprint=arxiv_id,
                primary_class=clean_text(primary.get("term")) if primary is not None else None,
            )
        )
    return records


class ArxivClient:
    """Queries arXiv no more often than the interval allows."""

    def __init__(self, progress: Progress | None = None) -> None:
        self.progress = progress
        self.interval = arxiv_interval()
        self.base = arxiv_base()
        self._last: float | None = None

    def search_phrase(self, phrase: str, max_results: int = 5) -> list[MetaRecord]:
        if self._last is not None:
            wait = self._last + self.interval - time.monotonic()
            if wait > 0:
                time.sleep(wait)
        query = urllib.parse.urlencode(
            {"search_query": f'abs:"{phrase}"', "start": 0, "max_results": max_results}
        )
        url = f"{self.base}?{query}"
        try:
            data = get(url, self.progress, accept="application/atom+xml")
        finally:
            self._last = time.monotonic()
        return parse_atom(data, f"arXiv ({_host(url)})")


_PHRASE_WORD = re.compile(r"^[A-Za-z]{2,}$")


def distinctive_phrase(text: str, words: int = 8) -> str | None:
    """A run of plain words from the abstract, away from its opening (shared openings are
    common): the window of ``words`` alphabetic words, inside one clause, with the longest
    words. None when the abstract has no such run."""
    clauses = re.split(r"[.,;:()\[\]!?\"'“”‘’$*]|\s-\s|--", text)
    best: tuple[int, str] | None = None
    skip = len(text) // 5  # not in the first fifth
    position = 0
    for clause in clauses:
        start = position
        position += len(clause) + 1
        if start < skip:
            continue
        tokens = clause.split()
        for i in range(len(tokens) - words + 1):
            window = tokens[i : i + words]
            if all(_PHRASE_WORD.match(t) for t in window):
                weight = sum(len(t) for t in window)
                if best is None or weight > best[0]:
                    best = (weight, " ".join(window))
    return best[1] if best else None
