"""Write realistic synthetic dumps of N abstracts.

    python benchmarks/make_corpus.py 100000 [--out benchmarks/data/100000] [--per-file 5000]

Like the real dumps: a `<Venue> <Year> Papers` header, one abstract per paragraph, 120–260
words drawn Zipf-like from a vocabulary that grows with N (Heaps' law), the seeds' own words
mixed in, LaTeX spans ($\\hat \\mu$, $O(\\sqrt{d/n})$ …), **emphasis**, "We propose X (ABC)"
sentences, and about 1% of abstracts repeated in a later file (duplicates across dumps).
Deterministic for a given N.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
SEEDS = ROOT / "seeds"
VENUES = ["NeurIPS", "ICML", "ICLR", "AISTATS", "COLT", "UAI"]
MATH = [
    r"$\hat \mu$",
    r"$O(\sqrt{d/n})$",
    r"$\ell_2$",
    r"$\mathcal{D}^{\otimes n}$",
    r"$\eta^{-1}$",
    r"$\tilde{O}(\sqrt{T})$",
    r"$k$",
    r"$\Omega(\eta + \sqrt{\eta d/n})$",
    r"$x_{ij}$",
    r"$O(L^6)$",
]
SYLLABLES = [
    "ra",
    "to",
    "mi",
    "ne",
    "ko",
    "sa",
    "lu",
    "ve",
    "di",
    "qu",
    "zen",
    "tor",
    "ba",
    "li",
    "ex",
    "on",
    "gra",
    "phi",
    "de",
    "ca",
    "nu",
    "mo",
    "sti",
    "ri",
    "po",
]


def seed_words() -> list[str]:
    words: list[str] = []
    for path in sorted(SEEDS.glob("*.txt")):
        text = re.sub(r"\$[^$]*\$", " ", path.read_text(encoding="utf-8"))
        words.extend(re.findall(r"[A-Za-z][a-z]+", text))
    seen: dict[str, int] = {}
    for w in words:
        seen[w.lower()] = seen.get(w.lower(), 0) + 1
    return [w for w, _ in sorted(seen.items(), key=lambda kv: -kv[1])]


def vocabulary(n_abstracts: int, rng: np.random.Generator) -> list[str]:
    base = seed_words()
    target = int(40 * n_abstracts**0.62) + len(base)  # Heaps' law, roughly
    extra = target - len(base)
    made: set[str] = set(base)
    out = list(base)
    while len(out) < len(base) + max(0, extra):
        k = int(rng.integers(2, 5))
        word = "".join(SYLLABLES[int(i)] for i in rng.integers(0, len(SYLLABLES), k))
        if word not in made:
            made.add(word)
            out.append(word)
    return out


def make(n: int, out: Path, per_file: int) -> Path:
    rng = np.random.default_rng(n)
    vocab = np.array(vocabulary(n, rng), dtype=object)
    ranks = np.arange(1, len(vocab) + 1, dtype=np.float64)
    probs = 1.0 / ranks**1.05
    probs /= probs.sum()
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("*.txt"):
        old.unlink()
    made: list[str] = []
    n_files = max(1, (n + per_file - 1) // per_file)
    written = 0
    for f in range(n_files):
        count = min(per_file, n - written)
        lengths = rng.integers(120, 260, count)
        words = vocab[rng.choice(len(vocab), size=int(lengths.sum()), p=probs)]
        abstracts: list[str] = []
        pos = 0
        for i, length in enumerate(lengths):
            chunk = list(words[pos : pos + length])
            pos += int(length)
            if made and rng.random() < 0.01:
                abstracts.append(made[int(rng.integers(0, len(made)))])  # a duplicate
                continue
            for _ in range(int(rng.integers(0, 4))):
                chunk.insert(
                    int(rng.integers(0, len(chunk))), MATH[int(rng.integers(0, len(MATH)))]
                )
            if rng.random() < 0.3:
                spot = int(rng.integers(0, len(chunk)))
                chunk[spot] = f"**{chunk[spot]}**"
            sentences = []
            for s in range(0, len(chunk), 18):
                sentence = " ".join(chunk[s : s + 18])
                sentences.append(sentence[:1].upper() + sentence[1:] + ".")
            if rng.random() < 0.4:
                name = "".join(w[:1].upper() for w in chunk[:3]) + str(i % 97)
                long_name = " ".join(w.capitalize() for w in chunk[3:6])
                sentences.insert(1, f"We propose {long_name} ({name}), a method for {chunk[7]}.")
            text = " ".join(sentences)
            abstracts.append(text)
            if len(made) < 5000:
                made.append(text)
        venue = VENUES[f % len(VENUES)]
        year = 2020 + f % 7
        body = f"{venue} {year} Papers\n\n" + "\n\n".join(abstracts) + "\n"
        (out / f"dump_{f:04d}.txt").write_text(body, encoding="utf-8")
        written += count
    return out


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("n", type=int, help="number of abstracts")
    parser.add_argument("--out", type=Path, help="folder (default benchmarks/data/N)")
    parser.add_argument("--per-file", type=int, default=5000, help="abstracts per dump file")
    args = parser.parse_args()
    out = args.out or (ROOT / "benchmarks" / "data" / str(args.n))
    make(args.n, out, args.per_file)
    size = sum(p.stat().st_size for p in out.glob("*.txt"))
    print(
        f"wrote {args.n:,} abstracts in {len(list(out.glob('*.txt')))} files, "
        f"{size / 1e6:.1f} MB, to {out}"
    )


if __name__ == "__main__":
    main()
