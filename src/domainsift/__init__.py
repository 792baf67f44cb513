"""domainsift: discover the domains hidden in a corpus and select the in-domain part.

The public surface:

- :class:`RunSpec`, :class:`Rule`, :func:`run`, :func:`plan` — one run of ``score`` or ``select`` (one target or
  several, any option the CLI has) into a run directory or in memory; :class:`RunResult` what it made;
- :func:`read_corpus`, :func:`read_parallel` — corpus reading with (file, line) ids;
- :func:`get_embedder`, :class:`EmbedConfig`, :class:`CachedEmbedder` — sentence vectors behind a disk cache;
- :func:`cluster_grid`, :func:`purity` — unsupervised domain clustering;
- :func:`get_selector`, :func:`choose` — scoring a pool and turning scores into a selection;
- :func:`run_select`, :func:`combine_runs` — score directories: score once (``run(RunSpec(...))`` without a
  rule), select many, combine the scores of several methods;
- :class:`PoolSource` — a pool read as a stream (a run scores it shard by shard, in bounded memory);
- :func:`estimate_share` — how much of a pool is in-domain (``run_select(DIR, rule=Rule(fraction="auto"))`` selects it).
"""

from ._version import __version__  # noqa: E402

from ._internal.errors import DomainsiftError, InputError  # noqa: E402
from .io.corpus import Corpus, read_corpus, read_parallel  # noqa: E402
from .io.source import PoolSource  # noqa: E402
from .embed import CachedEmbedder, EmbedConfig, Embedder, get_embedder  # noqa: E402
from .cluster import cluster_grid, purity  # noqa: E402

__all__ = [
    "__version__", "DomainsiftError", "InputError", "Corpus", "read_corpus", "PoolSource",
    "read_parallel", "Embedder", "EmbedConfig", "CachedEmbedder", "get_embedder", "cluster_grid", "purity",
    # imported when first used (selection pulls no heavy dependency until then)
    "RunSpec", "Rule", "run", "plan", "RunResult", "Execution", "Cascade", "get_selector", "choose", "SELECTORS",
    "run_select", "combine_runs", "estimate_share", "evaluate_run",
]


def __getattr__(name):  # lazy: selection pulls no heavy dependency until used
    if name in ("get_selector", "choose", "SELECTORS"):
        from . import select
        return getattr(select, name)
    if name == "run_select":
        from .jobs.select import run_select
        return run_select
    if name in ("run", "plan", "RunResult"):
        from .pipeline import run as module
        return getattr(module, name)
    if name in ("RunSpec", "Rule"):
        from . import spec
        return getattr(spec, name)
    if name in ("Execution", "Cascade"):
        from . import engine
        return getattr(engine, name)
    if name == "combine_runs":
        from .jobs.combine import combine_runs
        return combine_runs
    if name == "estimate_share":
        from .share import estimate_share
        return estimate_share
    if name == "evaluate_run":
        from .jobs.evaluate import evaluate_run
        return evaluate_run
    raise AttributeError(name)
