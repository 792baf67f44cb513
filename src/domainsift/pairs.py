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
  :data:`LANGUAGE_PROBABILITY`) on a line of at least :data:`LANGUAGE_MIN_WORDS` words;
- ``ratio``: one side more than ``max_ratio`` times as long as the other in characters (a fragment, or a
  pair whose sides say different amounts), for pairs whose longer side has at least :data:`RATIO_MIN_CHARS`.

:class:`PairChecks` applies them in that order and says which one a pair fails first; the selection walks
past a failing pair as it walks past an ``--exclude``d one, so ``--top N`` still gives N pairs, and
``selection.json`` says how many pairs each check removed, with examples. The thresholds are those measured
on the shared pool (``bench/results/pair_checks.md``): at them, the checks remove few clean pairs.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from difflib import SequenceMatcher
from functools import lru_cache
from typing import Sequence

from ._internal.errors import DomainsiftError

CHECKS = ("copy", "language", "ratio")
COPY_SIMILARITY, COPY_MIN_CHARS = 0.9, 20
LANGUAGE_PROBABILITY, LANGUAGE_MIN_WORDS = 0.99, 4
MAX_RATIO, RATIO_MIN_CHARS = 3.0, 15
EXAMPLES = 3  # pairs a check's record shows

_PUNCT = re.compile(r"[\W_]+", re.UNICODE)


def _bare(text: str) -> str:
    """Lower case, letters and digits only (a copy that changed a space or a full stop is still a copy)."""
    return _PUNCT.sub("", unicodedata.normalize("NFKC", text).casefold())


def is_copy(src: str, tgt: str) -> bool:
    a, b = _bare(src), _bare(tgt)
    if not a or not b:
        return False
    if a == b:
        return True
    if min(len(src), len(tgt)) < COPY_MIN_CHARS:
        return False
    return SequenceMatcher(None, a, b, autojunk=False).ratio() >= COPY_SIMILARITY


def length_ratio(src: str, tgt: str) -> float:
    a, b = len(src.strip()), len(tgt.strip())
    return max(a, b) / max(1, min(a, b))


def parse(text: str | None) -> tuple[str, ...]:
    """``--pair-checks LIST`` (comma-separated names of :data:`CHECKS`, ``all`` or ``none``)."""
    if text is None or text == "all":
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

    def __init__(self, checks: Sequence[str] = CHECKS, max_ratio: float = MAX_RATIO):
        if not (max_ratio >= 1 and max_ratio != float("inf")):
            raise DomainsiftError(f"--max-length-ratio must be a number at least 1, got {max_ratio}")
        self.checks, self.max_ratio = tuple(checks), float(max_ratio)
        self.languages: tuple[str, str] | None = None  # each side's language, once told from the candidates
        self.removed = Counter()
        self.examples: dict[str, list] = {}
        self.unchecked: str | None = None  # why the language check could not run

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
        """For each ``(scored side, other side)`` pair, the first check it fails, or None."""
        pairs = list(pairs)
        self.learn_languages(pairs)
        out: list[str | None] = [None] * len(pairs)
        for k, (a, b) in enumerate(pairs):
            if b is None:
                continue
            if "copy" in self.checks and is_copy(a, b):
                out[k] = "copy"
            elif "ratio" in self.checks and max(len(a.strip()), len(b.strip())) >= RATIO_MIN_CHARS \
                    and length_ratio(a, b) > self.max_ratio:
                out[k] = "ratio"
        if "language" in self.checks and self.languages is not None:
            todo = [k for k in range(len(pairs)) if out[k] is None and pairs[k][1] is not None]
            for k, wrong in zip(todo, self._wrong_language([pairs[k] for k in todo])):
                if wrong:
                    out[k] = "language"
        return out

    def _wrong_language(self, pairs) -> list[bool]:
        ident = _identifier()
        out = []
        for a, b in pairs:
            bad = False
            for text, want in ((a, self.languages[0]), (b, self.languages[1])):
                if len(text.split()) < LANGUAGE_MIN_WORDS:
                    continue
                lang, prob = ident.classify(text)
                if lang != want and prob >= LANGUAGE_PROBABILITY:
                    bad = True
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
        pairs each check removed and examples of each."""
        return {"checks": list(self.checks), "max_ratio": self.max_ratio,
                **({"languages": list(self.languages)} if self.languages else {}),
                **({"language_unchecked": self.unchecked} if self.unchecked and "language" in self.checks else {}),
                "removed": {c: self.removed.get(c, 0) for c in self.checks},
                "examples": {c: self.examples[c] for c in self.checks if c in self.examples}}


@lru_cache(maxsize=1)
def _identifier():
    """py3langid's identifier with normalised probabilities (loaded once a process)."""
    from py3langid.langid import MODEL_FILE, LanguageIdentifier
    return LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
