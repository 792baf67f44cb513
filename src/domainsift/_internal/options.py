"""Settings declared once: a dataclass whose fields say their command-line option, and the options
generated from it (as selectors' parameters are, :class:`domainsift.select.base.Param`).

A field made by :func:`option` carries its help text and, where the name alone does not say it, its
flag, type, choices or metavar; :func:`add_options` adds one option a field to an argparse group with
the dataclass's default, and :func:`from_args` builds the dataclass back from the parsed arguments.
A field without ``help`` (a nested settings object) has no option of its own.
"""

from __future__ import annotations

import argparse
import dataclasses
from typing import Any


def _number(convert, ok, expect: str):
    """An argparse type: ``convert`` the text, then ``ok(value)`` or a one-line error saying ``expect``."""
    def parse(text: str):
        try:
            v = convert(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not {'an integer' if convert is int else 'a number'}: {text}") from None
        if not ok(v):
            raise argparse.ArgumentTypeError(f"must be {expect}, got {text}")
        return v
    parse.__name__ = convert.__name__
    return parse


positive_int = _number(int, lambda v: v > 0, "a positive integer")
fraction = _number(float, lambda v: 0 < v <= 1, "in (0, 1]")
finite = _number(float, lambda v: v == v and abs(v) != float("inf"), "a finite number")


def option(default: Any = None, help: str = "", flag: str | None = None, **argparse_kw) -> Any:
    """A dataclass field with its command-line option: ``flag`` (default ``--the-name``) and the
    keywords of ``add_argument`` (``type``, ``choices``, ``metavar``, ``nargs``); a ``bool`` default of
    False is a switch (``store_true``)."""
    return dataclasses.field(default=default, metadata={"help": help, "flag": flag, "argparse": argparse_kw})


def flag_of(field: dataclasses.Field) -> str:
    return field.metadata.get("flag") or "--" + field.name.replace("_", "-")


def dest_of(field: dataclasses.Field) -> str:
    """Where the parsed value lands: the flag's name (``--nmt-backend``: ``nmt_backend``)."""
    return flag_of(field).lstrip("-").replace("-", "_")


def add_options(group, cls) -> None:
    """One option a field of the dataclass ``cls`` that says its help, with the field's default."""
    for f in dataclasses.fields(cls):
        if not f.metadata.get("help"):
            continue
        kw = dict(f.metadata["argparse"])
        if f.default is False and "type" not in kw:
            kw["action"] = "store_true"
        kw.setdefault("default", f.default)
        group.add_argument(flag_of(f), dest=dest_of(f), help=f.metadata["help"], **kw)


def from_args(cls, args, **given):
    """The dataclass ``cls`` from parsed arguments (each field with an option, by its name), and
    ``given`` for the rest (a nested settings object); a list the parser made is a tuple."""
    values = {}
    for f in dataclasses.fields(cls):
        if f.metadata.get("help") and f.name not in given:
            v = getattr(args, dest_of(f))
            values[f.name] = tuple(v) if isinstance(v, list) else v
    return cls(**values, **given)


__all__ = ["option", "add_options", "from_args", "flag_of", "dest_of", "positive_int", "fraction", "finite"]
