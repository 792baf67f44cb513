"""The jobs: one module per command, each the library call that its command makes.

``score`` and ``select`` (a :class:`~domainsift.spec.RunSpec` run by :func:`domainsift.run`; choosing again
from saved scores: :func:`run_select`), ``combine``
(:func:`combine_runs`), ``embed``, ``cluster``, ``evaluate``, ``downstream`` (and ``crossdomain``),
``split``, ``report``, ``demo``. A job opens its inputs through :mod:`domainsift.io`, runs through
:mod:`domainsift.engine` or the methods, and writes through :mod:`domainsift.rundir`.
"""


def __getattr__(name):  # lazy: a job pulls its dependencies when it is used
    import importlib
    where = {"score": "score", "run_select": "select", "combine_runs": "combine", "evaluate_run": "evaluate"}
    if name in where:
        return getattr(importlib.import_module(f".{where[name]}", __name__), name)
    raise AttributeError(name)
