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
