"""The one gate for optional dependencies: a heavy package is imported when it is used, and its absence
is one line naming the extra that installs it."""

from __future__ import annotations

import importlib

from .errors import missing_extra


def require(module: str, extra: str, package: str | None = None):
    """Import ``module`` (a dotted name) and return it, or raise ``pip install 'domainsift[extra]'`` naming
    ``package`` (default: the module's top-level name)."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise missing_extra(package or module.split(".")[0], extra) from None
