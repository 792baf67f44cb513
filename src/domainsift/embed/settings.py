"""Settings of a loaded ``transformers`` model that the encoding and export paths share: its
logging kept quiet for a call, and the attention implementation it runs."""

from __future__ import annotations

import contextlib


@contextlib.contextmanager
def quiet_transformers():
    """transformers' warnings and progress bars off for the call, its own settings restored after."""
    from transformers.utils import logging as tlog
    level = tlog.get_verbosity()
    bars = tlog.is_progress_bar_enabled()
    tlog.set_verbosity_error()
    tlog.disable_progress_bar()
    try:
        yield
    finally:
        tlog.set_verbosity(level)
        if bars:
            tlog.enable_progress_bar()


def set_attention(model, implementation: str) -> str | None:
    """Run ``model``'s attention as ``implementation`` ("eager": plain matrix products and a
    softmax; "sdpa": PyTorch's fused kernel) where the model can switch; returns the setting it
    had before when it switched, None when it did not."""
    config = getattr(model, "config", None)
    before = getattr(config, "_attn_implementation", None)
    if before in (None, implementation) or not hasattr(model, "set_attn_implementation"):
        return None
    with quiet_transformers():
        try:
            model.set_attn_implementation(implementation)
        except (ValueError, ImportError):  # a model without that implementation keeps its own
            return None
    return before if config._attn_implementation == implementation else None


@contextlib.contextmanager
def attention(model, implementation: str):
    """:func:`set_attention` for the call; the model's own setting restored after."""
    before = set_attention(model, implementation)
    try:
        yield
    finally:
        if before is not None:
            set_attention(model, before)
