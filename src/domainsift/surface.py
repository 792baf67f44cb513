"""Does the in-domain set look like the pool on the surface? A warning before a long run, not a refusal.

Every method that learns tells the in-domain set from the pool, and learns whatever tells them apart
most easily. When nearly every line of one carries a mark that nearly no line of the other does (a line
number, a tab-separated field, markup, a URL), that mark is the easiest thing to learn, and the
classifier learns the format instead of the domain: over the 10M-line pool of ``bench/live/scale.py``
(each line prefixed with its line number, the in-domain set not), ``finetune --cascade`` selected 0.73
KDE4 lines at 1%; with the same in-domain set given the pool's prefix, 0.98
(``bench/results/scale_cascade_zen4.md``). Giving the other set the mark is no cure, so the warning says to
strip it: on the shared pool numbered, with the in-domain set numbered too, cosine's precision fell from 0.57
to 0.25 (KDE4) and the share estimate to 0.045 (truth 0.143); finetune's was 0.82 against 0.92 on the plain
pool (``python bench/live/surface.py --finetune --cases "line number, both"``); and ``cosine --cascade`` over
the 1M pool with its in-domain set numbered selected 0.16 KDE4 lines (0.90 with it plain). An in-domain set
of whole paragraphs against a pool of sentences (or the reverse) is the same mistake in length.

The check is a handful of patterns and the median length, compared between the in-domain set and a
seeded sample of the pool (:data:`SAMPLE` lines, drawn in the counting pass). A pattern is reported when it
is on at least :data:`MOST` of one set's lines and at most :data:`FEW` of the other's; the length when one
median is :data:`LENGTH_RATIO` times the other. A leading number alone is not a format: 35% of JRC-Acquis's
lines start with one ("2. For the years ..."); a number followed by a colon or a bar, or one in brackets,
is on at most 0.4% of any domain's. Over the shared data's seven domains, English and German, each test
file against 1,000-line samples of the benchmarks' pools, nothing warns (160 checks); a line number, a
tab-separated pair, markup or an ID column (single words) put on the shared pool's lines is caught for every
target, an in-domain set of 10-line paragraphs for 6 of 7 (OpenSubtitles' short lines join to 6 times the pool's median)
(``python bench/live/surface.py``, ``bench/results/surface.md``).
"""

from __future__ import annotations

import logging
import os
import re
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from .io.corpus import LINE_ID

log = logging.getLogger(__name__)

SAMPLE = 1000        # pool lines the check reads (a seeded sample, its own stream of the counting pass)
MOST, FEW = 0.9, 0.1  # a pattern on at least MOST of one set's lines and at most FEW of the other's
LENGTH_RATIO = 8.0    # one set's median length (characters) this many times the other's
MIN_LINES = 20        # fewer lines than this in either set: nothing is said
IN_DOMAIN_LINES = 10_000  # an in-domain set larger than this is read at an even stride (every k-th line)

#: a TSV's ID or label column read as the text (its first, the default --column), or a JSONL's --field
SINGLE_WORD = "a single word (an ID or a label?)"
#: (what the warning calls it, the pattern searched in each line)
PATTERNS = (
    ("a leading line number or ID ('123: ', '123 | ', '[123]')", LINE_ID),  # what --strip-id removes
    ("a tab (a second field)", re.compile(r"\t")),
    ("markup (tags or entities)",
     re.compile(r"</?[A-Za-z][\w:.-]*(?:\s[^<>]*)?/?>|&(?:#\d+|#x[0-9A-Fa-f]+|[A-Za-z]+);")),
    ("a URL", re.compile(r"https?://|www\.")),
    (SINGLE_WORD, re.compile(r"^\S+$")),
)


@dataclass(frozen=True)
class Difference:
    """One way the two sets differ: ``what`` (a pattern's name, or ``length``), its value in the in-domain
    set and in the pool (the share of lines with the pattern, or the median length in characters)."""

    what: str
    in_domain: float
    pool: float

    @property
    def is_length(self) -> bool:
        return self.what == "length"


def _share(pattern, texts: Sequence[str]) -> float:
    return sum(1 for t in texts if pattern.search(t)) / len(texts)


def compare(in_domain: Sequence[str], pool: Sequence[str]) -> list[Difference]:
    """The ways ``in_domain`` and ``pool`` (a sample of it) differ on the surface, by the rules in the module
    docstring; none when either holds fewer than :data:`MIN_LINES` lines. A large in-domain set is read at
    an even stride (at most :data:`IN_DOMAIN_LINES` lines)."""
    a, b = list(in_domain), list(pool)
    if len(a) < MIN_LINES or len(b) < MIN_LINES:
        return []
    a = a[::-(-len(a) // IN_DOMAIN_LINES)]  # at most IN_DOMAIN_LINES, spread over the whole set
    out = []
    for name, pattern in PATTERNS:
        x, y = _share(pattern, a), _share(pattern, b)
        if (x >= MOST and y <= FEW) or (y >= MOST and x <= FEW):
            out.append(Difference(name, x, y))
    la, lb = float(np.median([len(t) for t in a])), float(np.median([len(t) for t in b]))
    single = any(d.what == SINGLE_WORD for d in out)  # words against sentences: said once, as single words
    if not single and max(la, lb) >= LENGTH_RATIO * max(min(la, lb), 1.0):
        out.append(Difference("length", la, lb))
    return out


def describe(d: Difference, n_in: int, n_pool: int, name: str = "the in-domain set") -> str:
    """One warning line for a difference; ``name``: what the in-domain set is called (its file)."""
    if d.is_length:
        ratio = max(d.in_domain, d.pool) / max(min(d.in_domain, d.pool), 1.0)
        return (f"{name if d.in_domain > d.pool else 'the pool'}: lines {ratio:.0f} times as long as the "
                f"{'pool' if d.in_domain > d.pool else 'in-domain set'}'s (median {d.in_domain:,.0f} characters "
                f"in the in-domain set, {d.pool:,.0f} in the pool): a classifier may learn the length instead of "
                f"the domain; give both sets the same unit (sentences, or paragraphs). See docs/surface.md")
    where = "the pool" if d.pool > d.in_domain else name
    if d.what == SINGLE_WORD:
        return (f"{where}: {max(d.pool, d.in_domain):.0%} of its lines are a single word, against "
                f"{min(d.pool, d.in_domain):.0%} of the other set's: is its text in another column or field "
                f"(--column N for a TSV, counted from 0; --field NAME for JSONL)? See docs/surface.md")
    how = {PATTERNS[0][0]: " (--strip-id reads every input without it)",
           PATTERNS[1][0]: " (or read the text's field: --format tsv --column N)"}.get(d.what, "")
    return (f"{d.what} is on {d.pool:.0%} of the pool's lines (a sample of {n_pool:,}) and on {d.in_domain:.0%} "
            f"of the {n_in:,} lines of {name}: a classifier may learn that format instead of the domain; strip "
            f"it from {where}{how}; adding it to the other set instead cost every method precision in "
            f"docs/surface.md")


def set_name(files: Sequence[str]) -> str:
    """What a warning calls the in-domain set: by its files' names when it has any."""
    names = ", ".join(os.path.basename(str(f)) for f in files)
    return f"the in-domain set ({names})" if names else "the in-domain set"


def corpus_name(corpus) -> str:
    """:func:`set_name` of the files a corpus's records come from (a slice of a larger corpus keeps every
    file in its ``files``)."""
    return set_name(list(dict.fromkeys(f for f, _ in corpus.ids)) or corpus.files)


def check_surface(in_domain: Sequence[str], pool_sample: Sequence[str] | None,
                  name: str = "the in-domain set", say: bool = True) -> list[str]:
    """Warnings (one line each, logged unless ``say`` is false) for every way the in-domain set (called
    ``name``) and the pool's sample differ on the surface (:func:`compare`); none without a sample."""
    if pool_sample is None:
        return []
    a, b = list(in_domain), list(pool_sample)
    out = [describe(d, len(a), len(b), name) for d in compare(a, b)]
    for msg in out if say else ():
        log.warning(msg)
    return out


__all__ = ["Difference", "compare", "describe", "check_surface", "set_name", "PATTERNS", "SAMPLE", "MOST", "FEW",
           "LENGTH_RATIO"]
