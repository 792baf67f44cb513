"""Which method to run: the one recommendation that the README's table, ``select --help`` and the demo's
closing lines all print (``tests/test_docs.py`` holds them to it).

The rules follow the measured table (README "Which method when", ``bench/results/selection.md``):
``finetune`` selects best (0.8591 mean precision on the shared benchmark); on a pool of millions of
lines ``--cascade`` keeps its precision (within 0.005 on every target) at a fraction of the time; with
no time to train, ``cosine`` is the quick first cut; an in-domain set in another language than the pool
needs ``crosslingual``.
"""

from __future__ import annotations

from dataclasses import dataclass

LARGE_POOL = 1_000_000  # lines: from here on, the cascade (full finetune would score for hours)


@dataclass(frozen=True)
class Advice:
    method: str
    flags: str
    why: str

    def command(self, top: str = "N") -> str:
        extra = f" {self.flags}" if self.flags else ""
        return (f"domainsift select --method {self.method}{extra} --in-domain MINE.txt --pool BIG.txt "
                f"--top {top} --out run/")


def recommend(pool_lines: int | None = None, other_language: bool = False, no_time_to_train: bool = False) -> Advice:
    """The method for what the user has: the pool's size, whether the in-domain set is in another language
    than the pool, whether there is time to fine-tune an encoder."""
    if other_language:
        return Advice("crosslingual", "", "no bitext needed on the default multilingual encoder")
    if no_time_to_train:
        return Advice("cosine", "", "a quick first cut: precision 0.7142")
    if pool_lines is not None and pool_lines >= LARGE_POOL:
        return Advice("finetune", "--cascade", "finetune's precision within 0.005; the student scores most lines")
    return Advice("finetune", "", "the best measured precision: 0.8591")


def advice_text() -> str:
    """The recommendation in a few lines, as ``select --help`` and the demo print it."""
    rows = [("in general", recommend()), (f"a pool of {LARGE_POOL:,}+ lines", recommend(LARGE_POOL)),
            ("no time to fine-tune", recommend(no_time_to_train=True)),
            ("in-domain set in another language", recommend(other_language=True))]
    return "\n".join(f"  {what:<34} --method {(a.method + ' ' + a.flags).strip():<20} {a.why}" for what, a in rows)


#: mean precision on the selection benchmark (five targets, N = 5,000 of a 35,000-line pool) with the in-domain
#: set cut to n lines, each target's draws averaged first (``python bench/live/in_domain_size.py``,
#: ``bench/results/in_domain_size.md``; the test suite holds these to that file). Methods not listed were not
#: measured, and are not warned about.
BY_LINES = {
    "cosine": {10: 0.6634, 25: 0.7001, 50: 0.7055, 100: 0.7050, 250: 0.7100, 500: 0.7142},
    "moore-lewis": {10: 0.4411, 25: 0.5139, 50: 0.5859, 100: 0.6522, 250: 0.7218, 500: 0.7582},
    "finetune": {10: 0.5922, 25: 0.7459, 100: 0.8172, 500: 0.8588},
    "student": {10: 0.7021, 25: 0.7379, 100: 0.7429, 500: 0.7648},
}
CLOSE = 0.05  # a size is enough when it and every larger size measured within this of the method's with 500
MARGIN = 0.02  # another method is named only when it measured better by more than this: one draw of 25
# in-domain lines moved a method's five-target mean by 0.015-0.022 (cosine, student; 10 lines: 0.035-0.042)


def enough_lines(method: str) -> int | None:
    """The fewest in-domain lines with which ``method`` kept within :data:`CLOSE` of its precision with all 500
    (at that size and every larger one measured); None for a method not measured."""
    by = BY_LINES.get(method)
    if by is None:
        return None
    ok = [n for n in sorted(by) if all(by[k] >= by[500] - CLOSE for k in by if k >= n)]
    return ok[0]


def _at(method: str, n: int) -> tuple[int, float]:
    """The method's measured size closest below ``n`` (the smallest measured, for fewer) and its precision."""
    by = BY_LINES[method]
    size = max([k for k in by if k <= n] or [min(by)])
    return size, by[size]


def few_lines(method: str, n: int, name: str = "the in-domain set") -> str | None:
    """A warning line when ``n`` in-domain lines are fewer than ``method`` was measured to need
    (:func:`enough_lines`), naming the measured method that did best with as few lines, if another did better
    by more than :data:`MARGIN`; None otherwise."""
    enough = enough_lines(method)
    if enough is None or n >= enough:
        return None
    size, own = _at(method, n)
    best = max((m for m in BY_LINES if m != method), key=lambda m: _at(m, n)[1])
    other_size, other = _at(best, n)
    alt = (f", or --method {best}: {other:.2f} with {other_size} lines" if other > own + MARGIN else "")
    return (f"{name} has {n:,} lines: {method} measured {own:.2f} mean precision with {size} in-domain lines "
            f"against {BY_LINES[method][500]:.2f} with 500 on the selection benchmark "
            f"(bench/results/in_domain_size.md); give it a few hundred{alt}")
