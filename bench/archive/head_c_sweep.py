"""One-off sweep (issue 48, item 2; 0.26.0): the cascade student's L2 penalty, scikit-learn's ``C``.

Measured the way bench/live/student_source.py measures (its ``measure``: the shared pool split once, the
student fitted on a 17,500-line part scored by the ``finetune --layers 3`` teacher, judged on the other
lines; needed and planned at a 1% selection), with scikit-learn's ``LogisticRegression`` given another ``C``
in this process only (the product had ``C = 1`` hard-wired when this ran; since 0.26.0 it is
``domainsift.select.student.HEAD_C``). Run from the repository root, after student_source.py has saved its
teachers:

    python bench/archive/head_c_sweep.py 0.01 EMEA KDE4 OpenSubtitles

prints one JSON line per target; docs/experiments.md "0.26.0" holds the table it gave at 0.25.0 (C = 3 ...
0.0001). Its figures are not a results file: the product's rows at its chosen C are in
bench/results/student_source.md.
"""

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "live"))

import sklearn.linear_model as lm  # noqa: E402

ORIGINAL = lm.LogisticRegression
C = float(sys.argv[1])


def with_c(*args, **kwargs):
    return ORIGINAL(*args, **{**kwargs, "C": C})


lm.LogisticRegression = with_c  # the student imports it when it fits

import student_source  # noqa: E402

for target in sys.argv[2:]:
    row = student_source.measure("shared", target, [0.01], 3, sources=("fine-tuned",))[0]
    print(json.dumps({"C": C, "target": target, "needed": row["needed"], "planned": row["planned"],
                      "fit": row["student_fit_seconds"]}), flush=True)
