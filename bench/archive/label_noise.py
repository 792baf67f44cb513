"""Label noise in the selection benchmark: pool lines whose text is in more than one domain's file.

The benchmark's gold label of a pool line is the file it came from. A line whose text also occurs in
another domain's file ("Yes.", "Thank you.", a menu item) is in-domain by one file and out of domain
by the other, whatever a method does. Per target:

* ``shared``: the target's pool lines whose text occurs in another domain's file, exactly and after
  lower-casing, stripping punctuation and folding whitespace (``normalised``);
* among Domain-Finetune's wrong selections (the finished ``finetune-default`` runs of
  bench/live/selection.py, seeds 0-2, N = 5,000), the share whose text also occurs in the target's own
  file: selections the gold labels call wrong although the same text is in-domain.

    python bench/archive/label_noise.py
"""

from __future__ import annotations

import json
import os
import re
import unicodedata

import numpy as np
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "live"))  # the shared helpers: bench/live/_common.py
from _common import CLASSIC, ROOT, SEVEN, data_file, write_results

from domainsift.io.corpus import read_corpus
from domainsift.rundir import load_scores

WORK = ROOT / "bench" / "work" / "selection"
RUNS = ("finetune-default", "finetune-default-seed-1", "finetune-default-seed-2")
N = 5000
_PUNCT = re.compile(r"[^\w\s]", re.UNICODE)


def normalise(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).lower()
    return " ".join(_PUNCT.sub(" ", text).split())


def main() -> None:
    pool = read_corpus([data_file(d, "train") for d in SEVEN])
    files = [os.path.realpath(data_file(d, "train")) for d in SEVEN]
    domain_of = {f: d for f, d in zip(files, SEVEN)}
    dom = np.array([domain_of[os.path.realpath(f)] for f, _ in pool.ids])
    texts = pool.texts
    keys = {"exact": texts, "normalised": [normalise(t) for t in texts]}
    domains_with = {k: {} for k in keys}  # text -> the set of domains whose file holds it
    for k, vals in keys.items():
        for v, d in zip(vals, dom):
            domains_with[k].setdefault(v, set()).add(d)
    rows = []
    for target in CLASSIC:
        mine = np.flatnonzero(dom == target)
        row = {"target": target, "lines": int(len(mine))}
        for k, vals in keys.items():
            row[f"shared_{k}"] = int(sum(len(domains_with[k][vals[i]]) > 1 for i in mine))
        wrong = {k: [] for k in keys}
        for label in RUNS:
            run_dir = WORK / target / label
            if not (run_dir / "scores.npy").exists():
                continue
            run = load_scores(run_dir)
            assert [tuple(i) for i in run.ids] == [tuple(i) for i in pool.ids], "the run read the pool in another order"
            top = np.argsort(-np.asarray(run.scores), kind="stable")[:N]
            bad = top[dom[top] != target]
            for k, vals in keys.items():
                wrong[k].append((len(bad), int(sum(target in domains_with[k][vals[i]] for i in bad))))
        row["finetune_seeds"] = len(wrong["exact"])
        for k in keys:
            if wrong[k]:
                row["wrong"] = float(np.mean([w for w, _ in wrong[k]]))
                row[f"wrong_in_target_{k}"] = float(np.mean([s for _, s in wrong[k]]))
        rows.append(row)
    lines = ["# Label noise in the selection benchmark", "",
             "Pool: the seven domains' train files (5,000 lines each). shared: the target's lines whose text is also in "
             "another domain's file (exact; normalised: lower-cased, punctuation stripped, whitespace folded). "
             "Finetune's wrong selections: selected lines (N = 5,000) from another domain's file, mean over the "
             "finished seeds of `finetune-default`; 'same text in the target' is how many of them are a text the "
             "target's own file also holds.", "",
             "| target | shared (exact) | shared (normalised) | finetune seeds | wrong selections | same text in the target "
             "(exact) | (normalised) |", "|---|---|---|---|---|---|---|"]
    for r in rows:
        w = r.get("wrong")
        cell = (lambda k: f"{r[k]:.1f} ({r[k] / w:.1%})" if w else "-")
        lines.append(f"| {r['target']} | {r['shared_exact']} ({r['shared_exact'] / r['lines']:.1%}) | "
                     f"{r['shared_normalised']} ({r['shared_normalised'] / r['lines']:.1%}) | {r['finetune_seeds']} | "
                     f"{w:.0f} | {cell('wrong_in_target_exact')} | {cell('wrong_in_target_normalised')} |"
                     if w else f"| {r['target']} | {r['shared_exact']} | {r['shared_normalised']} | 0 | - | - | - |")
    write_results("label_noise", {"rows": rows}, "\n".join(lines) + "\n")
    print(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
