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

``select --exclude FILE`` (:class:`Exclusion`) leaves out of the selection every pool line that repeats a
line of FILE, compared the same way (exact unless ``--dedup near``): a test set kept out of the data
selected for training. The walk goes past them as it goes past duplicates. A sentence pair is left out
when either side repeats a line of FILE: give a bitext test set's two files, since a reference seen in
training leaks as its source does (FILE's lines are compared with both sides; lines of two languages
rarely match by chance, and a pair whose side equals a test line is a repeat of it whichever side it is).
"""

from __future__ import annotations

import hashlib
import os
import re
import unicodedata

from ._internal.errors import DomainsiftError

MODES = ("exact", "near")
NEAR_THRESHOLD = 0.8
MAX_THRESHOLD = 0.95
SHINGLE = 5  # characters per shingle (sentences are short: word n-grams are too few to compare)
NUM_PERM = 128
_SPACE = re.compile(r"\s+")


# Cyrillic and Greek letters drawn like Latin ones (after case folding): in a word that mixes them with Latin
# letters they are read as the Latin letter, so a look-alike cannot carry a test line past --exclude
_LOOKALIKE = str.maketrans({"а": "a", "в": "b", "е": "e", "ё": "e", "і": "i", "ї": "i", "ј": "j",
                            "к": "k", "м": "m", "н": "h", "о": "o", "р": "p", "с": "c", "т": "t", "у": "y",
                            "х": "x", "ѕ": "s", "ԁ": "d", "һ": "h", "ӏ": "l", "α": "a", "β": "b", "ε": "e",
                            "ι": "i", "κ": "k", "ν": "v", "ο": "o", "ρ": "p", "τ": "t", "υ": "u", "χ": "x"})
_WORD = re.compile(r"\w+")


def _unmix(word: str) -> str:
    """A word of Latin letters with Cyrillic or Greek look-alikes among them, in Latin letters alone; any
    other word as it is (a Russian or Greek word keeps its own letters)."""
    if word.isascii():
        return word
    latin = any("a" <= c <= "z" for c in word)
    return word.translate(_LOOKALIKE) if latin else word


def normalise(text: str) -> str:
    """The text that ``exact`` compares, the one "same line" of the product (``--dedup``, ``--exclude`` and
    the overlap warning): NFKC, case folded, without invisible format characters (zero-width space,
    soft hyphen, joiners), Cyrillic and Greek look-alikes inside a Latin word read as Latin, no
    punctuation, single spaces."""
    t = unicodedata.normalize("NFKC", text).casefold()
    t = "".join(" " if (cat := unicodedata.category(c)).startswith("P") else "" if cat == "Cf" else c for c in t)
    if not t.isascii():
        t = _WORD.sub(lambda m: _unmix(m.group(0)), t)
    return _SPACE.sub(" ", t).strip()


def shingles(norm: str, k: int = SHINGLE) -> set[bytes]:
    """Character ``k``-grams of a normalised text (the text itself when shorter)."""
    if len(norm) <= k:
        return {norm.encode("utf-8")}
    return {norm[i:i + k].encode("utf-8") for i in range(len(norm) - k + 1)}


def _key(text: str) -> tuple[str, bytes]:
    """A line's normalised text and the hash that ``exact`` compares."""
    norm = normalise(text)
    return norm, hashlib.sha1(norm.encode("utf-8")).digest()


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

    def _sketch(self, norm: str):
        m = self._MinHash(num_perm=NUM_PERM, seed=self.seed)
        m.update_batch(sorted(shingles(norm)))
        return m

    def _keep(self, key: bytes, m) -> None:
        if m is not None:
            name = len(self._hashes)
            self._lsh.insert(name, m)
            self._hashes[name] = m
        self._exact.add(key)

    def _ready(self, norm: str, key: bytes) -> tuple:
        return key, (self._sketch(norm) if self.mode == "near" else None)

    def prepare(self, text: str) -> tuple:
        """What :meth:`seen` compares of ``text``: its hash and, for ``near``, its MinHash. The same for
        every Deduplicator of this mode and threshold, so a caller that walks the same lines again (a
        mixture assigned anew) prepares each once."""
        return self._ready(*_key(text))

    def seen(self, prepared: tuple, keep: bool = False) -> bool:
        """:meth:`matches` for a line :meth:`prepare` made ready."""
        key, m = prepared
        if key in self._exact:
            return True
        if m is not None and any(m.jaccard(self._hashes[h]) >= self.threshold for h in self._lsh.query(m)):
            return True
        if keep:
            self._keep(key, m)
        return False

    def matches(self, text: str, keep: bool = False) -> bool:
        """Whether ``text`` duplicates a line kept so far; with ``keep``, a line that does not is kept."""
        norm, key = _key(text)
        if key in self._exact:  # an exact repeat needs no sketch
            return True
        return self.seen(self._ready(norm, key), keep)

    def is_duplicate(self, text: str) -> bool:
        """Whether ``text`` duplicates a line kept so far; it is kept when it does not."""
        return self.matches(text, keep=True)

    def describe(self) -> dict:
        return {"mode": self.mode, **({"threshold": self.threshold} if self.mode == "near" else {})}


def deduplicator(mode: str | None, threshold: float | None = None) -> Deduplicator | None:
    """The :class:`Deduplicator` of ``--dedup MODE [--dedup-threshold J]`` (checked before any work), or
    None without a mode."""
    if mode is None:
        if threshold is not None:
            raise DomainsiftError("--dedup-threshold needs --dedup near")
        return None
    if threshold is not None and mode != "near":
        raise DomainsiftError("--dedup-threshold needs --dedup near")
    return Deduplicator(mode, NEAR_THRESHOLD if threshold is None else threshold)


def exclusion(exclude, mode: str | None = None, threshold: float | None = None) -> "Exclusion | None":
    """The :class:`Exclusion` of ``--exclude`` (read before any work), compared as ``--dedup`` compares
    (exact without it), or None."""
    if exclude is None:
        return None
    return Exclusion.of(exclude, mode or "exact", NEAR_THRESHOLD if threshold is None else threshold)


def recorded_exclusion(recorded) -> "Exclusion | None":
    """The exclusion selections were made with (``recorded``: ``(run directory, its selection's
    ``exclude`` record or None)`` pairs, :func:`domainsift.rundir.recorded_excludes`), read again from its files, so that a re-selection (``select --from-scores``,
    ``combine``) keeps a test set out as the first selection did; None when none was made with one.
    Several runs' exclusions are joined (every file of each; near when any compared near). A file that
    is gone, or whose lines are no longer the ones recorded, is a one-line error: give ``--exclude``
    again, or ``--no-exclude`` to drop it."""
    files, mode, threshold, seen = [], "exact", None, []
    for d, rec in recorded:
        if not isinstance(rec, dict):
            continue
        how = f"{d} was selected with --exclude"
        if not rec.get("files"):
            raise DomainsiftError(f"{how} lines given in Python (no file to read them again); give exclude= "
                                  "again, or keep_exclude=False to drop it")
        for f in rec["files"]:
            if "://" not in str(f) and not os.path.isfile(f):
                raise DomainsiftError(f"{how} {f}, which is gone; give --exclude again, or --no-exclude to "
                                      "drop the exclusion")
        again = Exclusion.of(_read(rec["files"]), rec.get("mode", "exact"), rec.get("threshold", NEAR_THRESHOLD))
        if rec.get("sha256") and again.digest != rec["sha256"]:
            raise DomainsiftError(f"{how} {' '.join(rec['files'])}, whose lines have changed since; give "
                                  "--exclude again, or --no-exclude to drop the exclusion")
        files += [f for f in rec["files"] if f not in files]
        if rec.get("mode") == "near":  # the loosest comparison of them: nothing any of them left out comes back
            t = rec.get("threshold", NEAR_THRESHOLD)
            mode, threshold = "near", t if threshold is None else min(threshold, t)
        seen.append(str(d))
    if not seen:
        return None
    out = Exclusion.of(_read(files), mode, NEAR_THRESHOLD if threshold is None else threshold)
    out.kept_from = seen
    return out


def _read(files):
    from .io.corpus import read_corpus
    return read_corpus(list(files))


class Exclusion:
    """The lines a selection leaves out (``select --exclude``): :meth:`matches` says whether a pool line
    repeats one of them, as :class:`Deduplicator` compares lines (``mode``, ``threshold``). Lines that
    normalise to nothing (punctuation alone) are not kept: they would match every such pool line."""

    def __init__(self, texts, mode: str = "exact", threshold: float = NEAR_THRESHOLD, files=()):
        index = self._index = Deduplicator(mode, threshold)
        for t in texts:  # every line kept, a near duplicate of another too: each is compared on its own
            norm, key = _key(t)
            if norm and key not in index._exact:
                index._keep(*index._ready(norm, key))
        if not index._exact:
            raise DomainsiftError(f"--exclude {' '.join(map(str, files)) or '(lines)'}: no line to exclude")
        self.files = [f if "://" in str(f) else os.path.abspath(f) for f in map(str, files)]
        self.n_lines = len(index._exact)
        self.kept_from = None  # the selections it was read again from (recorded_exclusion)
        self.digest = hashlib.sha256(b"".join(sorted(index._exact))).hexdigest()[:16]

    @classmethod
    def of(cls, exclude, mode: str = "exact", threshold: float = NEAR_THRESHOLD) -> "Exclusion":
        """From a :class:`~domainsift.io.corpus.Corpus`, a file path, or a list of lines (an Exclusion: itself)."""
        if isinstance(exclude, Exclusion):
            return exclude
        if isinstance(exclude, (str, os.PathLike)):
            from .io.corpus import read_corpus
            exclude = read_corpus([exclude])
        if hasattr(exclude, "texts") and hasattr(exclude, "files"):
            return cls(exclude.texts, mode, threshold, exclude.files)
        return cls(list(exclude), mode, threshold)

    def matches(self, text: str, target: str | None = None) -> bool:
        """Whether a pool line (``text``), or a sentence pair (``text`` and its ``target``) by either side,
        repeats an excluded line."""
        return self._index.matches(text) or (target is not None and self._index.matches(target))

    def describe(self) -> dict:
        """What the selection left out, for its signature: the comparison, how many distinct lines and
        their digest (SHA-256 of their normalised forms' hashes), and the files they came from."""
        return {**self._index.describe(), "lines": self.n_lines, "sha256": self.digest,
                **({"files": self.files} if self.files else {}),
                **({"kept_from": self.kept_from} if self.kept_from else {})}
