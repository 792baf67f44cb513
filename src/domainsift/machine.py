"""What machine and libraries a result came from: every benchmark row records it (public; the product's
own records use the same functions)."""

from ._internal.machine import cpu_isa, cpu_model, describe, library_versions

__all__ = ["cpu_isa", "cpu_model", "describe", "library_versions"]
