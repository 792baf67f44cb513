"""What the machine contributes to a number: the CPU's instruction-set family and the versions of
the libraries that compute vectors. Recorded in signatures and benchmark results.

The int8 recipe (:mod:`domainsift.embed.onnx`) makes integer products exact on every x86 CPU, so
vectors differ between instruction sets only in fp32 rounding (vectorised sums of another width);
the family is recorded so that a number names the machine class it came from.
"""

from __future__ import annotations

import platform
from functools import lru_cache


def _cpu_features() -> dict:
    try:
        from numpy._core._multiarray_umath import __cpu_features__
    except ImportError:  # numpy < 2
        try:
            from numpy.core._multiarray_umath import __cpu_features__
        except ImportError:
            return {}
    return dict(__cpu_features__)


@lru_cache(maxsize=None)
def cpu_isa() -> str:
    """The x86 vector family that numeric kernels pick from: ``avx512-vnni``, ``avx512``,
    ``avx2``, ``x86-64`` (older), or the machine's architecture (``aarch64``, ...) elsewhere."""
    f = _cpu_features()
    if f.get("AVX512F") and f.get("AVX512BW"):
        return "avx512-vnni" if f.get("AVX512VNNI") else "avx512"
    if f.get("AVX2"):
        return "avx2"
    machine = platform.machine() or "unknown"
    return "x86-64" if machine in ("x86_64", "AMD64") else machine


def cpu_model() -> str:
    """The CPU's model name (Linux ``/proc/cpuinfo``), else what :mod:`platform` says."""
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown"


def library_versions(names=("numpy", "torch", "transformers", "onnxruntime", "scikit-learn")) -> dict:
    """Installed versions of ``names`` (None for one that is not installed)."""
    from importlib.metadata import PackageNotFoundError, version
    out = {}
    for n in names:
        try:
            out[n] = version(n)
        except PackageNotFoundError:
            out[n] = None
    return out


def describe() -> dict:
    """The machine, for a benchmark result or a run's record."""
    import os
    return {"cpu": cpu_model(), "isa": cpu_isa(), "cores": os.cpu_count(), "python": platform.python_version(),
            **{k: v for k, v in library_versions().items() if v}}


def release_memory() -> None:
    """Hand the heap that a fit freed (its pool sample, a training run's tensors) back to the operating
    system, so that the process's peak is the fit's and not the fit's plus the scoring's: glibc keeps
    freed memory for reuse unless told (``malloc_trim``); elsewhere, nothing happens."""
    import ctypes
    import ctypes.util
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        libc.malloc_trim(0)
    except (OSError, AttributeError):
        pass
