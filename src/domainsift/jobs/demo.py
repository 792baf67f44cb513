"""The offline demo on the built-in sample (five domains, written for this project)."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from .. import rundir

DEMO_DOMAINS = ("medical", "legal", "software", "dialogue", "cooking")


def demo_files() -> list[str]:
    """Paths of the built-in sample files, one per domain."""
    base = resources.files("domainsift") / "data" / "demo"
    return [str(base / f"{d}.txt") for d in DEMO_DOMAINS]


def run_demo(out_dir: str = "demo-out", progress: bool = True) -> dict:
    """Cluster the sample with the default encoder and print a short summary."""
    from ..io.corpus import read_corpus
    from ..embed import EmbedConfig
    from ..pipeline.cluster import Grid, format_summary_table, run_cluster

    out = Path(out_dir)
    files = demo_files()
    corpus = read_corpus(files)
    gold = [Path(f).stem for f, _ in corpus.ids]
    print(f"domainsift demo: {len(corpus)} sentences from {len(files)} built-in domains "
          f"({', '.join(DEMO_DOMAINS)})")
    print("encoding with all-MiniLM-L6-v2 (offline) and clustering with a GMM ...")
    config = EmbedConfig(progress=progress, cache_dir=str(out / "cache"))
    # a few dozen sentences per domain: a full-covariance GMM wants few dimensions
    result = run_cluster(corpus, gold, out / "cluster", Grid(ks=(5,), pcas=(8,), seeds=(0, 1, 2)), config=config)
    s = result["summary"][0]
    print()
    print("== unsupervised domain clusters ==")
    print(format_summary_table(result["summary"]))
    conf = result["confusions"][0]
    print(f"clusters found: {len(conf['clusters'])}; purity {s['purity_mean']:.2f} "
          f"(1.0 = every cluster is one domain; chance is about {1 / len(files):.2f})")
    for d, row in zip(conf["domains"], conf["matrix"]):
        top = max(range(len(row)), key=lambda j: row[j])
        print(f"  {d:<9} -> cluster {conf['clusters'][top]} holds {row[top]}/{sum(row)} of its sentences")
    print(f"outliers (sentences in another domain's cluster): {result['outliers']['count']}")
    print("pictures:")
    for p in result["pictures"]:
        print(f"  {p}")
    summary = {"cluster": result, "select": demo_selection(corpus, gold, out, config)}
    from ..report.html import build_report
    runs = [out / "cluster"] + [out / "select" / m for m in ("cosine", "moore-lewis", "cosine+moore-lewis")]
    report = build_report(runs, rundir.path(out, rundir.REPORT), title="domainsift demo")
    print()
    print(f"report: {Path(report['path']).resolve()}")
    summary["report"] = report
    return summary


def demo_selection(corpus, gold, out: Path, config, target: str = "medical", n_in: int = 8) -> dict:
    """Use the first ``n_in`` sentences of ``target`` as the in-domain set and the rest as the pool."""
    from ..io.corpus import Corpus
    from ..metrics import precision_recall
    from ..rundir import read_selected_ids
    from ..pipeline.combine import combine_runs
    from ..pipeline.run import run as run_spec
    from ..spec import RunSpec
    from ..pipeline.choose import run_select
    from ..spec import Rule

    in_idx = [i for i, g in enumerate(gold) if g == target][:n_in]
    in_set = set(in_idx)
    pool_idx = [i for i in range(len(corpus)) if i not in in_set]
    in_domain = Corpus([corpus.texts[i] for i in in_idx], [corpus.ids[i] for i in in_idx], corpus.files)
    pool = Corpus([corpus.texts[i] for i in pool_idx], [corpus.ids[i] for i in pool_idx], corpus.files)
    gold_ids = [corpus.ids[i] for i in pool_idx if gold[i] == target]
    n = len(gold_ids)
    print()
    print(f"== selection: the {n_in} first '{target}' sentences as the in-domain set, "
          f"pick {n} of {len(pool)} pool sentences ==")
    results = {}
    for method, params in (("cosine", {"cache_dir": config.cache_dir, "progress": config.progress}),
                           ("moore-lewis", {"order": 2, "progress": False}),
                           ("random", {})):
        run = out / "select" / method
        run_spec(RunSpec.single(method, in_domain, pool, run, params=params, seed=0))
        run_select(run, rule=Rule(top=n))
        ids = read_selected_ids(run)
        pr = precision_recall(ids, gold_ids)
        results[method] = pr
        print(f"  {method:<18} precision {pr['precision']:.2f}  ({pr['n_correct']}/{n} medical)  -> {run}/")
    run = out / "select" / "cosine+moore-lewis"
    combine_runs([out / "select" / "cosine", out / "select" / "moore-lewis"], run)
    run_select(run, rule=Rule(top=n))
    pr = precision_recall(read_selected_ids(run), gold_ids)
    results["cosine+moore-lewis"] = pr
    print(f"  {'cosine+moore-lewis':<18} precision {pr['precision']:.2f}  ({pr['n_correct']}/{n} medical)  -> {run}/")
    print("  (an n-gram LM learns little from 8 sentences; Moore-Lewis needs hundreds, and only then does\n"
          "   domainsift combine, the sum of both runs' z-scores, beat either: bench/results/selection.md)")
    best = max(results, key=lambda m: results[m]["precision"])
    from ..advice import advice_text, recommend
    print(f"best on this toy sample (8 in-domain sentences, no fine-tuning in a demo): {best}.")
    print("On your data (a few hundred in-domain lines), as measured in the README's table:")
    print(advice_text())
    print(f"  e.g. {recommend().command()}")
    return results
