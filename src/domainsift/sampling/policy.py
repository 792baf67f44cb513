"""What every sampling policy shares: the :class:`Learner` a policy measures the
model through, the :class:`Policy` protocol, and the REINFORCE step on the
policy's parameters ψ (paper 004, §3.1).

A policy turns the model's state into new domain weights between training
sessions. The learned policies (MDAC, DDS) keep a vector ψ and a map λ(ψ) onto
the simplex; after each session they measure a reward ``R(d)`` per domain and
move ψ by paper 004's update, ``ψ ← ψ + lr_data · Σ_d R(d) ∂λ(d; ψ)/∂ψ``
(plain gradient ascent on the expected reward ``Σ_d R(d) λ(d; ψ)``), repeated
``iterations`` times with the gradient taken afresh at each ψ.

Plain gradient ascent, not Adam: the step is proportional to how much the
rewards differ, so it shrinks as the domains' rewards even out and the weights
settle. Adam's normalised steps move ψ by about ``lr_data`` per iteration
whatever the rewards, and on the benchmark the weights swung from one domain to
another and back (docs/sampling.md). The flip side: ``lr_data`` is tied to the
rewards' scale (MDAC: nats of mean token loss; DDS: cosines); paper 004 grid-
searches it over {0.001, 0.0025, 0.005}, and so does ``bench/live/sampling.py``.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from .._internal.errors import DomainsiftError


@dataclass
class Learner:
    """How a policy sees the model being trained.

    model : the ``torch.nn.Module`` in training (policies never change it: MDAC
        simulates on a copy, DDS only takes gradients).
    train_loss : ``train_loss(model, indices) -> scalar tensor``, the training loss
        of a batch of dataset examples given by their indices (the same indices the
        sampler yields).
    dev_loss : ``dev_loss(model) -> scalar tensor``, the target loss J(θ, λᵗ):
        the dev loss of the target mixture (see :func:`mixture_loss`).
    optimizer : the training optimizer; MDAC's simulated steps continue from a copy
        of its state (learning rate, Adam moments). Needed by MDAC only.
    max_grad_norm : the gradient clipping of training (``clip_grad_norm_``'s max norm),
        applied to MDAC's simulated steps too, so that they move the model as training
        would; None: training does not clip.
    """

    model: Any
    train_loss: Callable[[Any, list[int]], Any]
    dev_loss: Callable[[Any], Any]
    optimizer: Any = None
    max_grad_norm: float | None = None


def mixture_loss(dev_sets: Mapping[str, Any], target: Mapping[str, float] | None,
                 loss: Callable[[Any, Any], Any]) -> Callable[[Any], Any]:
    """J(θ, λᵗ) = Σ_d λᵗ(d) loss(θ, dev_d): a ``dev_loss`` for :class:`Learner`.

    ``dev_sets`` maps a domain name to whatever ``loss(model, dev_set)`` takes (a batch,
    a list of batches); ``target`` maps names to weights (normalised here; None =
    uniform over ``dev_sets``). Domains with weight 0 are not evaluated."""
    if not dev_sets:
        raise DomainsiftError("mixture_loss: no dev sets")
    target = dict(target) if target is not None else {name: 1.0 for name in dev_sets}
    unknown = sorted(set(target) - set(dev_sets))
    if unknown:
        raise DomainsiftError(f"mixture_loss: target names {unknown} have no dev set (dev sets: {sorted(dev_sets)})")
    bad = {k: w for k, w in target.items() if not isinstance(w, (int, float)) or not np.isfinite(w)}
    if bad:
        raise DomainsiftError(f"mixture_loss: target weights must be finite numbers, got {bad}")
    total = float(sum(target.values()))
    if total <= 0 or any(w < 0 for w in target.values()):
        raise DomainsiftError(f"mixture_loss: target weights must be >= 0 and not all 0, got {target}")
    parts = [(name, w / total) for name, w in target.items() if w > 0]

    def dev_loss(model):
        return sum(w * loss(model, dev_sets[name]) for name, w in parts)
    return dev_loss


class Policy:
    """The protocol of a sampling policy: initial weights, an update between sessions,
    a JSON-serialisable state, and its parameters for the signature."""

    name = "policy"

    def bind(self, sampler) -> None:
        self.sampler = sampler

    def initial_weights(self, sizes: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def update(self, learner: Learner) -> tuple[np.ndarray, dict]:
        raise NotImplementedError

    def params(self) -> dict:
        return {}

    def state_dict(self) -> dict:
        return {"name": self.name, **self.params()}

    def load_state_dict(self, state: dict) -> None:
        """Check that ``state`` was saved by this policy with these parameters (subclasses then read
        their learned state); a state of another policy or other parameters is a one-line error."""
        check_policy_state(self, state)


def check_policy_state(policy: "Policy", state) -> None:
    if not isinstance(state, dict):
        raise DomainsiftError(f"sampler state: the policy state must be a dict, got {type(state).__name__}")
    if state.get("name") != policy.name:
        raise DomainsiftError(f"sampler state was saved with policy {state.get('name')!r}, this sampler has "
                              f"{policy.name!r}")
    for key, value in policy.params().items():
        if key not in state:
            raise DomainsiftError(f"sampler state: the {policy.name} state has no '{key}'")
        if state[key] != value:
            raise DomainsiftError(f"sampler state was saved by {policy.name} with {key}={state[key]!r}; this "
                                  f"policy has {key}={value!r}")


def finite_number(owner: str, key: str, value, low: float = 0.0, strict: bool = True) -> float:
    """``value`` as a float, or a one-line error unless it is a finite number above ``low``
    (at least ``low`` when not ``strict``)."""
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and np.isfinite(value)
    if not ok or (value <= low if strict else value < low):
        raise DomainsiftError(f"{owner}: {key} must be a finite number {'>' if strict else '>='} {low:g}, "
                              f"got {value!r}")
    return float(value)


def mixed_weights(sizes: Sequence[int], alpha: float) -> np.ndarray:
    """λ_α(d) ∝ q_d^α with q_d the domain's share of the data (paper 004, eq. 2)."""
    q = np.asarray(sizes, dtype=np.float64)
    q = q / q.sum()
    with np.errstate(under="ignore"):
        w = np.where(q > 0, q ** float(alpha), 0.0)
    if w.sum() > 0:
        return w / w.sum()
    # every q^alpha underflowed (a large alpha): in logs, where it tends to the largest domain
    logw = np.where(q > 0, float(alpha) * np.log(np.where(q > 0, q, 1.0)), -np.inf)
    w = np.exp(logw - logw.max())
    return w / w.sum()


def spherical(psi, beta: float = 2.0):
    """λ(d; ψ) = |ψ_d|^β / Σ_i |ψ_i|^β, the spherical softmax (MDAC)."""
    p = psi.abs() ** beta
    return p / p.sum()


def softmax(psi):
    """λ(d; ψ) = exp ψ_d / Σ_i exp ψ_i (DDS)."""
    return psi.softmax(0)


def reinforce_step(psi: np.ndarray, rewards: np.ndarray, param: Callable, lr: float,
                   iterations: int) -> np.ndarray:
    """``iterations`` steps of ψ ← ψ + lr · ∇_ψ Σ_d R(d) λ(d; ψ); returns the new ψ."""
    import torch
    p = torch.tensor(np.asarray(psi, dtype=np.float64), requires_grad=True)
    r = torch.tensor(np.asarray(rewards, dtype=np.float64))
    for _ in range(int(iterations)):
        (grad,) = torch.autograd.grad((r * param(p)).sum(), p)
        with torch.no_grad():
            p += lr * grad
    return p.detach().numpy().copy()


def clone_for_simulation(model, optimizer):
    """A deep copy of the model and an optimizer of the same kind over the copy's
    parameters that continues from a copy of ``optimizer``'s state."""
    twin = copy.deepcopy(model)
    twin_params = dict(zip((id(p) for p in model.parameters()), twin.parameters()))
    groups = []
    for g in optimizer.param_groups:
        try:
            params = [twin_params[id(p)] for p in g["params"]]
        except KeyError:
            raise DomainsiftError("MDAC: the optimizer holds parameters that are not the model's") from None
        groups.append({**{k: v for k, v in g.items() if k != "params"}, "params": params})
    twin_opt = type(optimizer)(groups, **{k: v for k, v in optimizer.defaults.items()
                                         if k not in groups[0]})
    twin_opt.load_state_dict(copy.deepcopy(optimizer.state_dict()))
    return twin, twin_opt


def as_list(x) -> list[float]:
    return [float(v) for v in np.asarray(x, dtype=np.float64).ravel()]
