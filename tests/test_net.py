"""The OpenReview and arXiv clients against a local HTTP server (127.0.0.1 only), through
the `match` command: paging, 429 + Retry-After, 5xx, timeouts, malformed answers, connection
refused, the offline cache — and nothing written to the library on failure."""

from __future__ import annotations

import json
import os
import socket
import sqlite3
import threading
import urllib.parse
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from xml.sax.saxutils import escape

import pytest

from abstract_reader.corpus import Corpus

from .conftest import cli, write_dump

Reply = tuple[int, dict[str, str], bytes]
VENUE = "NeurIPS.cc/2025/Conference"


class Server:
    def __init__(self) -> None:
        self.requests: list[str] = []
        self.handler: Callable[[str, dict[str, list[str]]], Reply] = lambda p, q: (404, {}, b"")
        self.release = threading.Event()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                outer.requests.append(self.path)
                parts = urllib.parse.urlsplit(self.path)
                status, headers, body = outer.handler(
                    parts.path, urllib.parse.parse_qs(parts.query)
                )
                if status == 0:  # hang: a timeout
                    outer.release.wait(10)
                    return
                self.send_response(status)
                for key, value in headers.items():
                    self.send_header(key, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.release.set()
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def server() -> Iterator[Server]:
    s = Server()
    yield s
    s.close()


def _refused_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"  # closed again: nothing listens there


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        {
            "ABSTRACT_READER_CACHE": str(tmp_path / "cache"),
            "ABSTRACT_READER_NET_BACKOFF": "0.01",
            "ABSTRACT_READER_NET_TIMEOUT": "5",
            "ABSTRACT_READER_ARXIV_INTERVAL": "0",
        }
    )
    env.update(extra)
    return env


def _note(n: int, abstract: str, title: str | None = None) -> dict[str, object]:
    return {
        "id": f"note{n:04d}",
        "forum": f"note{n:04d}",
        "pdate": 1758240000000,
        "content": {
            "title": {"value": title or f"Filler Paper {n}"},
            "authors": {"value": ["Grace Hopper", "Alan Turing"]},
            "abstract": {"value": abstract},
            "venue": {"value": "NeurIPS 2025 poster"},
            "venueid": {"value": VENUE},
        },
    }


@pytest.fixture
def small_dump(seeds: Corpus, tmp_path: Path) -> tuple[Path, list[str]]:
    papers = seeds.papers[:2]
    path = write_dump(
        tmp_path / "two.txt", *(p.abstract for p in papers), header="NeurIPS 2025 Papers"
    )
    return path, [p.abstract for p in papers]


def _notes_pages(abstract: str, total: int = 1003) -> Callable[[str, dict[str, list[str]]], Reply]:
    notes = [
        _note(n, f"Filler abstract number {n} about nothing in particular.")
        for n in range(total - 1)
    ]
    notes.append(_note(9999, abstract, "The Real Title"))

    def handle(path: str, query: dict[str, list[str]]) -> Reply:
        assert path == "/notes" and query["content.venueid"] == [VENUE]
        offset, limit = int(query["offset"][0]), int(query["limit"][0])
        body = {"notes": notes[offset : offset + limit], "count": len(notes)}
        return 200, {"Content-Type": "application/json"}, json.dumps(body).encode()

    return handle


def _rows(db: Path) -> list[tuple[str, str]]:
    if not db.exists():
        return []
    with sqlite3.connect(db) as conn:
        return list(conn.execute("SELECT paper_id, title FROM metadata"))


def test_openreview_paging_cache_and_offline_rerun(
    server: Server, small_dump: tuple[Path, list[str]], tmp_path: Path
) -> None:
    dump, abstracts = small_dump
    server.handler = _notes_pages(abstracts[0])
    db = tmp_path / "lib.db"
    env = _env(tmp_path, ABSTRACT_READER_OPENREVIEW_URL=server.url)
    run = cli("match", "-d", str(dump), "--openreview", VENUE, db=db, env=env)
    assert run.returncode == 0, run.stderr
    offsets = [
        urllib.parse.parse_qs(urllib.parse.urlsplit(r).query)["offset"][0] for r in server.requests
    ]
    assert offsets == ["0", "1000"]
    assert "OpenReview NeurIPS.cc/2025/Conference: 1003/1003 notes" in run.stderr
    assert "downloaded; cached in" in run.stderr
    assert [t for _, t in _rows(db)] == ["The Real Title"]
    # offline: the API is gone, the cache answers, and says so
    env = _env(tmp_path, ABSTRACT_READER_OPENREVIEW_URL=_refused_url())
    again = cli("match", "-d", str(dump), "--openreview", VENUE, db=db, env=env)
    assert again.returncode == 0, again.stderr
    cache = tmp_path / "cache" / "net" / "openreview" / "NeurIPS.cc_2025_Conference.json"
    assert f"using the cached download {cache}" in again.stderr
    assert "(0 written, 1 already there)" in again.stdout


def test_429_honours_retry_after(
    server: Server, small_dump: tuple[Path, list[str]], tmp_path: Path
) -> None:
    dump, abstracts = small_dump
    pages = _notes_pages(abstracts[1], total=3)
    calls = {"n": 0}

    def handle(path: str, query: dict[str, list[str]]) -> Reply:
        calls["n"] += 1
        if calls["n"] == 1:
            return 429, {"Retry-After": "1"}, b"slow down"
        return pages(path, query)

    server.handler = handle
    db = tmp_path / "lib.db"
    run = cli(
        "match",
        "-d",
        str(dump),
        "--openreview",
        VENUE,
        db=db,
        env=_env(tmp_path, ABSTRACT_READER_OPENREVIEW_URL=server.url),
    )
    assert run.returncode == 0, run.stderr
    assert "rate-limited (429); waiting 1 s" in run.stderr
    assert len(server.requests) == 2 and len(_rows(db)) == 1


def test_5xx_retried_then_succeeds(
    server: Server, small_dump: tuple[Path, list[str]], tmp_path: Path
) -> None:
    dump, abstracts = small_dump
    pages = _notes_pages(abstracts[1], total=3)

    def handle(path: str, query: dict[str, list[str]]) -> Reply:
        if len(server.requests) <= 2:
            return 503, {}, b"busy"
        return pages(path, query)

    server.handler = handle
    run = cli(
        "match",
        "-d",
        str(dump),
        "--openreview",
        VENUE,
        db=tmp_path / "l.db",
        env=_env(tmp_path, ABSTRACT_READER_OPENREVIEW_URL=server.url),
    )
    assert run.returncode == 0, run.stderr
    assert run.stderr.count("HTTP 503 Service Unavailable; retrying") == 2


@pytest.mark.parametrize(
    ("kind", "expected"),
    [
        ("500", "HTTP 500 Internal Server Error, 4 tries; is the network up?"),
        ("timeout", "no answer within 0.3 s, 4 tries"),
        ("json", "the answer is not JSON (offset 0)"),
        ("shape", "the answer has no 'notes' list"),
        ("refused", "cannot connect"),
        ("empty", "OpenReview has no notes for venue id"),
    ],
)
def test_openreview_failures_write_nothing(
    server: Server, small_dump: tuple[Path, list[str]], tmp_path: Path, kind: str, expected: str
) -> None:
    dump, _ = small_dump
    replies: dict[str, Reply] = {
        "500": (500, {}, b"oops"),
        "timeout": (0, {}, b""),
        "json": (200, {}, b"{not json"),
        "shape": (200, {}, b'{"error": "nope"}'),
        "empty": (200, {}, b'{"notes": [], "count": 0}'),
    }
    server.handler = lambda p, q: replies[kind]
    url = _refused_url() if kind == "refused" else server.url
    env = _env(tmp_path, ABSTRACT_READER_OPENREVIEW_URL=url, ABSTRACT_READER_NET_TIMEOUT="0.3")
    db = tmp_path / "lib.db"
    run = cli("match", "-d", str(dump), "--openreview", VENUE, db=db, env=env)
    assert run.returncode == 1
    last = run.stderr.strip().splitlines()[-1]
    assert last.startswith("abstract-reader: ") and expected in last and "nothing written" in last
    assert "Traceback" not in run.stderr
    assert _rows(db) == []
    assert not (tmp_path / "cache" / "net" / "openreview").exists() or not any(
        (tmp_path / "cache" / "net" / "openreview").iterdir()
    )


def _atom(entries: list[dict[str, str]]) -> bytes:
    body = "".join(
        f"""<entry><id>http://arxiv.org/abs/{e["id"]}v2</id>
<published>2025-06-01T00:00:00Z</published><title>{escape(e["title"])}</title>
<summary>{escape(e["abstract"])}</summary>
<author><name>Ada Lovelace</name></author><author><name>Jürgen Müller</name></author>
<arxiv:doi>10.48550/arXiv.{e["id"]}</arxiv:doi>
<link href="http://arxiv.org/abs/{e["id"]}v2" rel="alternate" type="text/html"/>
<arxiv:primary_category term="cs.LG" scheme="http://arxiv.org/schemas/atom"/>
<category term="cs.LG" scheme="http://arxiv.org/schemas/atom"/></entry>"""
        for e in entries
    )
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n<feed xmlns="http://www.w3.org/2005/Atom" '
        'xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/" '
        'xmlns:arxiv="http://arxiv.org/schemas/atom"><title>ArXiv Query</title>'
        f"<opensearch:totalResults>{len(entries)}</opensearch:totalResults>{body}</feed>"
    ).encode()


def test_arxiv_phrase_search(
    server: Server, small_dump: tuple[Path, list[str]], tmp_path: Path
) -> None:
    dump, abstracts = small_dump
    wrapped = "\n  ".join(abstracts[1][i : i + 70] for i in range(0, len(abstracts[1]), 70))

    def handle(path: str, query: dict[str, list[str]]) -> Reply:
        search = query["search_query"][0]
        assert search.startswith('abs:"') and search.endswith('"')
        phrase = search[5:-1]
        hit = phrase in " ".join(abstracts[1].split())
        entries = [
            {"id": "2506.01234", "title": "Robust Satisficing Ensembles", "abstract": wrapped}
        ]
        return 200, {"Content-Type": "application/atom+xml"}, _atom(entries if hit else [])

    server.handler = handle
    db = tmp_path / "lib.db"
    env = _env(tmp_path, ABSTRACT_READER_ARXIV_URL=server.url + "/api/query")
    run = cli("match", "-d", str(dump), "--arxiv", db=db, env=env)
    assert run.returncode == 0, run.stderr
    assert len(server.requests) == 2  # one query per unmatched paper
    assert "arXiv: 2/2 searched, 1 matched" in run.stderr
    assert [t for _, t in _rows(db)] == ["Robust Satisficing Ensembles"]
    pid = _rows(db)[0][0]
    shown = cli("show", pid, "-d", str(dump), db=db).stdout
    assert "arXiv:     2506.01234 [cs.LG]" in shown
    assert "authors:   Ada Lovelace, Jürgen Müller" in shown
    assert "doi:       10.48550/arXiv.2506.01234" in shown


def test_arxiv_malformed_answer_writes_nothing(
    server: Server, small_dump: tuple[Path, list[str]], tmp_path: Path
) -> None:
    dump, _ = small_dump
    server.handler = lambda p, q: (200, {}, b"<feed><entry>")
    db = tmp_path / "lib.db"
    run = cli(
        "match",
        "-d",
        str(dump),
        "--arxiv",
        db=db,
        env=_env(tmp_path, ABSTRACT_READER_ARXIV_URL=server.url),
    )
    assert run.returncode == 1 and "not valid XML" in run.stderr and "nothing written" in run.stderr
    assert _rows(db) == []


def test_no_other_command_touches_the_network(
    small_dump: tuple[Path, list[str]], tmp_path: Path
) -> None:
    """The reader's commands import no HTTP client (only `match` does)."""
    import subprocess
    import sys

    code = (
        "import sys; from abstract_reader.cli import main; "
        f"main(['list', '-d', {str(small_dump[0])!r}, '--db', {str(tmp_path / 'l.db')!r}]); "
        "bad = [m for m in ('abstract_reader.net', 'urllib.request', 'http.client') if m in sys.modules]; "
        "print('IMPORTED', bad, file=sys.stderr)"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert "IMPORTED []" in run.stderr, run.stderr
