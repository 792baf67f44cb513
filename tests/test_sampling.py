"""Domain-weighted sampling (paper 004): the sampler, its policies, resuming, the
Hugging Face Trainer integration. Synthetic tasks where the right answer is known."""

from __future__ import annotations

import copy
import json

import numpy as np
import pytest
import torch

from domainsift._internal.errors import DomainsiftError, InputError
from domainsift.sampling import (DDS, MDAC, DomainSampler, Learner, MixedAlpha, mixture_loss,
                                 plot_weights, read_domains, save_history)

LABELS = ["law"] * 10 + ["med"] * 30 + ["it"] * 60


def is_distribution(w) -> bool:
    w = np.asarray(w)
    return bool(np.all(w >= 0) and abs(w.sum() - 1) < 1e-9)


# ---- the fixed mixtures --------------------------------------------------------------
@pytest.mark.parametrize("alpha", [0.0, 0.25, 0.5, 1.0, 2.0])
def test_mixed_alpha_matches_its_formula(alpha):
    s = DomainSampler(LABELS, batch_size=4, policy=MixedAlpha(alpha))
    q = np.array([60, 10, 30]) / 100          # names are sorted: it, law, med
    assert s.names == ["it", "law", "med"]
    expected = q ** alpha / (q ** alpha).sum()
    assert np.allclose(s.weights, expected)
    assert is_distribution(s.weights)
    assert np.allclose(MixedAlpha(alpha).initial_weights([60, 10, 30]), expected)


def test_uniform_and_natural_mixtures_are_the_two_ends():
    assert np.allclose(DomainSampler(LABELS, 4, MixedAlpha(0)).weights, [1 / 3] * 3)
    assert np.allclose(DomainSampler(LABELS, 4, MixedAlpha(1)).weights, [0.6, 0.1, 0.3])


def test_batches_follow_the_weights_and_stay_in_their_domain():
    s = DomainSampler(LABELS, batch_size=50, policy=MixedAlpha(0.0), num_batches=200, seed=3)
    idx = np.concatenate([np.array(b) for b in s])
    assert len(idx) == 200 * 50 and idx.min() >= 0 and idx.max() < len(LABELS)
    share = np.array([np.mean([LABELS[i] == name for i in idx]) for name in s.names])
    assert np.allclose(share, 1 / 3, atol=0.02)          # uniform over domains, not over examples
    for d, name in enumerate(s.names):
        b = s.domain_batch(d, update=0, j=0)
        assert {LABELS[i] for i in b} == {name}


def test_set_weights_takes_effect_from_the_next_batch_and_is_checked():
    s = DomainSampler(LABELS, batch_size=8, policy=MixedAlpha(1.0), num_batches=4, seed=0)
    it = iter(s)
    first = next(it)
    s.set_weights([0, 1, 0])
    rest = list(it)
    assert all(LABELS[i] == "law" for b in rest for i in b)
    assert any(LABELS[i] != "law" for i in first) and s.weights_at(0).tolist() == [0.6, 0.1, 0.3]
    for bad in ([1, 1], [0, 0, 0], [-1, 1, 1], [np.nan, 1, 1]):
        with pytest.raises(DomainsiftError, match="weights"):
            s.set_weights(bad)


def test_bad_arguments_get_clear_errors():
    with pytest.raises(DomainsiftError, match="empty"):
        DomainSampler([], batch_size=4)
    with pytest.raises(DomainsiftError, match="batch_size"):
        DomainSampler(LABELS, batch_size=0)
    with pytest.raises(DomainsiftError, match="alpha"):
        MixedAlpha(-1)
    with pytest.raises(DomainsiftError, match="k must"):
        MDAC(k=0)
    with pytest.raises(DomainsiftError, match="no dev set"):
        mixture_loss({"a": 1}, {"b": 1.0}, lambda m, x: 0)
    with pytest.raises(TypeError, match="forever"):
        len(DomainSampler(LABELS, batch_size=4))


# ---- a synthetic task where only one domain helps --------------------------------------
# dev: y = x·w; domain "good" has the same w; "flip" has -w; "noise" has random targets.
def regression_task(seed=0, n=200, dim=6):
    g = torch.Generator().manual_seed(seed)
    w = torch.randn(dim, generator=g)
    xs = torch.randn(3 * n, dim, generator=g)
    ys = torch.empty(3 * n)
    ys[:n] = xs[:n] @ w
    ys[n:2 * n] = xs[n:2 * n] @ (-w)
    ys[2 * n:] = 3 * torch.randn(n, generator=g)
    labels = ["good"] * n + ["flip"] * n + ["noise"] * n
    dev_x = torch.randn(100, dim, generator=g)
    dev = (dev_x, dev_x @ w)
    return xs, ys, labels, dev


def make_learner(model, opt, xs, ys, dev):
    def train_loss(m, idx):
        i = torch.as_tensor(idx)
        return torch.nn.functional.mse_loss(m(xs[i]).squeeze(-1), ys[i])

    def dev_loss_of(m, batch):
        return torch.nn.functional.mse_loss(m(batch[0]).squeeze(-1), batch[1])
    return Learner(model, train_loss=train_loss, dev_loss=mixture_loss({"dev": dev}, None, dev_loss_of),
                   optimizer=opt)


def train(policy, sessions=4, steps=5, seed=0, lr=0.02, stop_after=None, state=None):
    """Plain loop: `steps` SGD steps per session, then an update; returns the sampler, the
    batches drawn and the model. With `stop_after` it stops there and returns the states."""
    xs, ys, labels, dev = regression_task()
    torch.manual_seed(seed)
    model = torch.nn.Linear(xs.shape[1], 1)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.5)
    sampler = DomainSampler(labels, batch_size=16, policy=policy, seed=seed)
    if state is not None:
        sampler.load_state_dict(json.loads(json.dumps(state["sampler"])))
        model.load_state_dict(state["model"])
        opt.load_state_dict(state["opt"])
    learner = make_learner(model, opt, xs, ys, dev)
    drawn = []
    it = iter(sampler)
    for step in range(sampler.position + 1, sessions * steps + 1):
        idx = next(it)
        drawn.append(idx)
        opt.zero_grad()
        learner.train_loss(model, idx).backward()
        opt.step()
        if step % steps == 0:
            sampler.update(learner)
        if stop_after is not None and step == stop_after:
            return {"sampler": sampler.state_dict(), "model": {k: v.clone() for k, v in model.state_dict().items()},
                    "opt": copy.deepcopy(opt.state_dict()),
                    "drawn": drawn}
    return sampler, drawn, model


@pytest.mark.parametrize("policy", [lambda: MDAC(k=5, lr_data=0.01, iterations=20),
                                    lambda: DDS(lr_data=0.05, iterations=20)], ids=["mdac", "dds"])
def test_learned_policies_move_weight_to_the_one_useful_domain(policy):
    sampler, _, _ = train(policy(), sessions=4, steps=5)
    good = sampler.names.index("good")
    for h in sampler.history:
        assert is_distribution(h["weights"])
    final = np.array(sampler.history[-1]["weights"])
    assert final[good] > 0.5 and final[good] == final.max()
    goods = [h["weights"][good] for h in sampler.history]
    assert all(b > a for a, b in zip(goods, goods[1:]))          # it rises at every update
    rewards = sampler.history[1]["rewards"]
    assert rewards[good] == max(rewards) and rewards[good] > 0   # the reward points at it


def _fixed_reward_updates(policy, rewards, n, monkeypatch):
    """``n`` updates of ``policy`` on LABELS whose rewards are ``rewards`` at every update."""
    monkeypatch.setattr(type(policy), "rewards", lambda self, learner: (np.asarray(rewards, float), {}))
    sampler = DomainSampler(LABELS, 4, policy, seed=0)
    learner = Learner(torch.nn.Linear(2, 1), lambda m, idx: None, lambda m: None)
    for _ in range(n):
        sampler.update(learner)
    return sampler


def test_dds_is_the_original_codes_update_adam_on_the_log_softmax_kept_across_updates(monkeypatch):
    """multiDDS: -sum_d R(d) log softmax(psi)_d, 200 Adam steps of lr 1e-4 an update, one Adam for the run."""
    r = [0.6, 0.1, 0.3]
    s = _fixed_reward_updates(DDS(), r, 1, monkeypatch)
    psi0 = np.log(np.full(3, 1 / 3))
    moved = s.policy.psi - psi0
    # from uniform the gradient is r_d - lambda_d * sum(r) = r_d - 1/3: Adam moves each logit ~lr a step
    assert np.all(np.sign(moved) == np.sign(np.array(r) - 1 / 3))
    assert np.all(np.abs(moved) <= 200 * 1e-4 + 1e-9) and np.abs(moved).max() > 0.5 * 200 * 1e-4
    assert s.policy.adam["step"] == 200
    # its optimum is lambda proportional to positive rewards (not the arg max that REINFORCE on the
    # expected reward reaches): many updates at a larger rate get there
    s = _fixed_reward_updates(DDS(lr_data=0.01), r, 40, monkeypatch)
    assert np.allclose(s.weights, r, atol=0.02)
    # the Adam state travels with the sampler's state, and a run resumed from it continues alike
    a = _fixed_reward_updates(DDS(lr_data=0.01), r, 3, monkeypatch)
    b = _fixed_reward_updates(DDS(lr_data=0.01), r, 2, monkeypatch)
    c = DomainSampler(LABELS, 4, DDS(lr_data=0.01), seed=0)
    c.load_state_dict(json.loads(json.dumps(b.state_dict())))
    c.update(Learner(torch.nn.Linear(2, 1), lambda m, idx: None, lambda m: None))
    assert np.array_equal(a.policy.psi, c.policy.psi)
    state = b.state_dict()
    state["policy"]["adam"] = None
    with pytest.raises(DomainsiftError, match="adam"):
        DomainSampler(LABELS, 4, DDS(lr_data=0.01), seed=0).load_state_dict(state)


def test_mdac_simulation_leaves_the_model_the_optimizer_and_the_global_rng_alone():
    xs, ys, labels, dev = regression_task()
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(xs.shape[1], 8), torch.nn.Dropout(0.3), torch.nn.Linear(8, 1))
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    learner = make_learner(model, opt, xs, ys, dev)
    opt.zero_grad(); learner.train_loss(model, list(range(16))).backward(); opt.step()
    before = {k: v.clone() for k, v in model.state_dict().items()}
    moments = [opt.state[p]["exp_avg"].clone() for p in model.parameters()]
    rng = torch.get_rng_state()
    DomainSampler(labels, 16, MDAC(k=3), seed=0).update(learner)
    assert all(torch.equal(before[k], v) for k, v in model.state_dict().items())
    assert all(torch.equal(m, opt.state[p]["exp_avg"]) for m, p in zip(moments, model.parameters()))
    assert torch.equal(rng, torch.get_rng_state())
    with pytest.raises(DomainsiftError, match="optimizer"):
        DomainSampler(labels, 16, MDAC(k=3)).update(Learner(model, learner.train_loss, learner.dev_loss))


@pytest.mark.parametrize("make", [lambda: MixedAlpha(0.5), lambda: MDAC(k=3, lr_data=0.01, iterations=10),
                                  lambda: DDS(lr_data=0.05, iterations=10)], ids=["mixed", "mdac", "dds"])
def test_a_resumed_sampler_draws_the_batches_of_an_uninterrupted_run(make):
    _, whole, model_a = train(make(), sessions=4, steps=5)
    state = train(make(), sessions=4, steps=5, stop_after=12)       # mid-session
    sampler_b, rest, model_b = train(make(), sessions=4, steps=5, state=state)
    assert state["drawn"] + rest == whole
    assert all(torch.equal(a, b) for a, b in zip(model_a.state_dict().values(), model_b.state_dict().values()))
    state["sampler"]["seed"] = 99
    with pytest.raises(DomainsiftError, match="seed"):
        sampler_b.load_state_dict(state["sampler"])


def test_history_is_saved_and_plotted(tmp_path):
    sampler, _, _ = train(MDAC(k=2, iterations=5), sessions=2, steps=3)
    path = save_history(sampler, tmp_path / "sampling.json")
    record = json.loads(path.read_text())
    assert record["domains"] == sampler.names and len(record["history"]) == 3 and record["position"] == 6
    assert record["signature"]["method"] == "sampling-mdac" and record["signature"]["k"] == 2
    png = plot_weights(record, tmp_path / "weights.png")
    assert (tmp_path / "weights.png").stat().st_size > 1000 and png.endswith("weights.png")


# ---- domains from domainsift cluster ------------------------------------------------------
def test_domains_come_from_a_cluster_directory(tmp_path, domain_files):
    from domainsift.io.corpus import read_corpus
    from domainsift.jobs.cluster import Grid, run_cluster
    corpus = read_corpus([str(p) for p in domain_files])
    gold = corpus.labels
    rng = np.random.default_rng(0)
    centres = {g: rng.normal(size=8) * 10 for g in sorted(set(gold))}
    vectors = np.stack([centres[g] + rng.normal(size=8) for g in gold])
    run_cluster(corpus, gold, tmp_path / "cl", Grid(ks=[3], pcas=[None], seeds=[0]), plots=False, vectors=vectors)
    labels = read_domains(tmp_path / "cl")
    assert len(labels) == len(corpus)
    assert read_domains(tmp_path / "cl" / "clusters.tsv") == labels  # the file itself: its header is no label
    groups = {g: {c for c, gg in zip(labels, gold) if gg == g} for g in set(gold)}
    assert all(len(v) == 1 for v in groups.values()) and len(set.union(*groups.values())) == 3
    s = DomainSampler(labels, batch_size=4, policy=MixedAlpha(1.0))
    assert s.names == ["0", "1", "2"]
    with pytest.raises(InputError, match="clusters.tsv"):
        read_domains(tmp_path)
    (tmp_path / "labels.txt").write_text("a\n\nb\n")
    with pytest.raises(InputError, match="labels.txt:2"):
        read_domains(tmp_path / "labels.txt")


# ---- Hugging Face Trainer -------------------------------------------------------------------
class Seqs(torch.utils.data.Dataset):
    """Token sequences of two 'domains' with disjoint vocabularies; each item knows its index."""

    def __init__(self, n_per, seed, length=6):
        g = torch.Generator().manual_seed(seed)
        self.items = []
        for d, (lo, hi) in enumerate([(3, 20), (20, 40)]):
            for _ in range(n_per[d]):
                self.items.append(torch.randint(lo, hi, (length,), generator=g))
        self.labels = ["a"] * n_per[0] + ["b"] * n_per[1]

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        return {"input_ids": self.items[i], "labels": self.items[i], "idx": i}


def collate(examples):
    ids = torch.stack([e["input_ids"] for e in examples])
    return {"input_ids": ids, "labels": ids.clone(), "idx": torch.tensor([e["idx"] for e in examples])}


def hf_trainer(out, max_steps=6, save_steps=None):
    from transformers import GPT2Config, GPT2LMHeadModel, TrainingArguments
    from domainsift.sampling.hf import DomainTrainer

    class Recording(DomainTrainer):
        """Keeps the indices of every batch it trains on (not those the policy looks at)."""
        seen: list = []

        def training_step(self, model, inputs, *a, **kw):
            self.seen.append(inputs.pop("idx").tolist())
            return super().training_step(model, inputs, *a, **kw)

        def compute_loss(self, model, inputs, *a, **kw):
            return super().compute_loss(model, {k: v for k, v in inputs.items() if k != "idx"}, *a, **kw)

    torch.manual_seed(0)
    model = GPT2LMHeadModel(GPT2Config(vocab_size=40, n_positions=8, n_embd=16, n_layer=1, n_head=2,
                                       bos_token_id=0, eos_token_id=0))
    train = Seqs([30, 10], seed=0)
    dev = {"a": Seqs([8, 0], seed=1), "b": Seqs([0, 8], seed=2)}
    args = TrainingArguments(output_dir=str(out), max_steps=max_steps, learning_rate=5e-3, report_to=[],
                             per_device_train_batch_size=4, per_device_eval_batch_size=4, use_cpu=True,
                             save_strategy="steps" if save_steps else "no", save_steps=save_steps or 500,
                             logging_strategy="no", remove_unused_columns=False, seed=0, disable_tqdm=True)
    sampler = DomainSampler(train.labels, batch_size=4, policy=MDAC(k=2, lr_data=0.05, iterations=10), seed=0)
    trainer = Recording(model=model, args=args, train_dataset=train, data_collator=collate,
                        domain_sampler=sampler, dev_sets=dev, target={"b": 1.0}, session_steps=2)
    trainer.seen = []
    return trainer, trainer


def test_hf_trainer_draws_from_the_sampler_updates_weights_and_resumes_exactly(tmp_path):
    trainer, rec = hf_trainer(tmp_path / "a", save_steps=3)
    trainer.train()
    record = json.loads((tmp_path / "a" / "sampling.json").read_text())
    assert [h["reason"] for h in record["history"]] == ["initial", "mdac", "mdac"]   # after steps 2 and 4
    assert all(is_distribution(h["weights"]) for h in record["history"])
    b = record["domains"].index("b")
    assert record["history"][-1]["weights"][b] > 0.5          # the target's domain gains weight
    drawn = rec.seen[:6]
    assert drawn == [trainer.domain_sampler.batch(i) for i in range(6)]

    # resume from the checkpoint at step 3: the remaining batches are those of the whole run
    again, rec2 = hf_trainer(tmp_path / "a")
    again.train(resume_from_checkpoint=str(tmp_path / "a" / "checkpoint-3"))
    assert rec2.seen[:3] == drawn[3:]
    assert again.domain_sampler.history == trainer.domain_sampler.history
    with pytest.raises(DomainsiftError, match="domain_sampler.json"):
        hf_trainer(tmp_path / "b")[0].train(resume_from_checkpoint=str(tmp_path))


def test_the_report_shows_the_weight_history(tmp_path):
    from domainsift.report.html import build_report
    sampler, _, _ = train(MDAC(k=2, iterations=5), sessions=3, steps=3)
    save_history(sampler, tmp_path / "run" / "sampling.json")
    res = build_report([tmp_path / "run"], tmp_path / "report.html")
    assert res["kinds"] == [["sampling"]]
    page = (tmp_path / "report.html").read_text()
    assert "weights-r0" in page and "3 updates of the weights" in page and "sampling-mdac" in page


def test_hf_trainer_with_datasets_and_unused_columns_removed(tmp_path):
    """The usual Hugging Face path: `datasets.Dataset` with an extra column the model does not
    take (the Trainer drops it), the default collator, DDS updating from dev datasets."""
    datasets = pytest.importorskip("datasets")
    from transformers import GPT2Config, GPT2LMHeadModel, TrainingArguments, default_data_collator
    from domainsift.sampling.hf import DomainTrainer

    def table(n_per, seed):
        s = Seqs(n_per, seed)
        ids = [x.tolist() for x in s.items]
        return datasets.Dataset.from_dict({"input_ids": ids, "labels": ids, "domain": s.labels}), s.labels

    train, labels = table([20, 20], 0)
    dev_b, _ = table([0, 8], 2)
    torch.manual_seed(0)
    model = GPT2LMHeadModel(GPT2Config(vocab_size=40, n_positions=8, n_embd=16, n_layer=1, n_head=2,
                                       bos_token_id=0, eos_token_id=0))
    args = TrainingArguments(output_dir=str(tmp_path), max_steps=4, learning_rate=5e-3, report_to=[],
                             per_device_train_batch_size=4, per_device_eval_batch_size=4, use_cpu=True,
                             save_strategy="no", logging_strategy="no", seed=0, disable_tqdm=True)
    sampler = DomainSampler(labels, batch_size=4, policy=DDS(lr_data=0.5, iterations=10), seed=0)
    trainer = DomainTrainer(model=model, args=args, train_dataset=train, data_collator=default_data_collator,
                            domain_sampler=sampler, dev_sets={"b": dev_b}, session_steps=2)
    trainer.train()
    record = json.loads((tmp_path / "sampling.json").read_text())
    assert [h["reason"] for h in record["history"]] == ["initial", "dds"]
    assert record["history"][1]["weights"][record["domains"].index("b")] > 0.5
    with pytest.raises(DomainsiftError, match="domain labels for"):
        DomainTrainer(model=model, args=args, train_dataset=train, data_collator=default_data_collator,
                      domain_sampler=DomainSampler(labels[:-1], batch_size=4), session_steps=2)
    no_steps = TrainingArguments(output_dir=str(tmp_path), use_cpu=True, report_to=[])
    with pytest.raises(DomainsiftError, match="max_steps"):
        DomainTrainer(model=model, args=no_steps, train_dataset=train, data_collator=default_data_collator,
                      domain_sampler=DomainSampler(labels, batch_size=4))


def test_mdac_simulated_steps_clip_as_training_does():
    """With Learner.max_grad_norm, each simulated step is clipped as training clips: the reward
    is the dev-loss drop after the clipped step, computed here by hand; without it, a larger drop."""
    import copy
    xs, ys, labels, dev = regression_task()
    torch.manual_seed(0)
    model = torch.nn.Linear(xs.shape[1], 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    learner = make_learner(model, opt, xs, ys, dev)
    policy = MDAC(k=1)
    sampler = DomainSampler(labels, 16, policy, seed=0)
    free, _ = policy.rewards(learner)
    clipped, _ = policy.rewards(Learner(model, learner.train_loss, learner.dev_loss, opt, max_grad_norm=0.01))
    with torch.no_grad():
        j0 = float(learner.dev_loss(model))
    for d in range(sampler.n_domains):
        twin = copy.deepcopy(model)
        learner.train_loss(twin, sampler.domain_batch(d, policy.updates, 0)).backward()
        torch.nn.utils.clip_grad_norm_(twin.parameters(), 0.01)
        with torch.no_grad():
            for p in twin.parameters():
                p -= 0.1 * p.grad
            assert clipped[d] == pytest.approx(j0 - float(learner.dev_loss(twin)), rel=1e-5, abs=1e-7)
    good = sampler.names.index("good")
    assert 0 < clipped[good] < free[good]


@pytest.mark.parametrize("damage", ["history-5", "text-weight", "short-weights", "not-an-object"])
def test_the_report_refuses_a_malformed_sampling_record_in_one_line(damage, tmp_path):
    """`"history": 5` (before: a TypeError), non-numeric weights (before: accepted), a weight missing,
    a record that is not an object: one line naming sampling.json."""
    from domainsift.report.html import build_report
    sampler, _, _ = train(MDAC(k=2, iterations=5), sessions=3, steps=3)
    path = save_history(sampler, tmp_path / "run" / "sampling.json")
    rec = json.loads(path.read_text())
    if damage == "history-5":
        rec["history"] = 5
    elif damage == "text-weight":
        rec["history"][1]["weights"][0] = "lots"
    elif damage == "short-weights":
        rec["history"][0]["weights"] = rec["history"][0]["weights"][:-1]
    else:
        rec = [rec]
    path.write_text(json.dumps(rec))
    with pytest.raises(DomainsiftError) as exc:
        build_report([tmp_path / "run"], tmp_path / "report.html")
    assert "sampling.json" in str(exc.value) and "\n" not in str(exc.value)
    assert not (tmp_path / "report.html").exists()
