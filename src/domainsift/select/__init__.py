"""Data selection methods behind one protocol, and the shared choosing step.

A method is added by writing one file with a :class:`~.base.BaseSelector` subclass
(its ``params`` declare its options; the CLI gets a flag for each) and one line in
:data:`SELECTORS`; classes are imported only when asked for.
"""

from __future__ import annotations

import importlib

from .._internal.errors import DomainsiftError
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
    """Build a selector by registry name with its parameters, checked (:meth:`BaseSelector.check_params`:
    a bad value is a one-line error here, before any work). The class itself only stores them."""
    return selector_class(name)(**params).check_params()


def method_flags() -> dict:
    """Every command-line-visible parameter of every registered selector, by flag: ``{flag: {method: Param}}``."""
    flags: dict = {}
    for method in SELECTORS:
        for p in selector_class(method).params:
            if p.cli and p.name != "seed":
                flags.setdefault(p.flag, {})[method] = p
    return flags


def params_from_flags(method: str, given: dict, warn=None) -> dict:
    """A method's parameters from the flags a user gave (``{flag: value}``; the selector's own defaults
    for the rest). The student passes its teacher's flags on to the teacher (``teacher_params``), with
    one encoder for both; a flag that applies to neither is reported through ``warn(flag)``."""
    flags = method_flags()
    kw, teacher_kw = {}, {}
    teacher = given.get("--teacher") or "cosine"
    for flag, value in given.items():
        by_method = flags.get(flag, {})
        p = by_method.get(method)
        if p is None and method == "student" and teacher in by_method:
            teacher_kw[by_method[teacher].name] = value  # the student's teacher takes its own flags
            continue
        if p is None:
            if warn:
                warn(flag)
            continue
        kw[p.name] = value
    if method == "student":
        if "model" in kw and teacher in flags.get("--model", {}):
            teacher_kw[flags["--model"][teacher].name] = kw["model"]  # one encoder for both
        if teacher_kw:
            kw["teacher_params"] = teacher_kw
    return kw


__all__ = ["SELECTORS", "method_flags", "params_from_flags", "Selector", "BaseSelector", "Param", "choose", "get_selector", "selector_class"]
