"""Folding for search: accents and Greek letters to ASCII-ish forms, case folding."""

from __future__ import annotations

import functools
import unicodedata

_GREEK = {
    "α": "alpha", "β": "beta", "γ": "gamma", "δ": "delta", "ε": "epsilon", "ϵ": "epsilon",
    "ζ": "zeta", "η": "eta", "θ": "theta", "ϑ": "theta", "ι": "iota", "κ": "kappa",
    "λ": "lambda", "μ": "mu", "ν": "nu", "ξ": "xi", "π": "pi", "ρ": "rho", "ϱ": "rho",
    "σ": "sigma", "ς": "sigma", "τ": "tau", "υ": "upsilon", "φ": "phi", "ϕ": "phi",
    "χ": "chi", "ψ": "psi", "ω": "omega",
}  # fmt: skip
GREEK_NAMES = frozenset(_GREEK.values()) | {"varepsilon", "varphi", "vartheta", "varrho"}
_GREEK_UPPER = {
    "Γ": "Gamma", "Δ": "Delta", "Θ": "Theta", "Λ": "Lambda", "Ξ": "Xi", "Π": "Pi",
    "Σ": "Sigma", "Υ": "Upsilon", "Φ": "Phi", "Ψ": "Psi", "Ω": "Omega",
}  # fmt: skip
GREEK_NAMES = GREEK_NAMES | {name.lower() for name in _GREEK_UPPER.values()}
_GREEK_ALL = {**_GREEK, **_GREEK_UPPER}
#: LaTeX commands that display their own name as text: searchable like words.
TEXT_COMMANDS = frozenset(
    [
        "log",
        "ln",
        "exp",
        "sin",
        "cos",
        "tan",
        "sinh",
        "cosh",
        "tanh",
        "arg",
        "det",
        "dim",
        "deg",
        "gcd",
        "hom",
        "ker",
        "lim",
        "liminf",
        "limsup",
        "max",
        "min",
        "sup",
        "inf",
        "Pr",
    ]
)


@functools.lru_cache(maxsize=200_000)
def fold_accents(word: str) -> str:
    """Fold accents and Greek letters to ASCII-ish search forms, keeping case.

    ``Köhler`` → ``Kohler``; ``μ`` → ``mu``; ``ℓ`` → ``l``.
    """
    if word.isascii():
        return word
    if len(word) == 1 and word in _GREEK_ALL:
        return _GREEK_ALL[word]
    decomposed = unicodedata.normalize("NFKD", word)
    chars: list[str] = []
    for ch in decomposed:
        if unicodedata.combining(ch):
            continue
        chars.append(_GREEK_ALL.get(ch, ch))
    return "".join(chars)


def fold(word: str) -> str:
    """The case-insensitive search form of a word."""
    return fold_accents(word).lower()
