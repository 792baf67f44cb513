"""Duplicates inside a selection (``select --dedup exact|near``).

A selection is walked from the best score down; a line is kept unless it duplicates a line already
kept, so of every group of duplicates the best-scored stays, and ``--top N`` / ``--fraction F`` still
give N distinct lines (the walk goes on past the N-th line as far as it must).

* ``exact``: the same text after normalising: Unicode NFKC, case folded, punctuation removed, runs of
  whitespace made one space ("The dose: 5 mg." and "the dose 5 mg" are one line).
* ``near``: also lines whose character 5-gram sets have a Jaccard similarity of at least
  ``threshold`` (default 0.8), found with MinHash and LSH from ``datasketch`` (extra ``dedup``):
  128 permutations, seeded; a candidate pair from the LSH index counts only when its estimated
  Jaccard reaches the threshold.

For a sentence pair (``--pool-target``), both sides together are the text.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata

from ._internal.errors import DomainsiftError

MODES = ("exact", "near")
NEAR_THRESHOLD = 0.8
MAX_THRESHOLD = 0.95
SHINGLE = 5  # characters per shingle (sentences are short: word n-grams are too few to compare)
NUM_PERM = 128
_SPACE = re.compile(r"\s+")


def normalise(text: str) -> str:
    """The text that ``exact`` compares: NFKC, case folded, no punctuation, single spaces."""
    t = unicodedata.normalize("NFKC", text).casefold()
    t = "".join(" " if unicodedata.category(c).startswith("P") else c for c in t)
    return _SPACE.sub(" ", t).strip()


def shingles(norm: str, k: int = SHINGLE) -> set[bytes]:
    """Character ``k``-grams of a normalised text (the text itself when shorter)."""
    if len(norm) <= k:
        return {norm.encode("utf-8")}
    return {norm[i:i + k].encode("utf-8") for i in range(len(norm) - k + 1)}


class Deduplicator:
    """Remembers the lines kept so far; :meth:`is_duplicate` says whether a new line duplicates one
    of them, and keeps it when it does not."""

    def __init__(self, mode: str = "exact", threshold: float = NEAR_THRESHOLD, seed: int = 1):
        if mode not in MODES:
            raise DomainsiftError(f"unknown --dedup '{mode}' (one of: {', '.join(MODES)})")
        if not 0 < threshold <= MAX_THRESHOLD:
            raise DomainsiftError(f"--dedup-threshold must be in (0, {MAX_THRESHOLD}], got {threshold} (above it, "
                                  "MinHash LSH with 128 permutations has too few bands; use --dedup exact)")
        self.mode, self.threshold, self.seed = mode, threshold, seed
        self._exact: set[bytes] = set()
        self._lsh = self._hashes = None
        if mode == "near":
            from ._internal.optional import require
            datasketch = require("datasketch", "dedup")
            self._MinHash = datasketch.MinHash
            self._lsh = datasketch.MinHashLSH(threshold=threshold, num_perm=NUM_PERM)
            self._hashes: dict = {}

    def is_duplicate(self, text: str) -> bool:
        norm = normalise(text)
        key = hashlib.sha1(norm.encode("utf-8")).digest()
        if key in self._exact:
            return True
        if self.mode == "near":
            m = self._MinHash(num_perm=NUM_PERM, seed=self.seed)
            m.update_batch(sorted(shingles(norm)))
            if any(m.jaccard(self._hashes[h]) >= self.threshold for h in self._lsh.query(m)):
                return True
            name = len(self._hashes)
            self._lsh.insert(name, m)
            self._hashes[name] = m
        self._exact.add(key)
        return False

    def describe(self) -> dict:
        return {"mode": self.mode, **({"threshold": self.threshold} if self.mode == "near" else {})}
