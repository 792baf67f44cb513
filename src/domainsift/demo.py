"""The offline demo on the built-in sample (five domains, written for this project)."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

DEMO_DOMAINS = ("medical", "legal", "software", "dialogue", "cooking")


def demo_files() -> list[str]:
    """Paths of the built-in sample files, one per domain."""
    base = resources.files("domainsift") / "data" / "demo"
    return [str(base / f"{d}.txt") for d in DEMO_DOMAINS]


def run_demo(out_dir: str = "demo-out", progress: bool = True) -> dict:
    """Cluster the sample with the default encoder and print a short summary."""
    from .cli import file_labels
    from .corpus import read_corpus
    from .pipeline import EmbedConfig, format_summary_table, run_cluster

    out = Path(out_dir)
    files = demo_files()
    corpus = read_corpus(files)
    gold = file_labels(corpus.ids, corpus.files)
    print(f"domainsift demo: {len(corpus)} sentences from {len(files)} built-in domains "
          f"({', '.join(DEMO_DOMAINS)})")
    print("encoding with all-MiniLM-L6-v2 (offline) and clustering with a GMM ...")
    config = EmbedConfig(progress=progress, cache_dir=str(out / "cache"))
    # a few dozen sentences per domain: a full-covariance GMM wants few dimensions
    result = run_cluster(corpus, gold, out / "cluster", ks=(5,), pcas=(8,), seeds=(0, 1, 2),
                         config=config)
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
    summary = {"cluster": result}
    try:
        from .demo_select import demo_selection
    except ImportError:  # selection not built yet
        return summary
    summary["select"] = demo_selection(corpus, gold, out, config)
    return summary
