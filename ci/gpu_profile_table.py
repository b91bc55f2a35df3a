"""ncu's raw CSV (ncu --import R --csv --page raw) summed by kernel.

One row per profiled launch: a header row naming the columns, a row of
units, then the launches. Takes "Kernel Name" and gpu__time_duration.sum
(in the unit its units row gives: ns, us, ms or s), and prints per kernel
the launches, total ms, share of the total, mean us and, where the CSV has
ncu's "Grid Size" and "Block Size" columns, the kernel's commonest launch
shape (a GEMM with few blocks on 132 SMs shows there), most time first.
Exit 1 when the file has no such columns or no launch.
    python3 ci/gpu_profile_table.py RAW.csv
"""
import csv
import sys

TO_MS = {"ns": 1e-6, "nsecond": 1e-6, "usecond": 1e-3, "us": 1e-3, "msecond": 1.0, "ms": 1.0, "s": 1e3, "second": 1e3}


def main(path):
    with open(path, newline="") as f:
        rows = [r for r in csv.reader(f)]
    head = next((i for i, r in enumerate(rows) if "Kernel Name" in r and "gpu__time_duration.sum" in r), None)
    if head is None:
        print(f"{path}: no 'Kernel Name' and 'gpu__time_duration.sum' columns", file=sys.stderr)
        return 1
    name_col = rows[head].index("Kernel Name")
    time_col = rows[head].index("gpu__time_duration.sum")
    grid_col = rows[head].index("Grid Size") if "Grid Size" in rows[head] else None
    block_col = rows[head].index("Block Size") if "Block Size" in rows[head] else None
    units = rows[head + 1] if head + 1 < len(rows) else []
    unit = units[time_col].strip() if time_col < len(units) else ""
    if unit in TO_MS:
        scale, first = TO_MS[unit], head + 2
    else:
        try:  # no units row: the launches start at once, in ncu's default unit (ns)
            float(unit.replace(",", ""))
            scale, first = 1e-6, head + 1
        except ValueError:
            print(f"{path}:{head + 2}: unknown unit '{unit}' of gpu__time_duration.sum", file=sys.stderr)
            return 1
    total, per, shapes = 0.0, {}, {}
    for line, r in enumerate(rows[first:], start=first + 1):
        if len(r) <= max(name_col, time_col) or not r[time_col].strip():
            continue
        try:
            ms = float(r[time_col].replace(",", "")) * scale
        except ValueError:
            print(f"{path}:{line}: duration '{r[time_col]}' is not a number", file=sys.stderr)
            return 1
        n, t = per.get(r[name_col], (0, 0.0))
        per[r[name_col]] = (n + 1, t + ms)
        if grid_col is not None and block_col is not None and max(grid_col, block_col) < len(r):
            shape = f"{r[grid_col].replace(' ', '')}x{r[block_col].replace(' ', '')}"
            count = shapes.setdefault(r[name_col], {})
            count[shape] = count.get(shape, 0) + 1
        total += ms
    if not per:
        print(f"{path}: no launch", file=sys.stderr)
        return 1
    print(f"{'kernel':<60} {'launches':>8} {'total_ms':>10} {'share_%':>7} {'mean_us':>9}  grid x block")
    for name, (n, t) in sorted(per.items(), key=lambda kv: -kv[1][1]):
        common = shapes.get(name)
        shape = max(sorted(common), key=lambda k: common[k]) if common else "-"
        print(f"{name[:60]:<60} {n:>8} {t:>10.2f} {100 * t / total:>7.1f} {1000 * t / n:>9.1f}  {shape}")
    print(f"{'total':<60} {sum(n for n, _ in per.values()):>8} {total:>10.2f} {100.0:>7.1f}")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1]))
