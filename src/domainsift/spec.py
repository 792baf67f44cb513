"""What a run is, as frozen values: :class:`Rule` (what to choose from the scores) and :class:`RunSpec`
(method, targets, pool, rule, how it runs). Every "exactly one of" and "goes with" check of a run lives
here, once; the CLI builds a spec from its flags and hands it to :func:`domainsift.jobs.run.run`, and a
Python user builds the same spec::

    spec = RunSpec("cosine", {"med": read_corpus(["med.txt"])}, PoolSource.open(["pool.txt"]), "runs/med",
                   rule=Rule(top=5000))
    result = run(spec)               # result.selected(): the chosen lines

A spec is checked (:meth:`RunSpec.check`) before any input is read further or any work starts.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any, Mapping

from ._internal.errors import DomainsiftError
from .engine.config import Cascade, Execution

AUTO = "auto"
RULES = ("top", "fraction", "threshold", "positive", "resample")


@dataclass(frozen=True)
class Rule:
    """What a selection takes from the scores: exactly one of ``top`` (N lines, or ``"auto"``), ``fraction``
    (a share of the pool, or ``"auto"``: the pool's estimated in-domain share), ``threshold``, ``positive``
    (probability above 0.5) and ``resample`` (N lines drawn by importance, with ``temperature`` and
    ``resample_seed``); ``dedup`` (``exact`` or ``near``, with ``dedup_threshold``) and ``exclude`` (a Corpus,
    a file or lines: no selected line repeats one of them); ``out_format`` (text, jsonl, parquet) for the
    selected lines; ``pair_checks`` (a bitext pool's: ``all``, the default, ``none`` or a list of
    :data:`domainsift.pairs.CHECKS`) and ``max_length_ratio``: the pairs that are not translations passed
    over (:mod:`domainsift.pairs`)."""

    top: int | str | None = None
    fraction: float | str | None = None
    threshold: float | None = None
    positive: bool = False
    resample: int | None = None
    temperature: float | None = None
    resample_seed: int | None = None
    dedup: str | None = None
    dedup_threshold: float | None = None
    exclude: Any = None
    out_format: str | None = None
    pair_checks: str | None = None
    max_length_ratio: float | None = None
    min_margin: float | None = None
    adequacy_model: str | None = None

    @property
    def auto(self) -> bool:
        return AUTO in (self.top, self.fraction)

    def given(self) -> list[str]:
        """The rules given, as their flags."""
        return [f"--{name}" for name, v in (("top", self.top), ("fraction", self.fraction),
                                            ("threshold", self.threshold), ("resample", self.resample))
                if v is not None] + (["--positive"] if self.positive else [])

    def check(self, mixture: bool = False) -> "Rule":
        """The rule's one check, before any work: exactly one rule; a resample's temperature and seed go with
        it; ``--dedup`` and ``--exclude`` do not go with a draw; a mixture takes ``--top`` or ``--fraction``."""
        if len(self.given()) != 1:
            raise DomainsiftError("give exactly one of --top, --fraction, --threshold, --positive, --resample")
        for flag, v in (("--temperature", self.temperature), ("--resample-seed", self.resample_seed)):
            if v is not None and self.resample is None:  # an option that would change nothing is a mistake
                raise DomainsiftError(f"{flag} goes with --resample N; without it, it would change nothing")
        for name, v in (("top", self.top), ("fraction", self.fraction)):
            if isinstance(v, str) and v != AUTO:
                raise DomainsiftError(f"--{name} takes a number or 'auto', got {v!r}")
        _whole("top", self.top, 1, AUTO)
        _whole("resample", self.resample, 1)
        _whole("resample_seed", self.resample_seed, None)  # its range: check_resample's
        for name, v in (("fraction", self.fraction), ("threshold", self.threshold),
                        ("temperature", self.temperature), ("dedup_threshold", self.dedup_threshold)):
            if v is not None and v != AUTO and (isinstance(v, bool) or not isinstance(v, (int, float))
                                                or v != v):
                raise DomainsiftError(f"{name}= takes a number, got {v!r}")
        if self.fraction is not None and self.fraction != AUTO and not 0 < self.fraction <= 1:
            raise DomainsiftError(f"fraction must be in (0, 1], got {self.fraction}")
        if not isinstance(self.positive, bool):
            raise DomainsiftError(f"positive= takes True or False, got {self.positive!r}")
        self.pair_filter()  # a bad --pair-checks or --max-length-ratio stops here
        if self.resample is not None and self.pair_checks not in (None, "none"):
            raise DomainsiftError("--pair-checks with --resample is not supported (a draw has no walk past a "
                                  "failing pair); give --pair-checks none, or choose with --top or --fraction")
        if self.resample is not None and self.dedup is not None:
            raise DomainsiftError("--dedup with --resample is not supported (a draw has no best-scored copy to "
                                  "keep); deduplicate with --top, --fraction, --threshold or --positive")
        if self.resample is not None and self.exclude is not None:
            raise DomainsiftError("--exclude with --resample is not supported (the draw would have to be made "
                                  "again without them); exclude with --top, --fraction, --threshold or --positive")
        if self.resample is not None:
            from .select.base import check_resample
            check_resample(self.temperature_or_default, self.resample_seed_or_default)
        if mixture:
            others = [f for f, v in (("--threshold", self.threshold), ("--positive", self.positive),
                                     ("--resample", self.resample), ("--out-format", self.out_format)) if v]
            if others:
                raise DomainsiftError(f"--target takes --top N or --fraction F (or auto); not {', '.join(others)}")
        return self

    @property
    def temperature_or_default(self) -> float:
        return 1.0 if self.temperature is None else self.temperature

    @property
    def resample_seed_or_default(self) -> int:
        return 0 if self.resample_seed is None else self.resample_seed

    def pair_filter(self):
        """The :class:`~domainsift.pairs.PairChecks` of a bitext pool's selection (None: none asked for); a
        resample without ``pair_checks`` checks nothing (a draw walks past no pair)."""
        from .pairs import from_options
        return from_options(self.pair_checks, self.max_length_ratio, self.min_margin, self.adequacy_model,
                            resample=self.resample is not None)


@dataclass(frozen=True)
class RunSpec:
    """One run: ``method`` fitted on each of ``targets`` (``{name: Corpus}``; one target is a plain
    select or score, several a mixture where each pool line goes to at most one target, weighted by
    ``mix``), scoring ``pool`` (a :class:`~domainsift.io.source.PoolSource`, read as a stream, or a Corpus),
    writing into ``out`` (None: a temporary folder, the results kept in memory). ``rule`` None scores only
    (``domainsift score``); ``params``: the method's parameters (:func:`domainsift.select.get_selector`);
    ``reader``: how an in-memory pool was read (a PoolSource records its own); ``execution``: local or Ray,
    shards; ``cascade``: a student scores every line and the method only its top candidates;
    ``estimate_share``: also estimate the pool's in-domain share (``share.json``); ``overwrite``: replace
    another run in ``out``."""

    method: str
    targets: Mapping[str, Any]
    pool: Any
    out: str | os.PathLike | None = None
    rule: Rule | None = None
    mix: Mapping[str, float] | None = None
    params: Mapping[str, Any] = field(default_factory=dict)
    seed: int = 0
    reader: Mapping[str, Any] | None = None
    execution: Execution = field(default_factory=Execution)
    cascade: Cascade | None = None
    estimate_share: bool = False
    overwrite: bool = False

    def __post_init__(self):
        # frozen all the way down: a spec handed on cannot be changed under its holder
        object.__setattr__(self, "targets", MappingProxyType(dict(self.targets)))
        object.__setattr__(self, "params", MappingProxyType(dict(self.params)))
        if self.mix is not None:
            object.__setattr__(self, "mix", MappingProxyType(dict(self.mix)))
        if self.reader is not None:
            object.__setattr__(self, "reader", MappingProxyType(dict(self.reader)))

    @classmethod
    def single(cls, method: str, in_domain, pool, out=None, **kw) -> "RunSpec":
        """A one-target run (``select`` / ``score`` with ``--in-domain``)."""
        return cls(method, {"": in_domain}, pool, out, **kw)

    @property
    def mixture(self) -> bool:
        """Named targets (``--target NAME=FILE``): a mixture, written under ``out/targets/NAME``; the one
        unnamed target (:meth:`single`) is a plain run."""
        return "" not in self.targets or len(self.targets) > 1

    @property
    def in_domain(self):
        """A one-target run's in-domain set."""
        if self.mixture:
            raise DomainsiftError("a mixture has several in-domain sets (spec.targets)")
        return next(iter(self.targets.values()))

    def with_out(self, out) -> "RunSpec":
        return replace(self, out=out)

    def check(self) -> "RunSpec":
        """Every check a run makes on its spec, before any work (the inputs themselves are checked as they
        are read)."""
        from .select import SELECTORS, selector_class
        if self.method not in SELECTORS:
            raise DomainsiftError(f"unknown method '{self.method}' (choose from {', '.join(SELECTORS)})")
        if not self.targets:
            raise DomainsiftError("a run needs an in-domain set (--in-domain FILE, or --target NAME=FILE)")
        if self.pool is None:
            raise DomainsiftError("--pool is required")
        _whole("seed", self.seed, 0)
        if self.rule is not None and not isinstance(self.rule, Rule):
            raise DomainsiftError(f"rule= takes a Rule, got {type(self.rule).__name__}")
        self.execution.check()
        if self.cascade is not None:
            self.cascade.check()
        if self.rule is not None:
            self.rule.check(mixture=self.mixture)
            if self.rule.positive and not selector_class(self.method).probabilistic:
                raise DomainsiftError("--positive needs probability scores (method finetune)")
        if self.mixture:
            if "" in self.targets or len(self.targets) < 2:
                raise DomainsiftError("several targets need at least two --target NAME=FILE")
            if self.rule is None:
                raise DomainsiftError("several targets are a selection: give --top N or --fraction F")
            if self.estimate_share:
                raise DomainsiftError("--estimate-share is a score run's; a mixture estimates each share with "
                                      "'auto'")
            if self.mix is not None and self.rule.auto:
                raise DomainsiftError("--mix weighs a total; with 'auto' each target takes its own estimated "
                                      "share")
            if self.mix is not None:
                check_mix(self.mix, self.targets)
        elif self.mix is not None:
            raise DomainsiftError("--mix goes with --target; without it, it would change nothing")
        elif self.estimate_share and self.rule is not None:
            raise DomainsiftError("--estimate-share is a score run's; a selection estimates the share with "
                                  "--top auto or --fraction auto")
        return self


def _whole(name: str, v, least: int | None, *words) -> None:
    """``v`` is None, one of ``words``, or a whole number of at least ``least`` (one line otherwise)."""
    if v is None or (isinstance(v, str) and v in words):
        return
    import numbers
    if isinstance(v, bool) or not isinstance(v, numbers.Integral):
        raise DomainsiftError(f"{name}= takes a whole number, got {v!r}")
    if least is not None and v < least:
        raise DomainsiftError(f"{name}= must be at least {least}, got {v}")


def check_mix(mix: Mapping[str, float], targets) -> None:
    """``mix`` weighs every target once, each weight a positive finite number (they need not sum to 1: the
    run divides by their sum, as ``--mix a=3,b=1`` does)."""
    import math
    for name, w in mix.items():
        if isinstance(w, bool) or not isinstance(w, (int, float)) or not math.isfinite(w) or w <= 0:
            raise DomainsiftError(f"mix= takes a positive weight for each target, got {name}={w!r}")
    if set(mix) != set(targets):
        missing, extra = sorted(set(targets) - set(mix)), sorted(set(mix) - set(targets))
        raise DomainsiftError("mix= must weigh every target once" + (f"; missing: {', '.join(missing)}" if missing
                              else "") + (f"; not a target: {', '.join(extra)}" if extra else ""))
