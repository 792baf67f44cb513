"""Data selection methods behind one protocol, and the shared choosing step.

A method is added by writing one file with a :class:`~.base.BaseSelector` subclass
(its ``params`` declare its options; the CLI gets a flag for each) and one line in
:data:`SELECTORS`; classes are imported only when asked for.
"""

from __future__ import annotations

import importlib

from ..errors import DomainsiftError
from .base import BaseSelector, Param, Selector, choose

SELECTORS = {
    "cosine": "domainsift.select.cosine:CosineSelector",
    "crosslingual": "domainsift.select.crosslingual:CrosslingualSelector",
    "finetune": "domainsift.select.finetune:FinetuneSelector",
    "moore-lewis": "domainsift.select.moore_lewis:MooreLewisSelector",
    "random": "domainsift.select.random:RandomSelector",
    "student": "domainsift.select.student:StudentSelector",
}


def selector_class(name: str):
    if name not in SELECTORS:
        raise DomainsiftError(f"unknown method '{name}' (choose from {', '.join(SELECTORS)})")
    module, cls = SELECTORS[name].split(":")
    return getattr(importlib.import_module(module), cls)


def get_selector(name: str, **params) -> Selector:
    """Build a selector by registry name with its parameters."""
    return selector_class(name)(**params)


__all__ = ["SELECTORS", "Selector", "BaseSelector", "Param", "choose", "get_selector", "selector_class"]
