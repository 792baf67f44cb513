"""Why paper 003's contrastive layer did not carry selection: how well each alignment keeps translations.

For each classic target D, every alignment is fitted on the de-en train pairs of the six other
domains (as in bench/crosslingual.py), then the 500 German test sentences of a domain retrieve their
English translations among that domain's 500 English test sentences (nearest neighbour by cosine in
the aligned space; accuracy = share that find their own translation). Reported: the target's own
(unseen) domain, and the mean over the six bitext domains' test pairs. Alignments: raw vectors,
per-language centring, the product's linear map (``LinearAlignment``), an orthogonal (Procrustes)
map after centring, paper 003's contrastive residual layer with k = 5 and k = 1
(bench/crosslingual_variants.py). Seed 0.

    python bench/crosslingual_retrieval.py
"""

from __future__ import annotations

import numpy as np
from _common import CLASSIC, LANG, PAIR, SEVEN, data_file, write_results

from domainsift.io.corpus import read_corpus
from domainsift.select.crosslingual import _unit as unit


def main() -> None:
    import torch
    from crosslingual_variants import CentreAlignment, ProcrustesAlignment

    from domainsift.embed import EmbedConfig
    from domainsift.select.crosslingual import LinearAlignment, NoAlignment, train_contrastive
    emb = EmbedConfig(progress=False, seed=0).build()
    vec = {(d, s, lang): np.asarray(emb.encode(read_corpus([data_file(d, s, lang)]).texts), dtype=np.float32)
           for d in SEVEN for s in ("train", "test") for lang in (LANG, "en")}
    aligners = {"raw": lambda xa, xb: NoAlignment(), "centre": CentreAlignment,
                "linear (the product)": LinearAlignment, "procrustes": ProcrustesAlignment,
                "contrastive k=5": lambda xa, xb: train_contrastive(torch, xa, xb, np.random.default_rng(0), 0, True, 5, lr=1e-3),
                "contrastive k=1": lambda xa, xb: train_contrastive(torch, xa, xb, np.random.default_rng(0), 0, True, 1, lr=1e-3)}
    rows = []
    for target in CLASSIC:
        xa = np.concatenate([vec[(d, "train", LANG)] for d in SEVEN if d != target])
        xb = np.concatenate([vec[(d, "train", "en")] for d in SEVEN if d != target])
        for name, make in aligners.items():
            torch.manual_seed(0)
            al = make(xa, xb)
            acc = {}
            for d in SEVEN:
                a, b = unit(al.a(vec[(d, "test", LANG)])), unit(al.b(vec[(d, "test", "en")]))
                acc[d] = float(np.mean(np.argmax(a @ b.T, 1) == np.arange(len(a))))
            rows.append({"target": target, "alignment": name, "unseen": acc[target],
                         "bitext_domains": float(np.mean([v for d, v in acc.items() if d != target])), "per_domain": acc})
            print(f"{target:>14} {name:<22} unseen {acc[target]:.3f}  bitext domains {rows[-1]['bitext_domains']:.3f}",
                  flush=True)
    lines = ["# Cross-lingual retrieval: does an alignment keep translations together?", "",
             f"Alignment fitted on the {PAIR} train pairs of the six domains other than the target; {LANG} test "
             "sentences retrieve their English translations among 500 (nearest neighbour, cosine). 'unseen': "
             "the target's own test pairs; 'bitext': mean over the six other domains' test pairs. Encoder "
             "all-MiniLM-L6-v2, seed 0.", "",
             "| alignment | " + " | ".join(f"{t} unseen | {t} bitext" for t in CLASSIC) + " | mean unseen | mean bitext |",
             "|---|" + "---|" * (2 * len(CLASSIC) + 2)]
    for name in aligners:
        rs = [next(r for r in rows if r["target"] == t and r["alignment"] == name) for t in CLASSIC]
        lines.append(f"| {name} | " + " | ".join(f"{r['unseen']:.3f} | {r['bitext_domains']:.3f}" for r in rs)
                     + f" | {np.mean([r['unseen'] for r in rs]):.3f} | {np.mean([r['bitext_domains'] for r in rs]):.3f} |")
    write_results("crosslingual_retrieval" if PAIR == "de-en" else f"crosslingual_retrieval_{PAIR}", {"pair": PAIR, "rows": rows}, "\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
