#!/usr/bin/env python3
"""Golden values of Student's t distribution, made with scipy.stats.t.

Writes golden/student_t.json: for every df in DFS and t in TS (and -t) the
survival function P(T > t) and the CDF P(T <= t), and for every df in DFS and
p in PS the inverse survival function (the t with P(T > t) = p). Values are
written as "%.16e" strings (17 significant digits) so no JSON reader rounds
them. tests/test_student_t.c reads the file; tests never run this script.

Also records scipy.stats.ttest_ind(equal_var=False) results for the two
leaderboard comparisons reproduced in tests/test_welch.c, as a second source.

Usage: python3 golden/make_student_t.py
"""

from __future__ import annotations

import json
import platform
import sys
from pathlib import Path

import numpy as np
import scipy
from scipy import stats

OUT = Path(__file__).resolve().parent / "student_t.json"

DFS = [0.5, 0.75, 1, 1.5, 2, 2.5, 3, 4.2, 5, 7.3, 10, 17.5, 30, 100, 1000, 10000,
       1e5, 1e6, 1e8, 1e10, 1e12]
TS = [0.0, 1e-300, 1e-10, 1e-3, 0.1, 0.5, 1, 1.5, 2, 3, 5, 7, 10, 20, 30, 50, 100,
      300, 1000]
PS = [0.5, 0.25, 0.1, 0.05, 0.01, 0.001, 1e-6, 1e-12, 1e-30, 0.9, 0.99]

# Per-seed val_bpb of two published leaderboard comparisons (see tests/test_welch.c).
WELCH = {
    "A2_Muon097_3Seed_vs_SP8192_3LayerRecur": {
        "new": [1.07928348, 1.07996676, 1.08024795],
        "record": [1.08079, 1.08103, 1.08118],
    },
    "MLPClip12_vs_CaseOps_GatedAttn": {
        "new": [1.06356801, 1.0641313, 1.06466993, 1.06509678, 1.06516558],
        "record": [1.06610, 1.06473, 1.06563],
    },
}


def s(x: float) -> str:
    return "%.16e" % float(x)


def distribution_cases() -> list[dict]:
    cases = []
    for df in DFS:
        for t in TS:
            for tt in ([t] if t == 0 else [t, -t]):
                cases.append({"df": s(df), "t": s(tt),
                              "sf": s(stats.t.sf(tt, df)), "cdf": s(stats.t.cdf(tt, df))})
    return cases


def quantile_cases() -> list[dict]:
    return [{"df": s(df), "p": s(p), "isf": s(stats.t.isf(p, df))} for df in DFS for p in PS]


def welch_cases() -> list[dict]:
    out = []
    for name, v in WELCH.items():
        r = stats.ttest_ind(v["record"], v["new"], equal_var=False, alternative="greater")
        out.append({"name": name, "new": v["new"], "record": v["record"],
                    "t": s(r.statistic), "df": s(r.df), "p_zero_margin": s(r.pvalue)})
    return out


def main() -> None:
    doc = {
        "what": "Student t sf/cdf/isf golden values from scipy.stats.t",
        "generator": "python3 golden/make_student_t.py",
        "versions": {"python": platform.python_version(), "scipy": scipy.__version__,
                     "numpy": np.__version__},
        "format": "all numbers are strings, %.16e, parse with strtod",
        "notes": ("scipy returns exactly 0.5 for df=1, t=+-1e-10; the Cauchy closed form "
                  "gives 0.5 -+ atan(1e-10)/pi = 0.5 -+ 3.18e-11, so the ~6.4e-11 relative "
                  "error a correct implementation shows there is scipy's."),
        "distribution": distribution_cases(),
        "quantiles": quantile_cases(),
        "welch_one_sided_greater": welch_cases(),
    }
    OUT.write_text(json.dumps(doc, indent=1) + "\n")
    print(f"wrote {OUT}: {len(doc['distribution'])} sf/cdf, {len(doc['quantiles'])} isf",
          file=sys.stderr)


if __name__ == "__main__":
    main()
