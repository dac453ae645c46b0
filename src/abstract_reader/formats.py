"""The names of the output formats (citations, exports, digests), apart from the code that
writes them: the CLI's parser, the config file's check and the library's import list them
without importing `cite` or `digest` (and through them the library, records and the text
renderers) — every command paid ~10–15 ms for it."""

from __future__ import annotations

#: citation formats (`cite`, ``c`` in the reader, ``citation_format`` in the config)
FORMATS = ("bibtex", "text", "markdown", "csl-json")
#: export formats (`export`, ``E`` in the reader)
EXPORT_FORMATS = ("bibtex", "markdown", "csl-json", "csv", "jsonl", "text")
FORMAT_NAMES = {
    "bibtex": "BibTeX",
    "text": "plain text",
    "markdown": "Markdown",
    "csl-json": "CSL-JSON",
    "csv": "CSV",
    "jsonl": "JSON Lines",
}
#: digest formats (`digest`)
DIGEST_FORMATS = ("markdown", "text", "html")
