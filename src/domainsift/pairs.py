"""Pair checks: a pair of a bitext pool that is not a translation never wins a selection (issue 89).

Selection scores one side of a pair; a web crawl's pairs may not be translations at all. Khayrallah & Koehn
(2018) name the kinds of crawl noise that hurt a translation model most: untranslated copies (the worst:
the model learns to copy), a side in the wrong language, misaligned pairs, and fragments. Each check here
looks at one pair, on its own:

- ``copy``: the target repeats the source (the same text once case, spaces and punctuation are set aside,
  or nearly the same: a character similarity of at least :data:`COPY_SIMILARITY` for pairs of at least
  :data:`COPY_MIN_CHARS` characters);
- ``language``: a side whose language is not its side's (each side's language is the majority of the
  candidates', identified by py3langid, extra ``langid``), told surely (a probability of at least
  :data:`LANGUAGE_PROBABILITY`) on a line of at least :data:`LANGUAGE_MIN_WORDS` words: the other side's
  language (py3langid choosing between the pair's two languages: the crawl's usual mistake), or any third;
- ``ratio``: one side more than ``max_ratio`` times as long as the pair's languages make it (a pair whose
  sides say different amounts), for pairs whose longer side has at least :data:`RATIO_MIN_CHARS`; or a
  fragment (:func:`is_fragment`, and :meth:`PairChecks.cut_open`: one side ends in a word that its language's
  candidates almost never end on, and is shorter than the other side makes it). How long one language's side
  is for the other's is learnt from the first candidates (the median ratio of their characters,
  :attr:`PairChecks.length_bias`): a Chinese side is a third of its English side's characters, a German one
  a tenth longer;
- ``adequacy``: the sides do not say the same thing. Both are encoded by the multilingual encoder (USE-m,
  extra ``multilingual``: 16 languages in one space) and the pair's cosine is scored as a margin: minus the
  mean cosine of each side's :data:`MARGIN_K` nearest neighbours among the other side's candidates
  (Artetxe & Schwenk, 2019: a misaligned pair of two in-domain sentences has a high cosine too, but its
  neighbours' are as high); a margin under ``min_margin`` fails, and so does one under :data:`NUMBERS_MARGIN`
  when the sides' numbers differ (:func:`numbers_differ`: a translation keeps its digits, as OpusFilter's
  numerals filter and Bicleaner's number features read it). Each side is read to its first
  :data:`ADEQUACY_PIECES` pieces (the cost of encoding grows with the pieces; a pair's start says whether its
  sides match). A side in a language the encoder does not know is not checked (the record says so);
  ``adequacy_encoder`` names another encoder (any of ``--model``'s);
- ``repeat`` (0.42.0): a line has one translation. When the candidates checked together pair one side (the
  product's one "same line", :func:`domainsift.dedup.normalise`) with several partners that do not say the same
  thing (their cosine in the adequacy encoder under :data:`REPEAT_ALIKE`), only the pair of the best adequacy
  margin keeps it: the others are a page aligned twice, or boilerplate that pairs with whatever stands
  beside it (the max-score rule of bitext mining, Artetxe & Schwenk, 2019). Partners that say the same thing
  (two translations of a repeated line) all stay. It reads the adequacy check's vectors, so it runs where
  adequacy can.

:class:`PairChecks` applies them in that order and says which one a pair fails first; the selection walks
past a failing pair as it walks past an ``--exclude``d one, so ``--top N`` still gives N pairs, and
``selection.json`` says how many pairs each check removed, with examples. The thresholds are those measured
on the shared pool (``bench/results/pair_checks.md``): at them, the checks remove few clean pairs.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from difflib import SequenceMatcher
from functools import lru_cache
from typing import Sequence

from ._internal.errors import DomainsiftError

CHECKS = ("copy", "language", "ratio", "adequacy", "repeat")
# every check is on by default since 0.39.0 (adequacy was asked for by name before): measured where it runs (a
# selection's first candidates of the noisy pool, bench/results/adequacy_margin.md), at MIN_MARGIN (-0.40 since
# 0.40.0, the highest of the sweep at which every check together removes at most 2% of the shared pool's curated
# pairs and 4% of any domain's) it catches 60-78% of the in-domain misaligned pairs the other checks let through
# and removes 0.83% of the curated pairs (whose lowest margins are OPUS's own misalignments), in 15-24 s a
# 6,250-pair window on one thread; a default window over ADEQUACY_WINDOW pairs stands the check down (its
# neighbour search grows with the square of the window), with a warning; named, it always runs
DEFAULT_CHECKS = CHECKS
ADEQUACY_WINDOW = 50000
COPY_SIMILARITY, COPY_MIN_CHARS = 0.9, 20
LANGUAGE_PROBABILITY, LANGUAGE_MIN_WORDS = 0.99, 3
MAX_RATIO, RATIO_MIN_CHARS = 3.0, 15
# the most one language's translation differs from another's in characters, learnt or not (Chinese has about a
# third of English's): a learnt ratio beyond it is held at it
LANGUAGE_RATIO = 4.0
# a fragment: a side of at most 5 words beside one of at least 3 times its words and twice its characters (the
# characters' ratio, as the ratio check's, over the one the pair's languages make: 0.40.0); or (0.40.0) a side cut
# before its end: the other side ends its sentence, it does not, and it has at most 1 / FRAGMENT_CUT of the
# characters the other side's make (a crawl's fragment is the start of a sentence: bench/results/pair_checks.md)
FRAGMENT_WORDS, FRAGMENT_FACTOR, FRAGMENT_CHARS, FRAGMENT_CUT = 5, 3, 2.0, 2.0
# a side cut open (0.41.0): it ends on a word (its last word, the line ending in a letter or digit) that the first
# candidates' sides of its language end on in under OPEN_END_RATE of the word's uses, among words used at least
# OPEN_END_MIN times (a function word: "der", "und", "the"; learnt, so for any spaced language), the other side
# does not, and it has at most 1 / OPEN_END_SHORT of the characters the other side's make. Both sides cut alike
# are an aligned pair, and a short side of a word that ends lines is a heading: neither fails
OPEN_END_RATE, OPEN_END_MIN, OPEN_END_SHORT = 0.02, 20, 1.5
SENTENCE_ENDS = (".", "!", "?", "\u3002", "\uff01", "\uff1f", "\u061f", "\u0964")  # and 。！？ ؟ ।
# languages whose lines are not split into words by spaces: the fragment's word rule does not apply
UNSPACED = frozenset({"zh", "ja", "th", "lo", "km", "my", "bo"})
# adequacy: the margin (Artetxe & Schwenk, 2019, their "distance" form) of the two sides' cosine in the
# multilingual encoder's space over the mean of their K nearest neighbours' among the same candidates; a pair
# below MIN_MARGIN is not a translation (-0.45 until 0.39.0). The difference beat the ratio form on the shared pool: at 1% of the
# clean pairs removed it catches 89-90% of misaligned in-domain pairs on EMEA and KDE4 (the ratio: 62-82%)
ADEQUACY_ENCODER, MARGIN_K, MIN_MARGIN = "multilingual", 4, -0.40
# a pair whose sides' numbers differ (numbers_differ) fails adequacy under this higher margin (0.41.0): two
# weak signals together; chosen as adequacy_margin.py chooses MIN_MARGIN (every check within the clean bounds)
NUMBERS_MARGIN = -0.35
# the pieces of each side the adequacy encoder reads (0.41.0): encoding is linear in pieces, and a selection's
# candidates of long lines (90 pieces a line on the 1M-pair bench) paid most of the checks' time there
ADEQUACY_PIECES = 64
# repeat (0.42.0): a side the candidates pair with several partners keeps only its best-margin pair, among the
# partners whose cosine with that pair's partner is under REPEAT_ALIKE (they say something else). 0.3: the highest
# of 0.3-0.7 at which a one-off sweep (docs/experiments.md) kept every check together within adequacy_margin.py's
# bounds on the curated pool (2% of it, 4% of a domain's); the benchmark measured 1.93% and EMEA 4.04%
# (bench/results/pair_checks.md): the 2% holds, EMEA's 4% by two pairs not
REPEAT_ALIKE = 0.3
EXAMPLES = 3  # pairs a check's record shows
# when the default checks would pass over more than this share of the first candidates, the other side is not
# a translation at all (ids, labels, another field): the checks stand down for the run, with a warning; checks
# named with --pair-checks never do
STAND_DOWN, STAND_DOWN_MIN = 0.8, 5



def _bare(text: str) -> str:
    """The product's one "same line" (:func:`domainsift.dedup.normalise`: case, punctuation, invisible
    characters set aside) without its spaces: a copy that changed a space or a full stop is still a copy."""
    from .dedup import normalise
    return normalise(text).replace(" ", "")


def is_copy(src: str, tgt: str) -> bool:
    a, b = _bare(src), _bare(tgt)
    if not a or not b:
        return False
    if a == b:
        return True
    if min(len(src), len(tgt)) < COPY_MIN_CHARS:
        return False
    # difflib's two cheap upper bounds of its ratio first (ratio <= quick_ratio <= real_quick_ratio): the same
    # answer, and a translation seldom needs the quadratic ratio (10,000 candidates: 27 s -> 2 s on one core)
    match = SequenceMatcher(None, a, b, autojunk=False)
    return (match.real_quick_ratio() >= COPY_SIMILARITY and match.quick_ratio() >= COPY_SIMILARITY
            and match.ratio() >= COPY_SIMILARITY)


def is_fragment(src: str, tgt: str, bias: float = 0.0, words: bool = True) -> bool:
    """One side a fragment of the other (``bias``: the log of the target's characters over the source's that
    the pair's languages make, :attr:`PairChecks.length_bias`; ``words``: whether both languages split words
    by spaces). Either side cut before its end: the other side ends a sentence (:data:`SENTENCE_ENDS`), it does
    not, the longer side has at least :data:`RATIO_MIN_CHARS` characters and the cut one at most
    1 / :data:`FRAGMENT_CUT` of what the other's make. Or (``words``) at most :data:`FRAGMENT_WORDS` words beside
    at least :data:`FRAGMENT_FACTOR` times as many, and at least :data:`FRAGMENT_CHARS` times as many characters
    as the languages make (a German compound is one word for an English three: "Starting dose" /
    "Anfangsdosis" is no fragment)."""
    a, b = src.strip(), tgt.strip()
    if not a or not b:
        return False
    ends_a, ends_b = a.endswith(SENTENCE_ENDS), b.endswith(SENTENCE_ENDS)
    if ends_a != ends_b and max(len(a), len(b)) >= RATIO_MIN_CHARS:
        short = _shortfall(a, b, bias) if ends_a else 1 / _shortfall(a, b, bias)
        if short >= FRAGMENT_CUT:  # how many times fewer characters the unended side has than it should
            return True
    if not words:
        return False
    wa, wb = len(a.split()), len(b.split())
    lo, hi = min(wa, wb), max(wa, wb)
    return 0 < lo <= FRAGMENT_WORDS and hi >= FRAGMENT_FACTOR * lo and length_ratio(a, b, bias) >= FRAGMENT_CHARS


_NUMBER = re.compile(r"\d+")
_WORD = re.compile(r"\w+")


def numbers(text: str) -> frozenset:
    """The numbers a line writes in digits, each run of digits as its value, in any script's digits ("007" and
    "7" are one number; "1,000" and "1.000" both read as 1 and 0, so a thousands point agrees with a comma)."""
    return frozenset(int(x) if len(x) <= 100 else x.lstrip("0") for x in _NUMBER.findall(text))


def numbers_differ(src: str, tgt: str) -> bool:
    """Whether one side writes a number in digits that the other does not."""
    return numbers(src) != numbers(tgt)


def open_end_words(lines: Sequence[str]) -> frozenset:
    """The words ``lines`` seldom end on: used at least :data:`OPEN_END_MIN` times, and the last word of under
    :data:`OPEN_END_RATE` of them (of the lines that end in a letter or digit). Few lines: none."""
    uses, ends = Counter(), Counter()
    for line in lines:
        uses.update(_WORD.findall(line.lower()))
        last = _open_end(line)
        if last is not None:
            ends[last] += 1
    return frozenset(w for w, n in uses.items() if n >= OPEN_END_MIN and ends[w] < OPEN_END_RATE * n)


def repeated(pairs: Sequence[tuple[str, str]], margins, x, y) -> list[int]:
    """The pairs the ``repeat`` check fails: where several of ``pairs`` share a side (the same line once
    normalised) with different partners, every pair but the one of the highest margin whose partner's vector
    (``y`` for a shared source, ``x`` for a shared target: unit rows) has a cosine under :data:`REPEAT_ALIKE` with
    that pair's partner."""
    from .dedup import normalise
    same = [(normalise(a), normalise(b)) for a, b in pairs]  # each side as "the same line" compares it, once
    failed = set()
    for side, partner_vec in ((0, y), (1, x)):
        groups: dict[str, list[int]] = {}
        for k, pair in enumerate(same):
            groups.setdefault(pair[side], []).append(k)
        for members in groups.values():
            if len(members) < 2 or len({same[k][1 - side] for k in members}) < 2:
                continue
            best = max(members, key=lambda k: (margins[k], -k))
            for k in members:
                if k != best and float(partner_vec[k] @ partner_vec[best]) < REPEAT_ALIKE:
                    failed.add(k)
    return sorted(failed)


def _open_end(text: str) -> str | None:
    """The last word of a line that ends in a letter or digit (lower-cased), or None."""
    t = text.rstrip()
    if not t or not t[-1].isalnum():
        return None
    words = _WORD.findall(t[-40:].lower())
    return words[-1] if words else None


def _shortfall(src: str, tgt: str, bias: float) -> float:
    """The characters the target should have for its source's (``bias``) over those it has."""
    return len(src) * math.exp(bias) / max(1, len(tgt))


def length_ratio(src: str, tgt: str, bias: float = 0.0) -> float:
    """The longer side's characters over the shorter's, each as the pair's languages make them (``bias``: the
    log of the target's characters over the source's in a translation; 0: the same)."""
    r = _shortfall(src.strip(), tgt.strip(), bias)
    return max(r, 1 / r) if r > 0 else float("inf")


def length_bias(pairs: Sequence[tuple[str, str]]) -> float:
    """The log of the target's characters over the source's that ``pairs``' languages make: their median, over
    the pairs of two non-empty sides (0.0 with none)."""
    logs = sorted(math.log(len(b.strip()) / len(a.strip())) for a, b in pairs
                  if b is not None and a.strip() and b.strip())
    if not logs:
        return 0.0
    mid = len(logs) // 2
    return logs[mid] if len(logs) % 2 else (logs[mid - 1] + logs[mid]) / 2


def from_options(pair_checks: str | None = None, max_length_ratio: float | None = None,
                 min_margin: float | None = None, adequacy_model: str | None = None,
                 resample: bool = False) -> "PairChecks | None":
    """The :class:`PairChecks` a selection's options ask for (``--pair-checks`` and its thresholds; None: the
    defaults), or None: ``none``, or a draw (``resample``) that names no check (a draw walks past no pair)."""
    if resample and pair_checks is None:
        return None
    checks = parse(pair_checks)
    if not checks:
        return None
    return PairChecks(checks, MAX_RATIO if max_length_ratio is None else max_length_ratio,
                      MIN_MARGIN if min_margin is None else min_margin, adequacy_model or ADEQUACY_ENCODER,
                      asked=pair_checks is not None)


def parse(text: str | None) -> tuple[str, ...]:
    """``--pair-checks LIST`` (comma-separated names of :data:`CHECKS`, ``all`` or ``none``; None: the
    :data:`DEFAULT_CHECKS`)."""
    if text is None:
        return DEFAULT_CHECKS
    if text == "all":
        return CHECKS
    if text == "none":
        return ()
    names = tuple(n.strip() for n in str(text).split(",") if n.strip())
    bad = [n for n in names if n not in CHECKS]
    if bad or not names:
        raise DomainsiftError(f"--pair-checks takes all, none or a list of {', '.join(CHECKS)}; got {text!r}")
    return tuple(n for n in CHECKS if n in names)


class PairChecks:
    """The checks a selection of a bitext pool makes (``checks``: names of :data:`CHECKS`), with
    ``max_ratio``. :meth:`failing` names the first check each pair fails (None: it passes); the counts and
    examples of what was removed are kept for :meth:`describe`."""

    def __init__(self, checks: Sequence[str] = DEFAULT_CHECKS, max_ratio: float = MAX_RATIO, min_margin: float = MIN_MARGIN,
                 adequacy_encoder: str = ADEQUACY_ENCODER, asked: bool = True):
        if not (max_ratio >= 1 and max_ratio != float("inf")):
            raise DomainsiftError(f"--max-length-ratio must be a number at least 1, got {max_ratio}")
        if not (-2 <= min_margin <= 2):
            raise DomainsiftError(f"--min-margin must be a number from -2 to 2 (a cosine less its neighbours'), "
                                  f"got {min_margin}")
        self.checks, self.max_ratio = tuple(checks), float(max_ratio)
        self.min_margin, self.adequacy_encoder = float(min_margin), adequacy_encoder
        self._encoder = None
        self.asked = asked  # named by the user: never stands down
        self.stood_down: str | None = None
        self._first = True
        self.languages: tuple[str, str] | None = None  # each side's language, once told from the candidates
        self.length_bias: float | None = None  # log(target's characters / source's) a translation has, ditto
        self.learnt_bias: float | None = None  # the same as the first candidates have it (not held)
        self.open_ends: tuple[frozenset, frozenset] | None = None  # each side's words that seldom end a line
        self.removed = Counter()
        self.examples: dict[str, list] = {}
        self.unchecked: str | None = None  # why the language check could not run
        self.adequacy_unchecked: str | None = None  # why the adequacy check could not run

    def learn(self, pairs: Sequence[tuple[str, str]]) -> None:
        """What the checks learn once from the first candidates: each side's language
        (:meth:`learn_languages`) and how long a target is for its source (:func:`length_bias`)."""
        self.learn_languages(pairs)
        if self.length_bias is None and "ratio" in self.checks:
            self.learnt_bias = length_bias(pairs)  # as the pairs have it: beyond LANGUAGE_RATIO, no translation
            bound = math.log(LANGUAGE_RATIO)
            self.length_bias = min(bound, max(-bound, self.learnt_bias))
        if self.open_ends is None and "ratio" in self.checks:
            self.open_ends = (open_end_words([a for a, _ in pairs]),
                              open_end_words([b for _, b in pairs if b is not None]))

    def cut_open(self, src: str, tgt: str) -> bool:
        """One side cut open (:data:`OPEN_END_RATE`): it ends on one of the words its side's first candidates
        seldom end on (:func:`open_end_words`), the other side does not, and it has at most
        1 / :data:`OPEN_END_SHORT` of the characters the other side's make."""
        if not self.open_ends:
            return False
        a, b = src.strip(), tgt.strip()
        if not a or not b:
            return False
        cut_a, cut_b = _open_end(a) in self.open_ends[0], _open_end(b) in self.open_ends[1]
        if cut_a == cut_b:
            return False
        short = _shortfall(a, b, self.length_bias or 0.0)
        return (short if cut_b else 1 / short) >= OPEN_END_SHORT

    def learn_languages(self, pairs: Sequence[tuple[str, str]]) -> None:
        """Each side's language: the majority of ``pairs``' sides (the first candidates); the check is left
        out, and :meth:`describe` says why, without py3langid or without a clear majority."""
        if "language" not in self.checks or self.languages is not None or self.unchecked:
            return
        from .languages import identify
        src = identify([s for s, _ in pairs], limit=500)
        tgt = identify([t for _, t in pairs], limit=500)
        if src is None or tgt is None:
            self.unchecked = "py3langid is not installed (pip install 'domainsift[langid]')"
        elif src[1] < 0.5 or tgt[1] < 0.5:
            self.unchecked = (f"no side has a clear majority language ({src[0]} {src[1]:.0%}, {tgt[0]} "
                              f"{tgt[1]:.0%} of the first candidates)")
        else:
            self.languages = (src[0], tgt[0])

    def failing(self, pairs: Sequence[tuple[str, str]]) -> list[str | None]:
        """For each ``(scored side, other side)`` pair, the first check it fails, or None. Default checks that
        would fail more than :data:`STAND_DOWN` of the first candidates, or that find the first candidates'
        sides further apart in length than two languages' translations are (:data:`LANGUAGE_RATIO`, in the
        median), stand down (:attr:`stood_down`)."""
        import logging
        pairs = list(pairs)
        if self.stood_down:
            return [None] * len(pairs)
        first = self._first
        if first and not self.asked and len(pairs) >= STAND_DOWN_MIN:
            self.learn(pairs)
            if self.learnt_bias is not None and abs(self.learnt_bias) > math.log(LANGUAGE_RATIO):
                self._first = False
                self.stood_down = (f"the other side has {math.exp(self.learnt_bias):.2g} times the characters of the "
                                   f"scored side in the median of the first {len(pairs)} candidate pairs, beyond "
                                   f"any two languages' translations ({LANGUAGE_RATIO:g} times): it does not look "
                                   "like a translation; the checks stood down (name them with --pair-checks to "
                                   "insist)")
                logging.getLogger("domainsift").warning("pair checks: %s", self.stood_down)
                return [None] * len(pairs)
        out = self._failing(pairs)
        self._first = False
        failed = sum(x is not None for x in out)
        if first and not self.asked and len(pairs) >= STAND_DOWN_MIN and failed > STAND_DOWN * len(pairs):
            self.stood_down = (f"{failed} of the first {len(pairs)} candidate pairs failed a check "
                               f"({', '.join(sorted({x for x in out if x}))}): the other side does not look like a "
                               "translation; the checks stood down (name them with --pair-checks to insist)")
            logging.getLogger("domainsift").warning("pair checks: %s", self.stood_down)
            return [None] * len(pairs)
        return out

    def _failing(self, pairs: list) -> list[str | None]:
        self.learn(pairs)
        out: list[str | None] = [None] * len(pairs)
        bias = self.length_bias or 0.0
        words = not (self.languages and UNSPACED & set(self.languages))
        for k, (a, b) in enumerate(pairs):
            if b is None:
                continue
            if "copy" in self.checks and is_copy(a, b):
                out[k] = "copy"
            elif "ratio" in self.checks and (is_fragment(a, b, bias, words) or (
                    max(len(a.strip()), len(b.strip())) >= RATIO_MIN_CHARS
                    and length_ratio(a, b, bias) > self.max_ratio) or (words and self.cut_open(a, b))):
                out[k] = "ratio"
        if "language" in self.checks and self.languages is not None:
            todo = [k for k in range(len(pairs)) if out[k] is None and pairs[k][1] is not None]
            for k, wrong in zip(todo, self._wrong_language([pairs[k] for k in todo])):
                if wrong:
                    out[k] = "language"
        todo = [k for k in range(len(pairs)) if out[k] is None and pairs[k][1] is not None]
        if ("adequacy" in self.checks or "repeat" in self.checks) and not self.adequacy_unchecked and not self.asked \
                and len(todo) > ADEQUACY_WINDOW:
            self._unchecked(f"{len(todo):,} candidate pairs at once, over the {ADEQUACY_WINDOW:,} the default check "
                            "takes (its neighbour search grows with their square); name it (--pair-checks all) to "
                            "insist")
        encoded = ("adequacy" in self.checks or "repeat" in self.checks)
        if encoded and len(todo) > MARGIN_K and self._can_encode():  # a margin needs neighbours
            margins, x, y = self._scored([pairs[k] for k in todo])
            if "adequacy" in self.checks:
                higher = max(self.min_margin, NUMBERS_MARGIN)
                for k, m in zip(todo, margins):
                    if m < self.min_margin or (m < higher and numbers_differ(*pairs[k])):
                        out[k] = "adequacy"
            if "repeat" in self.checks:
                for j in repeated([pairs[k] for k in todo], margins, x, y):
                    if out[todo[j]] is None:
                        out[todo[j]] = "repeat"
        return out

    def _can_encode(self) -> bool:
        """Whether the adequacy check can run: its encoder installed, and each side's language one it knows
        (when the languages are known); otherwise the record says why."""
        if self.adequacy_unchecked:
            return False
        from .embed import abilities
        known = abilities(self.adequacy_encoder).languages
        if known and self.languages and not set(self.languages) <= known:
            outside = [lang for lang in self.languages if lang not in known]
            self._unchecked(f"{self.adequacy_encoder} does not know {', '.join(outside)}; give another encoder for "
                            "adequacy")
            return False
        if self._encoder is None:
            from .embed import reading
            try:
                self._encoder = reading(self.adequacy_encoder, ADEQUACY_PIECES)
            except DomainsiftError as exc:
                self._unchecked(str(exc))
                return False
        return True

    def _unchecked(self, why: str) -> None:
        """The adequacy check left out of the run, said once (a warning) and recorded (:meth:`describe`)."""
        import logging
        self.adequacy_unchecked = why
        logging.getLogger("domainsift").warning("pair checks: adequacy not checked: %s", why)

    def margins(self, pairs: Sequence[tuple[str, str]]):
        """Each pair's margin: its cosine less the mean of its sides' ``MARGIN_K`` nearest neighbours' cosines
        (the source's among the targets, the target's among the sources, of these pairs). A one-line error
        when the adequacy encoder cannot run (:attr:`adequacy_unchecked` says why)."""
        return self._scored(pairs)[0]

    def _scored(self, pairs: Sequence[tuple[str, str]]):
        """:meth:`margins`, and the sides' unit vectors (sources, targets)."""
        import numpy as np
        if not self._can_encode():
            raise DomainsiftError(f"the adequacy check cannot run: {self.adequacy_unchecked}")
        x = np.asarray(self._encoder.encode([a for a, _ in pairs]), dtype=np.float32)
        y = np.asarray(self._encoder.encode([b for _, b in pairs]), dtype=np.float32)
        x /= np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)
        y /= np.maximum(np.linalg.norm(y, axis=1, keepdims=True), 1e-12)
        k = min(MARGIN_K, len(pairs))
        fwd, bwd = np.empty(len(pairs)), np.empty(len(pairs))
        block = 2048
        for start in range(0, len(pairs), block):  # the similarity matrix a block of rows at a time
            sx = x[start:start + block] @ y.T
            sy = y[start:start + block] @ x.T
            fwd[start:start + block] = np.sort(np.partition(sx, -k, axis=1)[:, -k:], axis=1).mean(1)
            bwd[start:start + block] = np.sort(np.partition(sy, -k, axis=1)[:, -k:], axis=1).mean(1)
        own = np.einsum("ij,ij->i", x, y)
        return own - (fwd + bwd) / 2, x, y

    def _wrong_language(self, pairs) -> list[bool]:
        ident = _identifier()
        two = _identifier(*self.languages) if self.languages[0] != self.languages[1] else None
        out = []
        for a, b in pairs:
            bad = False
            for text, want in ((a, self.languages[0]), (b, self.languages[1])):
                if len(text.split()) < LANGUAGE_MIN_WORDS:
                    continue
                for model in ((two, ident) if two is not None else (ident,)):
                    lang, prob = model.classify(text)
                    if lang != want and prob >= LANGUAGE_PROBABILITY:
                        bad = True
                        break
                if bad:
                    break
            out.append(bad)
        return out

    def record(self, reason: str, pair: tuple[str, str]) -> None:
        """Count a removed pair (and keep the first few as examples)."""
        self.removed[reason] += 1
        shown = self.examples.setdefault(reason, [])
        if len(shown) < EXAMPLES:
            shown.append(list(pair))

    def describe(self) -> dict:
        """``selection.json``'s ``pair_checks``: the checks, the thresholds, each side's language, how many
        pairs each check removed and examples of each (``length_ratio``: a target's characters over its source's
        in a translation, as learnt)."""
        return {"checks": list(self.checks), "max_ratio": self.max_ratio,
                **({"min_margin": self.min_margin, "numbers_margin": max(self.min_margin, NUMBERS_MARGIN),
                    "adequacy_encoder": self.adequacy_encoder, "adequacy_pieces": ADEQUACY_PIECES}
                   if "adequacy" in self.checks else {}),
                **({"languages": list(self.languages)} if self.languages else {}),
                **({"length_ratio": round(math.exp(self.length_bias), 3)} if self.length_bias is not None else {}),
                **({"language_unchecked": self.unchecked} if self.unchecked and "language" in self.checks else {}),
                **({"repeat_alike": REPEAT_ALIKE} if "repeat" in self.checks else {}),
                **({"adequacy_unchecked": self.adequacy_unchecked}
                   if self.adequacy_unchecked and ("adequacy" in self.checks or "repeat" in self.checks) else {}),
                **({"stood_down": self.stood_down} if self.stood_down else {}),
                "removed": {c: self.removed.get(c, 0) for c in self.checks},
                "examples": {c: self.examples[c] for c in self.checks if c in self.examples}}


@lru_cache(maxsize=4)
def _identifier(*languages: str):
    """py3langid's identifier with normalised probabilities, choosing among ``languages`` (all: none given);
    loaded once a process."""
    from py3langid.langid import MODEL_FILE, LanguageIdentifier
    ident = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
    if languages:
        ident.set_languages(list(languages))
    return ident
