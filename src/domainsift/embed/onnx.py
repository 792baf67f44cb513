"""The ONNX Runtime backend of the transformers encoding path.

A model is exported once with ``torch.onnx.export`` (its chosen hidden layer
as the output), optionally quantised to int8 (:func:`quantize_per_row`), and
run by an ``InferenceSession``; mean pooling and normalisation stay in the
caller, shared with the PyTorch path.

The int8 recipe (:data:`INT8_RECIPE`, 0.6.0) is chosen so that a sentence's
vector depends on nothing but the sentence and the CPU's floating point:

- **activations per row** (per token): each token's input to a weight MatMul is
  scaled by its own absolute maximum, so no other token, sentence or padding
  enters its quantisation. ONNX Runtime's dynamic quantisation (0.2.0-0.5.1)
  takes one scale per batch tensor: a vector moved by up to 0.06 with its
  batch-mates, and so with the batch size, shard, chunk and cache state.
- **weights per output channel, 7 bits** (|q| <= 63): x86 int8 kernels without
  VNNI (AVX2, AVX-512 without VNNI) add pairs of u8 x s8 products in a
  saturating int16; with 7-bit weights no pair can saturate
  (2 x 255 x 63 < 32767), so the integer products are exact on every x86 CPU and
  the same as with VNNI. 8-bit weights saturate there and round differently on
  each instruction set.

Measured on the default encoder (``bench/live/int8_recipes.py``): mean cosine to
PyTorch fp32 0.995 (dynamic int8: 0.992), vectors identical in any order and
batch size; about 1.4x ONNX Runtime's fp32 speed and 0.8x the dynamic
recipe's on a 2-core AVX-512 CPU.

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

from .._internal.errors import DomainsiftError

log = logging.getLogger(__name__)

BACKENDS = ("onnx-int8", "onnx", "torch")
DEFAULT_BACKEND = "onnx-int8"
# the attention the graph is traced from (0.5.1): eager exports as plain MatMul/Softmax, which ONNX
# Runtime runs faster than the trace of PyTorch's fused attention (bench/results/onnx_graph.md)
EXPORT_ATTENTION = "eager"
# how onnx-int8 quantises (0.6.0): activations per row (token), symmetric, as u8 around 128;
# weights per output channel, symmetric, 7 bits (see the module docstring)
INT8_RECIPE = "row-act-u8+channel-w7"
# how the recipe is written as a graph (0.20.1): each integer product and its weight scale in one
# MatMulIntegerToFloat kernel (Microsoft's contrib op, in every ONNX Runtime CPU build). The same bits as
# the standard ops MatMulInteger -> Cast -> Mul (float(acc) * w_scale either way), which ONNX Runtime
# does not fuse by itself; in the exported file's name, so a file written before is exported again
INT8_GRAPH = "fused-w-scale"
WEIGHT_MAX = 63
ACT_MAX = 127


def _ort():
    from .._internal.optional import require
    what = "onnxruntime and onnx (for --backend onnx / onnx-int8; --backend torch needs neither)"
    require("onnx", "hf", what)  # the quantiser needs it
    return require("onnxruntime", "hf", what)


def input_names_of(model, tokenizer) -> list[str]:
    """The tokenizer outputs that the model's forward accepts, in a fixed order."""
    accepted = set(inspect.signature(model.forward).parameters)
    produced = set(tokenizer("a b", return_tensors="pt").keys())
    return [n for n in ("input_ids", "attention_mask", "token_type_ids") if n in accepted and n in produced]


def _export(model, tokenizer, layer: int, path: Path, attention_impl: str = EXPORT_ATTENTION) -> None:
    import torch

    from .settings import attention
    names = input_names_of(model, tokenizer)

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


def quantize_per_row(src: Path, dst: Path, weight_max: int = WEIGHT_MAX, fused: bool = True) -> None:
    """Rewrite the fp32 graph ``src`` into ``dst`` with every MatMul whose right side is a constant
    2-D weight computed in int8: per-row symmetric activations (stored as u8 with zero point 128),
    per-output-channel symmetric weights in [-weight_max, weight_max], an exact int32 product
    (``MatMulInteger``) and the two scales applied after. Each distinct activation is quantised
    once (a layer's query, key and value share theirs). Everything else stays fp32.

    Written here rather than with ``onnxruntime.quantization``: its dynamic quantiser scales a whole
    batch tensor at once, its static one fixes one scale per tensor from calibration data; neither
    quantises per row. The weight scale is multiplied in before the row scale, so that the product and
    its per-column weight scale form one kernel (a per-row factor there would break it: measured in
    0.6.0, cosine to fp32 0.65).

    ``fused`` (the default) writes that kernel itself (``com.microsoft.MatMulIntegerToFloat``, with
    the weight scale as its per-column scale and 1 as the activations' scale): ONNX Runtime 1.32 does
    not fuse the three standard ops of this graph by itself (its profiler shows the Cast and the extra
    Mul); the 3-layer graph alone runs 3.17 -> 2.89 ms a 49-token line on a 2-core AVX2 CPU
    (``bench/results/teacher_cost.md``). The vectors are the same bits either way; ``fused=False``
    writes standard ONNX ops only."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    model = onnx.load(str(src))
    graph = model.graph
    weights = {i.name: i for i in graph.initializer if len(i.dims) == 2}
    nodes, added, quantised = [], [], {}
    consts = {"rq_eps": np.array(1e-12, np.float32), "rq_max": np.array(float(ACT_MAX), np.float32),
              "rq_one": np.array(1.0, np.float32), "rq_zp": np.array(128, np.uint8)}
    for node in graph.node:
        if node.op_type != "MatMul" or node.input[1] not in weights:
            nodes.append(node)
            continue
        w = numpy_helper.to_array(weights[node.input[1]]).astype(np.float32)
        w_scale = np.maximum(np.abs(w).max(axis=0), 1e-12) / weight_max
        w_q = np.clip(np.rint(w / w_scale), -weight_max, weight_max).astype(np.int8)
        p = f"{node.output[0]}.rq"
        added += [numpy_helper.from_array(w_q, p + ".w"), numpy_helper.from_array(w_scale.astype(np.float32),
                                                                                  p + ".w_scale")]
        a = node.input[0]
        if a not in quantised:  # |a| per row -> scale; a * (127 / max|a|) rounded, saturated, + 128
            q = quantised[a] = f"{a}.rq{len(quantised)}"
            nodes += [helper.make_node("Abs", [a], [q + ".abs"]),
                      helper.make_node("ReduceMax", [q + ".abs"], [q + ".max"], axes=[-1], keepdims=1),
                      helper.make_node("Add", [q + ".max", "rq_eps"], [q + ".maxe"]),
                      helper.make_node("Div", ["rq_max", q + ".maxe"], [q + ".inv"]),
                      helper.make_node("Div", [q + ".maxe", "rq_max"], [q + ".scale"]),
                      helper.make_node("Mul", [a, q + ".inv"], [q + ".scaled"]),
                      helper.make_node("QuantizeLinear", [q + ".scaled", "rq_one", "rq_zp"], [q + ".u8"])]
        q = quantised[a]
        if fused:  # float(int32 product) * (1 * w_scale), one kernel
            nodes.append(helper.make_node("MatMulIntegerToFloat", [q + ".u8", p + ".w", "rq_one", p + ".w_scale",
                                                                   "rq_zp"], [p + ".fw"], domain="com.microsoft"))
        else:
            nodes += [helper.make_node("MatMulInteger", [q + ".u8", p + ".w", "rq_zp"], [p + ".i32"]),
                      helper.make_node("Cast", [p + ".i32"], [p + ".f"], to=TensorProto.FLOAT),
                      helper.make_node("Mul", [p + ".f", p + ".w_scale"], [p + ".fw"])]
        nodes.append(helper.make_node("Mul", [p + ".fw", q + ".scale"], [node.output[0]]))
    added += [numpy_helper.from_array(v, k) for k, v in consts.items()]
    used = {i for n in nodes for i in n.input}
    kept = [i for i in graph.initializer if i.name in used]
    del graph.node[:]
    graph.node.extend(nodes)
    del graph.initializer[:]
    graph.initializer.extend(kept + added)
    if fused and not any(o.domain == "com.microsoft" for o in model.opset_import):
        model.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    onnx.save(model, str(dst))


def build_model_file(model, tokenizer, layer: int, backend: str, out: Path,
                     attention_impl: str = EXPORT_ATTENTION) -> None:
    """Export (and for ``onnx-int8`` quantise) ``model`` to ``out``, written under a temporary
    name in the same folder and renamed; the graph is traced with ``attention_impl`` attention
    (``bench/archive/onnx_graph.py`` compares eager with PyTorch's fused "sdpa")."""
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=out.parent, prefix=".export-") as tmp:
        fp32 = Path(tmp) / "model.onnx"
        _export(model, tokenizer, layer, fp32, attention_impl)
        final = fp32
        if backend == "onnx-int8":
            final = Path(tmp) / "model.int8.onnx"
            quantize_per_row(fp32, final)
        os.replace(final, out)


MAX_LANES = 4  # at most this many sessions run batches side by side (see OnnxRunner)
# at most this many tokens in a batch a session runs (a batch of short lines still holds at most the encoder's
# batch size): a batch's activations grow with its tokens, and every lane holds one batch at a time. So two
# lanes hold less than 0.21.0's one session over batches of 32 lines (bench/results/lanes.md); a one-off sweep
# on the cascade's candidates (git show 2fcdd91:docs/experiments.md, 0.22.0) ran 256 to 1,024 tokens within 7% of each other
BATCH_TOKENS = 512


def lanes_for(threads: int) -> tuple[int, int]:
    """``(sessions, threads a session)`` for ``threads`` CPU threads: one single-threaded session a thread, up
    to :data:`MAX_LANES` sessions (the calling process tokenizes and pools every batch in Python, so more
    sessions would wait on it), the threads shared out among them."""
    threads = max(1, int(threads))
    lanes = min(threads, MAX_LANES)
    return lanes, threads // lanes


class OnnxRunner:
    """ONNX Runtime sessions that map a tokenized batch to one hidden layer's states.

    ``sessions`` sessions of the same graph (each with ``threads`` intra-op threads) are *lanes*: a call
    takes a free one, so ``sessions`` threads of the caller can run batches side by side (the session
    releases the GIL). One session over two threads spends much of a batch outside its parallel matrix
    products (the operators between them, the caller's padding and pooling): on a 2-core Zen 4 EPYC a
    second thread made one session 12% faster. Two single-threaded sessions with batches of at most
    :data:`BATCH_TOKENS` tokens score the 3-layer cascade teacher's candidates in 1.73 ms a line against
    0.21.0's 2.12 (one session, 32 lines a batch), pool lines in 0.79 against 1.05, holding 108 and 85 MB
    less, with the same scores (``bench/results/lanes.md``). Not measured beyond 2 cores."""

    def __init__(self, path: Path, input_names: list[str], threads: int | None = None, sessions: int = 1):
        import queue
        ort = _ort()
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = threads or 0
        opts.inter_op_num_threads = 1
        opts.log_severity_level = 3
        # no spinning: between runs the caller pools in PyTorch and NumPy on the same cores, and ONNX
        # Runtime's threads spinning there slowed the pooling 20x under cProfile; with the fused graph,
        # 3 layers over cascade candidates: 3.20 -> 2.89 ms a line (bench/results/teacher_cost.md)
        opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
        # no memory pattern: ONNX Runtime plans and keeps one per input shape, and batches of one token count
        # come in every shape; on 32,768 cascade candidates the process held 80-100 MB less after scoring,
        # at the same speed (docs/scale.md, 0.20.1)
        opts.enable_mem_pattern = False
        self.sessions = [ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])
                         for _ in range(max(1, int(sessions)))]
        self._free = queue.SimpleQueue()
        for sess in self.sessions:
            self._free.put(sess)
        used = {i.name for i in self.sessions[0].get_inputs()}  # the exporter drops inputs a layer ignores
        self.input_names = [n for n in input_names if n in used]

    @property
    def lanes(self) -> int:
        """How many batches can run at once (one a session)."""
        return len(self.sessions)

    def __call__(self, batch: dict):
        import numpy as np
        feed = {n: np.asarray(batch[n], dtype=np.int64) for n in self.input_names}
        session = self._free.get()  # never waits while callers are at most `lanes` threads
        try:
            return session.run(None, feed)[0]
        finally:
            self._free.put(session)


def runner_for(model, tokenizer, layer: int, backend: str, export_dir: str | None,
               fingerprint: str | None, threads: int | None = None, sessions: int = 1) -> OnnxRunner:
    """The session for ``model``: loaded from ``export_dir`` when it was exported before (keyed
    by ``fingerprint``), else exported now (to ``export_dir`` when there is one and the model
    has a fingerprint, else to a temporary folder); ``sessions`` lanes of ``threads`` threads each
    (:class:`OnnxRunner`)."""
    ort = _ort()
    names = input_names_of(model, tokenizer)
    if export_dir and fingerprint:
        import torch
        key = (f"{fingerprint}|layer:{layer}|{backend}|graph:{EXPORT_ATTENTION}"
               + (f"|int8:{INT8_RECIPE}|{INT8_GRAPH}" if backend == "onnx-int8" else "")
               + f"|torch:{torch.__version__}|ort:{ort.__version__}")
        key = hashlib.sha256(key.encode()).hexdigest()[:20]
        path = Path(export_dir) / f"{key}.onnx"
        if not path.exists():
            log.info("exporting the encoder to %s (%s), once", path, backend)
            build_model_file(model, tokenizer, layer, backend, path)
        return OnnxRunner(path, names, threads, sessions)
    with tempfile.TemporaryDirectory(prefix="domainsift-onnx-") as tmp:
        path = Path(tmp) / "model.onnx"
        build_model_file(model, tokenizer, layer, backend, path)
        return OnnxRunner(path, names, threads, sessions)
