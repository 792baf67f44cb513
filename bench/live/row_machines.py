"""Give each row of the papers' BLEU tables the machine it was measured on (issue 88: every row with its command,
version, CPU and seed). Rows written since this script carry ``machine`` from the run that made them
(``_common.add_rows``); an older row gets the machine in the header of the results file of the first commit
that holds it (the run that made a row wrote that header beside it), and ``machine_from`` names that commit.
Rows the history does not hold are left without one. Only the ``rows`` of the JSON files change.

    python bench/live/row_machines.py [nmt_judge guda nmt_sampling]
"""

from __future__ import annotations

import argparse
import json
import subprocess

from _common import RESULTS, ROOT, locked

KEYS = ("target", "new", "row", "method", "policy", "seed", "version", "settings")  # a row's identity


def identity(row: dict) -> str:
    return json.dumps([row.get(k) for k in KEYS])


def first_machines(name: str) -> dict[str, tuple[str, str]]:
    """Each row identity of ``bench/results/<name>.json``'s history -> (machine, commit) of the first commit
    that holds it."""
    path = f"bench/results/{name}.json"
    commits = subprocess.run(["git", "log", "--reverse", "--format=%h", "--", path], cwd=ROOT,
                             capture_output=True, text=True, check=True).stdout.split()
    found: dict = {}
    for commit in commits:
        text = subprocess.run(["git", "show", f"{commit}:{path}"], cwd=ROOT, capture_output=True, text=True).stdout
        if not text:
            continue
        payload = json.loads(text)
        for r in payload.get("rows", []):
            found.setdefault(identity(r), (payload.get("machine"), commit))
    return found


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("names", nargs="*", default=["nmt_judge", "guda", "nmt_sampling"])
    args = ap.parse_args()
    from domainsift.io import save_json
    for name in args.names:
        history = first_machines(name)
        with locked(name):  # as _common.add_rows: a running benchmark waits
            payload = json.loads((RESULTS / f"{name}.json").read_text())
            filled = 0
            for r in payload["rows"]:
                seen = history.get(identity(r))
                if "machine" not in r and seen and seen[0]:
                    r["machine"], r["machine_from"] = seen[0], f"the header of commit {seen[1]}"
                    filled += 1
            save_json(RESULTS / f"{name}.json", payload)
        left = sum("machine" not in r for r in payload["rows"])
        print(f"{name}: {filled} rows given their machine, {left} without one")


if __name__ == "__main__":
    main()
