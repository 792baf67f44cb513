"""Every data file read or written. ``save_json`` and ``atomic_open`` write a file under a temporary name
and rename it (never a partial file), for the product and for the benchmarks alike."""

from .._internal.atomic import atomic_open, save_json

__all__ = ["atomic_open", "save_json"]
