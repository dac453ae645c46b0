"""Web links handed to the terminal (OSC 8) and the browser: http(s) only, printable ASCII."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from abstract_reader.text.links import LinkRefused, doi_link, find_links, refusal, web_link


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://example.org/paper", "https://example.org/paper"),
        ("http://example.org/a?b=c&d=e#f", "http://example.org/a?b=c&d=e#f"),
        ("HTTPS://Example.org/x", "HTTPS://Example.org/x"),
        ("https://openreview.net/forum?id=AbC-12_x", "https://openreview.net/forum?id=AbC-12_x"),
        ("https://example.org/café", "https://example.org/caf%C3%A9"),
        ("https://example.org/a%20b", "https://example.org/a%20b"),
        ('https://example.org/"<x>"', "https://example.org/%22%3Cx%3E%22"),
    ],
)
def test_good_links_are_kept_or_percent_encoded(url: str, expected: str) -> None:
    assert web_link(url) == expected


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("javascript:alert(1)", "only http and https links are opened, not javascript:"),
        ("file:///etc/passwd", "not file:"),
        ("data:text/html,x", "not data:"),
        ("example.org", "no scheme"),
        ("https://", "no host"),
        ("https://example.org/\x1b]52;c;AAAA\x07", "control character (U+001B)"),
        ("https://example.org/\x07", "control character (U+0007)"),
        ("https://example.org/\x9c", "control character (U+009C)"),
        ("https://example.org/a b", "space"),
        ("https://example.org/\n", "line break"),
        ("https://example.org/\u202e", "invisible"),
        ("https://example.org/\u241b]52;c;QUJD\u2407", "control character (shown as \u241b)"),
        (
            "https://example.org/\ufffd",
            "it contains \ufffd (U+FFFD), the stand-in for a byte that was not UTF-8 or a control",
        ),
        ("https://example.org/" + "a" * 3000, "longer than"),
        ("https://[::1/x", "malformed"),
    ],
)
def test_hostile_or_unusable_links_are_refused_with_a_reason(url: str, why: str) -> None:
    with pytest.raises(LinkRefused, match=None) as caught:
        web_link(url)
    assert why in str(caught.value)
    assert refusal(url) == str(caught.value)
    assert "\n" not in str(caught.value)


@given(st.text())
def test_a_link_is_printable_ascii_whatever_the_input(tail: str) -> None:
    for url in ("https://example.org/" + tail, tail):
        try:
            safe = web_link(url)
        except LinkRefused:
            continue
        assert all(0x21 <= ord(ch) <= 0x7E for ch in safe)


def test_doi_links() -> None:
    assert doi_link("10.1234/abc") == "https://doi.org/10.1234/abc"
    assert doi_link("10.1002/(SICI)1097-4636<1::AID>3.0.CO;2-X") == (
        "https://doi.org/10.1002/(SICI)1097-4636<1::AID>3.0.CO;2-X"
    )
    assert web_link(doi_link("10.1002/x<y>")) == "https://doi.org/10.1002/x%3Cy%3E"
    assert doi_link("10.1/a b#c") == "https://doi.org/10.1/a%20b%23c"


def test_links_in_running_text() -> None:
    text = (
        "Code at https://github.com/x/y. Data (see https://example.org/d_(v2)) and "
        "https://example.org/q?a=1, also http://x.org/\x1bbad and javascript:alert(1)."
    )
    found = find_links(text)
    assert [text[f.start : f.end] for f in found] == [
        "https://github.com/x/y",
        "https://example.org/d_(v2)",
        "https://example.org/q?a=1",
    ]
    assert [f.url for f in found] == [text[f.start : f.end] for f in found]
