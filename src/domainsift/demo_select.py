"""The selection part of the demo: pick the medical sentences out of the built-in sample."""

from __future__ import annotations

from pathlib import Path


def demo_selection(corpus, gold, out: Path, config, target: str = "medical", n_in: int = 8) -> dict:
    """Use the first ``n_in`` sentences of ``target`` as the in-domain set and the rest as the pool."""
    from .corpus import Corpus
    from .evaluate import precision_recall
    from .select.run import read_selected_ids, run_score, run_select

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
        run_score(method, in_domain, pool, run, params, seed=0)
        run_select(run, top=n)
        ids = read_selected_ids(run)
        pr = precision_recall(ids, gold_ids)
        results[method] = pr
        print(f"  {method:<18} precision {pr['precision']:.2f}  ({pr['n_correct']}/{n} medical)  -> {run}/")
    from .select.combine import combine_runs
    run = out / "select" / "cosine+moore-lewis"
    combine_runs([out / "select" / "cosine", out / "select" / "moore-lewis"], run)
    run_select(run, top=n)
    pr = precision_recall(read_selected_ids(run), gold_ids)
    results["cosine+moore-lewis"] = pr
    print(f"  {'cosine+moore-lewis':<18} precision {pr['precision']:.2f}  ({pr['n_correct']}/{n} medical)  -> {run}/")
    print("  (an n-gram LM learns little from 8 sentences; Moore-Lewis needs hundreds, and only then does\n"
          "   domainsift combine, the sum of both runs' z-scores, beat either: bench/results/selection.md)")
    best = max(results, key=lambda m: results[m]["precision"])
    print(f"best: {best}. Try it on your data: domainsift select --method cosine --in-domain MINE.txt "
          f"--pool BIG.txt --top N --out run/")
    return results
