"""The ONNX Runtime backend of the transformers encoding path.

A model is exported once with ``torch.onnx.export`` (its chosen hidden layer
as the output), optionally quantised with ONNX Runtime's dynamic int8
quantisation, and run by an ``InferenceSession``; mean pooling and
normalisation stay in the caller, shared with the PyTorch path.

Quantisation covers the MatMul weights only, per output channel: quantising
the embedding tables (``Gather``) or whole tensors at once costs far more
accuracy (mean cosine to fp32 0.955 against 0.991 on the default encoder,
measured in ``bench/embed_speed.py``'s notes) for no speed.

Exported models are kept in ``export_dir`` (the vector cache's ``onnx``
folder by default) under a name made of the model's fingerprint, the layer
and the backend, so a second process loads the file instead of exporting
again; an in-memory model (being fine-tuned) is exported to a temporary
folder that is removed once its session is built.
"""

from __future__ import annotations

import contextlib
import hashlib
import inspect
import io
import logging
import os
import tempfile
import warnings
from pathlib import Path

from ..errors import DomainsiftError, missing_extra

log = logging.getLogger(__name__)

BACKENDS = ("onnx-int8", "onnx", "torch")
DEFAULT_BACKEND = "onnx-int8"
# the attention the graph is traced from (0.5.1): eager exports as plain MatMul/Softmax, which ONNX
# Runtime runs faster than the trace of PyTorch's fused attention (bench/results/onnx_graph.md)
EXPORT_ATTENTION = "eager"


def _ort():
    try:
        import onnx  # noqa: F401  (the quantiser needs it)
        import onnxruntime
    except ImportError:
        raise missing_extra("onnxruntime and onnx (for --backend onnx / onnx-int8; --backend torch "
                            "needs neither)", "hf") from None
    return onnxruntime


def _input_names(model, tokenizer) -> list[str]:
    """The tokenizer outputs that the model's forward accepts, in a fixed order."""
    accepted = set(inspect.signature(model.forward).parameters)
    produced = set(tokenizer("a b", return_tensors="pt").keys())
    return [n for n in ("input_ids", "attention_mask", "token_type_ids") if n in accepted and n in produced]


def _export(model, tokenizer, layer: int, path: Path, attention_impl: str = EXPORT_ATTENTION) -> None:
    import torch

    from .settings import attention
    names = _input_names(model, tokenizer)

    class Wrapped(torch.nn.Module):
        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def forward(self, *args):
            kwargs = dict(zip(names, args))
            if layer == -1:
                return self.inner(**kwargs).last_hidden_state
            return self.inner(**kwargs, output_hidden_states=True).hidden_states[layer]

    sample = tokenizer(["a b c", "a"], padding=True, return_tensors="pt")
    args = tuple(sample[n] for n in names)
    axes = {n: {0: "batch", 1: "seq"} for n in names}
    axes["hidden"] = {0: "batch", 1: "seq"}
    was_training = model.training
    model.eval()
    buf = io.BytesIO()
    try:
        # traced from EXPORT_ATTENTION (the fused kernel's trace guards each softmax row against NaN)
        with warnings.catch_warnings(), torch.no_grad(), contextlib.redirect_stderr(io.StringIO()), \
                attention(model, attention_impl):
            warnings.simplefilter("ignore")
            # the TorchScript exporter (dynamo=False where torch offers both: the dynamo one needs onnxscript)
            legacy = {"dynamo": False} if "dynamo" in inspect.signature(torch.onnx.export).parameters else {}
            torch.onnx.export(Wrapped(model), args, buf, input_names=names, output_names=["hidden"],
                              dynamic_axes=axes, opset_version=17, **legacy)
    except Exception as exc:  # the exporter raises many kinds; all mean the same to a user
        raise DomainsiftError(f"cannot export {type(model).__name__} to ONNX ({str(exc).splitlines()[0][:200]}); "
                              "use --backend torch") from None
    finally:
        model.train(was_training)
    path.write_bytes(buf.getvalue())


def _quantize(src: Path, dst: Path) -> None:
    from onnxruntime.quantization import QuantType, quantize_dynamic
    from onnx import TensorProto
    root = logging.getLogger()
    old = root.disabled
    root.disabled = True  # the quantiser logs "consider pre-processing" on the root logger
    try:
        quantize_dynamic(str(src), str(dst), weight_type=QuantType.QInt8, per_channel=True,
                         op_types_to_quantize=["MatMul"],
                         extra_options={"DefaultTensorType": TensorProto.FLOAT})
    finally:
        root.disabled = old


def build_model_file(model, tokenizer, layer: int, backend: str, out: Path,
                     attention_impl: str = EXPORT_ATTENTION) -> None:
    """Export (and for ``onnx-int8`` quantise) ``model`` to ``out``, written under a temporary
    name in the same folder and renamed; the graph is traced with ``attention_impl`` attention
    (``bench/onnx_graph.py`` compares eager with PyTorch's fused "sdpa")."""
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=out.parent, prefix=".export-") as tmp:
        fp32 = Path(tmp) / "model.onnx"
        _export(model, tokenizer, layer, fp32, attention_impl)
        final = fp32
        if backend == "onnx-int8":
            final = Path(tmp) / "model.int8.onnx"
            _quantize(fp32, final)
        os.replace(final, out)


class OnnxRunner:
    """An ONNX Runtime session that maps a tokenized batch to one hidden layer's states."""

    def __init__(self, path: Path, input_names: list[str], threads: int | None = None):
        ort = _ort()
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = threads or 0
        opts.inter_op_num_threads = 1
        opts.log_severity_level = 3
        self.session = ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])
        used = {i.name for i in self.session.get_inputs()}  # the exporter drops inputs a layer ignores
        self.input_names = [n for n in input_names if n in used]

    def __call__(self, batch: dict):
        import numpy as np
        feed = {n: np.asarray(batch[n], dtype=np.int64) for n in self.input_names}
        return self.session.run(None, feed)[0]


def runner_for(model, tokenizer, layer: int, backend: str, export_dir: str | None,
               fingerprint: str | None, threads: int | None = None) -> OnnxRunner:
    """The session for ``model``: loaded from ``export_dir`` when it was exported before (keyed
    by ``fingerprint``), else exported now (to ``export_dir`` when there is one and the model
    has a fingerprint, else to a temporary folder)."""
    ort = _ort()
    names = _input_names(model, tokenizer)
    if export_dir and fingerprint:
        import torch
        key = (f"{fingerprint}|layer:{layer}|{backend}|graph:{EXPORT_ATTENTION}"
               f"|torch:{torch.__version__}|ort:{ort.__version__}")
        key = hashlib.sha256(key.encode()).hexdigest()[:20]
        path = Path(export_dir) / f"{key}.onnx"
        if not path.exists():
            log.info("exporting the encoder to %s (%s), once", path, backend)
            build_model_file(model, tokenizer, layer, backend, path)
        return OnnxRunner(path, names, threads)
    with tempfile.TemporaryDirectory(prefix="domainsift-onnx-") as tmp:
        path = Path(tmp) / "model.onnx"
        build_model_file(model, tokenizer, layer, backend, path)
        return OnnxRunner(path, names, threads)
