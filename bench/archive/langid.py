"""Which language-identification library for the coverage warning (issue 50, item 3): accuracy per
sentence and per set (a majority vote over 100 lines), and lines per second, on the shared pool's test
files in both languages (German and English, seven domains: short KDE4 menu strings to long JRC-Acquis
sentences).

    python bench/archive/langid.py            # writes bench/results/langid.md

Candidates, each with its model inside its wheel: py3langid (langid.py's model, NumPy), pycld2 (Google's
CLD2, C++), lingua-language-detector (Rust; its high-accuracy mode, all languages).
"""

from __future__ import annotations

import os
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "live"))
from _common import write_results  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
DATA = Path(os.environ.get("DOMAINSIFT_DATA", ROOT.parent / "shared" / "data" / "opus-multidomain" / "de-en"))
DOMAINS = ["EMEA", "JRC-Acquis", "KDE4", "OpenSubtitles", "QED", "TED2020", "Tanzil"]
PER_FILE = 300  # lines per domain and language
SET = 100       # lines per majority vote


def lines(domain: str, lang: str) -> list[str]:
    p = DATA / f"{domain}.test.{lang}"
    if not p.exists():
        return []
    return [t for t in p.read_text(encoding="utf-8").splitlines()[:PER_FILE] if t.strip()]


def detectors():
    import py3langid
    import pycld2
    from lingua import LanguageDetectorBuilder
    lingua_det = LanguageDetectorBuilder.from_all_languages().build()

    def cld2(t):
        ok, _, details = pycld2.detect(t)
        return details[0][1] if ok and details[0][1] != "un" else "und"

    def lingua_code(t):
        lang = lingua_det.detect_language_of(t)
        return lang.iso_code_639_1.name.lower() if lang is not None else "und"

    return {"py3langid": lambda t: py3langid.classify(t)[0], "pycld2": cld2, "lingua": lingua_code}


def main() -> None:
    data = {(d, lang): lines(d, lang) for d in DOMAINS for lang in ("de", "en")}
    data = {k: v for k, v in data.items() if v}
    rows = []
    for name, detect in detectors().items():
        correct = total = 0
        sets_ok = sets = 0
        t0 = time.perf_counter()
        for (d, lang), texts in data.items():
            got = [detect(t) for t in texts]
            correct += sum(g == lang for g in got)
            total += len(got)
            for s in range(0, len(got) - SET + 1, SET):
                sets += 1
                sets_ok += Counter(got[s:s + SET]).most_common(1)[0][0] == lang
        secs = time.perf_counter() - t0
        rows.append((name, correct / total, sets_ok, sets, total / secs))
    out = ["# Language identification for the coverage warning", "",
           f"Data: the first {PER_FILE} lines of each `<domain>.test.{{de,en}}` ({len(data)} files); a set is "
           f"{SET} consecutive lines of one file, judged by majority vote. One process, all three in turn.", "",
           "| library | sentence accuracy | sets right | lines/s |", "|---|---|---|---|"]
    out += [f"| {n} | {acc:.4f} | {ok}/{k} | {rate:,.0f} |" for n, acc, ok, k, rate in rows]
    write_results("langid", {"rows": [dict(zip(("library", "accuracy", "sets_right", "sets", "lines_per_s"), r))
                                      for r in rows]}, "\n".join(out) + "\n")
    print("\n".join(out))


if __name__ == "__main__":
    main()
