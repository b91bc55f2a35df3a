"""Why each profiled kernel takes its time, from ncu's raw CSV
(ncu --import R --csv --page raw of ci/gpu-stalls.sh's report).

One row per profiled launch: a header row naming the metrics, a row of
units, then the launches. Per kernel (matched by its bare name, as in
ci/gpu_profile_table.py), averaged over its launches, it prints:
  - launches, mean duration (gpu__time_duration.sum), registers a thread
    (launch__registers_per_thread) and the warps resident against the
    SM's maximum (sm__warps_active.avg.pct_of_peak_sustained_active);
  - the share of cycles in which a scheduler issued an instruction
    (smsp__issue_active.avg.pct_of_peak_sustained_active): near 100 the
    kernel is bound by its instruction count, far below it by waiting;
  - what the warps waited for: ncu's stall reasons, each as a share of
    all of them (the columns smsp__warp_issue_stalled_REASON_per_warp_
    active.pct, or where absent smsp__average_warps_issue_stalled_REASON_
    per_issue_active.ratio, or else the sampled smsp__pcsamp_warps_issue_
    stalled_REASON), the largest first. "selected" (the warp was issuing)
    is left out;
  - the busiest pipes (the columns sm__pipe_PIPE_cycles_active and
    sm__inst_executed_pipe_PIPE, .avg.pct_of_peak_sustained_active), each
    as a percentage of its peak, the largest first: a pipe near 100 is
    the bound (fp64 for the exponentials, tensor for the products).
Any of these a CSV lacks is printed as "-" (an older ncu, another
section set), and a last line then lists the metrics the CSV has, so a
lease's output says what to ask for; no duration column or no launch is
an error (exit 1), naming the metrics too.
    python3 ci/gpu_stalls_table.py RAW.csv [TOP]
TOP (default 5) is how many stall reasons and pipes a kernel lists.
"""
import csv
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpu_profile_table import TO_MS, bare_name  # noqa: E402

STALL_FAMILIES = (
    re.compile(r"^smsp__warp_issue_stalled_([a-z0-9_]+?)_per_warp_active\.pct$"),
    re.compile(r"^smsp__average_warps_issue_stalled_([a-z0-9_]+?)_per_issue_active\.ratio$"),
    re.compile(r"^smsp__pcsamp_warps_issue_stalled_([a-z0-9_]+?)(?<!_not_issued)$"),
)
PIPE = re.compile(r"^sm__(pipe_([a-z0-9_]+?)_cycles_active|inst_executed_pipe_([a-z0-9_]+?))"
                  r"\.avg\.pct_of_peak_sustained_active$")
SCALARS = {
    "registers": "launch__registers_per_thread",
    "warps_pct": "sm__warps_active.avg.pct_of_peak_sustained_active",
    "issue_pct": "smsp__issue_active.avg.pct_of_peak_sustained_active",
}


def number(text):
    """ncu's cell as a float, or None ('n/a', empty)."""
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return None


def columns(header):
    """The columns this table reads: {key: index}, stall reasons and pipes
    as {label: index}."""
    stalls = {}
    for family in STALL_FAMILIES:
        stalls = {m.group(1): i for i, h in enumerate(header) if (m := family.match(h))}
        if stalls:
            break
    stalls.pop("selected", None)
    pipes = {}
    for i, h in enumerate(header):
        m = PIPE.match(h)
        if m:
            pipes[f"{m.group(2)} cycles" if m.group(2) else f"{m.group(3)} inst"] = i
    scalars = {k: header.index(v) for k, v in SCALARS.items() if v in header}
    return scalars, stalls, pipes


def top(means, n):
    """'name 31%, name 22%' of the n largest values (as shares if the
    values are to be normalised by the caller)."""
    items = sorted(means.items(), key=lambda kv: (-kv[1], kv[0]))[:n]
    return ", ".join(f"{k} {v:.0f}%" for k, v in items) if items else "-"


def main(path, n_top=5):
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    head = next((i for i, r in enumerate(rows) if "Kernel Name" in r and "gpu__time_duration.sum" in r), None)
    if head is None:
        have = sorted({h for r in rows[:1] for h in r if "__" in h})
        print(f"{path}: no 'Kernel Name' and 'gpu__time_duration.sum' columns (metrics: "
              f"{', '.join(have[:40]) or 'none'})", file=sys.stderr)
        return 1
    header = rows[head]
    name_col, time_col = header.index("Kernel Name"), header.index("gpu__time_duration.sum")
    units = rows[head + 1] if head + 1 < len(rows) else []
    unit = units[time_col].strip() if time_col < len(units) else ""
    if unit in TO_MS:
        scale, first = TO_MS[unit], head + 2
    elif number(unit) is not None:  # no units row: ncu's default unit, ns
        scale, first = 1e-6, head + 1
    else:
        print(f"{path}:{head + 2}: unknown unit '{unit}' of gpu__time_duration.sum", file=sys.stderr)
        return 1
    scalars, stalls, pipes = columns(header)
    per = {}  # bare name -> {"n": launches, "ms": total, metric key -> [sum, count]}
    for line, r in enumerate(rows[first:], start=first + 1):
        if len(r) != len(header):
            continue
        ms = number(r[time_col])
        if ms is None:
            print(f"{path}:{line}: the duration '{r[time_col]}' is not a number", file=sys.stderr)
            return 1
        k = per.setdefault(bare_name(r[name_col]), {"n": 0, "ms": 0.0})
        k["n"] += 1
        k["ms"] += ms * scale
        for key, col in [*scalars.items(), *(("s:" + s, c) for s, c in stalls.items()),
                         *(("p:" + p, c) for p, c in pipes.items())]:
            v = number(r[col])
            if v is not None:
                acc = k.setdefault(key, [0.0, 0])
                acc[0] += v
                acc[1] += 1
    if not per:
        print(f"{path}: no launch", file=sys.stderr)
        return 1

    def mean(k, key):
        acc = k.get(key)
        return acc[0] / acc[1] if acc and acc[1] else None

    def fmt(v, spec):
        return "-" if v is None else format(v, spec)

    for name, k in sorted(per.items(), key=lambda kv: -kv[1]["ms"]):
        print(f"{name}: {k['n']} launches, mean {1000 * k['ms'] / k['n']:,.1f} us, "
              f"{fmt(mean(k, 'registers'), '.0f')} registers, "
              f"warps resident {fmt(mean(k, 'warps_pct'), '.1f')}% of the SM's maximum")
        print(f"  issuing: {fmt(mean(k, 'issue_pct'), '.1f')}% of a scheduler's cycles")
        waits = {s: mean(k, "s:" + s) for s in stalls}
        waits = {s: v for s, v in waits.items() if v is not None}
        total = sum(waits.values())
        shares = {s: 100 * v / total for s, v in waits.items()} if total > 0 else {}
        print(f"  waiting for: {top(shares, n_top)}")
        busy = {p: mean(k, "p:" + p) for p in pipes}
        print(f"  pipes busy: {top({p: v for p, v in busy.items() if v is not None}, n_top)}")
    if not stalls or not pipes:  # say what the report has, to ask for the right metrics next time
        have = [h for h in header if "__" in h]
        print(f"(no {'stall' if not stalls else 'pipe'} columns among the report's {len(have)} metrics: "
              f"{', '.join(have[:60])})")
    return 0


if __name__ == "__main__":
    args = sys.argv[1:]
    if len(args) not in (1, 2) or (len(args) == 2 and not args[1].isdigit()):
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit(main(args[0], int(args[1]) if len(args) == 2 else 5))
