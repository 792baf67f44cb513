"""What a language outside the encoder costs (docs/languages.md): Domain-Cosine on the shared pool's
German side against its English side, with MiniLM (trained on English only) and with the multilingual
encoder (USE-m, German among its 16 languages).

    python bench/live/languages.py          # writes bench/results/languages.md

Pool: <D>.train.<lang> of the seven domains (35,000 lines); in-domain set: <D>.test.<lang> (500 lines)
for the five classic targets; select N = 5,000; precision = the share of the selection from
<D>.train.<lang>. Only the product's public API (run, RunSpec, run_select, evaluate_run).
"""

from __future__ import annotations

import domainsift as ds
import argparse
import json
import time
from pathlib import Path

from _common import CLASSIC, ROOT, SEVEN, data_file, write_results

WORK = ROOT / "bench" / "work" / "languages"
N = 5000
ENCODERS = {"minilm": "all-MiniLM-L6-v2 (English only)", "multilingual": "USE-m (16 languages)"}


def main() -> None:
    from domainsift.io.corpus import read_corpus
    from domainsift.jobs.evaluate import evaluate_run
    from domainsift import Rule, run_select
    from domainsift.languages import identify
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--langs", nargs="+", default=["en", "de"])
    ap.add_argument("--encoders", nargs="+", default=list(ENCODERS), choices=list(ENCODERS))
    args = ap.parse_args()
    rows = []
    for lang in args.langs:
        pool = read_corpus([data_file(d, "train", lang) for d in SEVEN])
        for enc in args.encoders:
            for target in CLASSIC:
                run_dir = WORK / lang / enc / target
                done = run_dir / "bench.json"
                if done.exists():
                    rows.append(json.loads(done.read_text()))
                    continue
                in_domain = read_corpus([data_file(target, "test", lang)])
                t = time.time()
                ds.run(ds.RunSpec.single("cosine", in_domain, pool, run_dir, params={"embedder": enc, "progress": False}, seed=0, overwrite=True)).signature
                run_select(run_dir, rule=Rule(top=N))
                ev = evaluate_run(run_dir, [data_file(target, "train", lang)])
                found = identify(in_domain.texts)
                row = {"lang": lang, "encoder": enc, "target": target, "precision": round(ev["precision"], 4),
                       "seconds": round(time.time() - t, 1), "identified": found[0] if found else None}
                done.write_text(json.dumps(row))
                rows.append(row)
                print(row)
    table = ["# What a language outside the encoder costs", "",
             "Domain-Cosine, the shared pool (35,000 lines of seven domains) in each language, 500 in-domain "
             "lines, N = 5,000, precision against the oracle; seed 0.", "",
             "| encoder | language | " + " | ".join(CLASSIC) + " | mean |", "|---|---|" + "---|" * (len(CLASSIC) + 1)]
    for enc in args.encoders:
        for lang in args.langs:
            got = {r["target"]: r["precision"] for r in rows if r["encoder"] == enc and r["lang"] == lang}
            if len(got) == len(CLASSIC):
                mean = sum(got.values()) / len(got)
                table.append(f"| {ENCODERS[enc]} | {lang} | " + " | ".join(f"{got[t]:.4f}" for t in CLASSIC) +
                             f" | {mean:.4f} |")
    write_results("languages", {"rows": rows}, "\n".join(table) + "\n")
    print("\n".join(table))


if __name__ == "__main__":
    main()
