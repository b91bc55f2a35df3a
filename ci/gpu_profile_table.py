"""ncu's raw CSV (ncu --import R --csv --page raw) summed by kernel.

One row per profiled launch: a header row naming the columns, a row of
units, then the launches. Takes "Kernel Name" and gpu__time_duration.sum
(in the unit its units row gives: ns, us, ms or s), and prints per kernel
the launches, total ms, share of the total, mean us and, where the CSV has
ncu's "Grid Size" and "Block Size" columns, the kernel's commonest launch
shape (a GEMM with few blocks on 132 SMs shows there), most time first.
Where the CSV also has dram__bytes_read.sum and dram__bytes_write.sum
(ci/gpu-profile.sh's PROFILE_BYTES=1), each kernel's DRAM bytes and their
rate, GB/s over its own time, are printed too (ncu's byte units: byte,
Kbyte, Mbyte, Gbyte, Tbyte, powers of 1000).
Exit 1 when the file has no such columns or no launch.

With --attention GROUP,HEAD_DIM,PRECISION (query heads per KV head, the
head width, mixed or fp32) it also prints each attention kernel's
throughput, counted from every launch's grid with the model of
docs/GPU-RUNS.md ("What the speed aim needs"): a kernel's tiles are R
rows (16 on the CUDA cores, kernels/attention.cu; 64 on the tensor
cores, kernels/attention_mma.cu), so a launch of grid (X, Y, Z) covers
sequences of T = R X (exact where T is a multiple of R, an upper bound
otherwise), Z sequences and Y heads (Y x GROUP query heads for dkv); it
visits Z heads T (T + 1) / 2 causal pairs, and per pair takes dots and
sums of HEAD_DIM multiply-adds (2 HEAD_DIM flops each): forward 3 (4 in
fp32, whose probabilities wait for the finished sum), dq 3, dkv 4 (the
tensor-core kernels also multiply the masked half of their diagonal
tiles; that work is not counted). The share is of the units' peak: 67
TFLOP/s float32 on the CUDA cores, 989 TFLOP/s dense bf16 on an H100's
tensor cores (an H200's are the same chip). ncu's names may carry
template arguments and parameters ("void k<64>(float *, ...)"); a
kernel is matched by its bare name.
    python3 ci/gpu_profile_table.py RAW.csv [--attention GROUP,HEAD_DIM,PRECISION]
"""
import csv
import sys

import re

CUDA_CORES_TFLOPS, TENSOR_TFLOPS = 67.0, 989.0
# bare name: (tile rows, dots and sums of HEAD_DIM terms per causal pair
# in mixed and fp32, the unit's peak TFLOP/s, its name)
ATT_KERNELS = {
    "attention_forward_kernel": (16, (3, 4), CUDA_CORES_TFLOPS, "CUDA cores"),
    "attention_dq_kernel": (16, (3, 3), CUDA_CORES_TFLOPS, "CUDA cores"),
    "attention_dkv_kernel": (16, (4, 4), CUDA_CORES_TFLOPS, "CUDA cores"),
    "attention_mma_forward_kernel": (64, (3, 3), TENSOR_TFLOPS, "tensor cores"),
    "attention_mma_dq_kernel": (64, (3, 3), TENSOR_TFLOPS, "tensor cores"),
    "attention_mma_dkv_kernel": (64, (4, 4), TENSOR_TFLOPS, "tensor cores"),
}


def bare_name(name):
    """'void k<64>(float *, int)' -> 'k'."""
    m = re.match(r"\s*(?:void\s+)?([A-Za-z_]\w*)", name)
    return m.group(1) if m else name

TO_BYTES = {"byte": 1.0, "Kbyte": 1e3, "Mbyte": 1e6, "Gbyte": 1e9, "Tbyte": 1e12}
TO_MS = {"ns": 1e-6, "nsecond": 1e-6, "usecond": 1e-3, "us": 1e-3, "msecond": 1.0, "ms": 1.0, "s": 1e3, "second": 1e3}


def parse_attention(arg):
    """GROUP,HEAD_DIM,PRECISION into (group, head_dim, fp32), or None."""
    parts = arg.split(",")
    if len(parts) != 3 or not parts[0].isdigit() or not parts[1].isdigit() or parts[2] not in ("mixed", "fp32"):
        return None
    group, hd = int(parts[0]), int(parts[1])
    return (group, hd, parts[2] == "fp32") if group > 0 and hd > 0 else None


def attention_flops(name, grid, att):
    """The model's flops of one attention launch, or None."""
    kernel = ATT_KERNELS.get(bare_name(name))
    dims = grid.strip("()").replace(" ", "").split(",")
    if kernel is None or len(dims) != 3 or not all(d.isdigit() for d in dims):
        return None
    tile, terms = kernel[0], kernel[1]
    group, hd, fp32 = att
    x, y, z = (int(d) for d in dims)
    t = tile * x
    heads = y * group if bare_name(name).endswith("dkv_kernel") else y
    return z * heads * t * (t + 1) // 2 * terms[1 if fp32 else 0] * 2 * hd


def main(path, att=None):
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
    byte_cols = []  # (column, bytes per unit) of the DRAM counters, when asked for
    for metric in ("dram__bytes_read.sum", "dram__bytes_write.sum"):
        if metric in rows[head]:
            col = rows[head].index(metric)
            u = units[col].strip() if first == head + 2 and col < len(units) else "byte"
            if u not in TO_BYTES:
                print(f"{path}:{head + 2}: unknown unit '{u}' of {metric}", file=sys.stderr)
                return 1
            byte_cols.append((col, TO_BYTES[u]))
    total, per, shapes, flops, moved = 0.0, {}, {}, {}, {}
    for line, r in enumerate(rows[first:], start=first + 1):
        if len(r) <= max(name_col, time_col) or not r[time_col].strip():
            continue
        try:
            ms = float(r[time_col].replace(",", "")) * scale
            nbytes = sum(float(r[c].replace(",", "")) * f for c, f in byte_cols if c < len(r))
        except ValueError:
            print(f"{path}:{line}: a duration or byte count is not a number", file=sys.stderr)
            return 1
        n, t = per.get(r[name_col], (0, 0.0))
        per[r[name_col]] = (n + 1, t + ms)
        moved[r[name_col]] = moved.get(r[name_col], 0.0) + nbytes
        if grid_col is not None and block_col is not None and max(grid_col, block_col) < len(r):
            shape = f"{r[grid_col].replace(' ', '')}x{r[block_col].replace(' ', '')}"
            count = shapes.setdefault(r[name_col], {})
            count[shape] = count.get(shape, 0) + 1
            f = attention_flops(r[name_col], r[grid_col], att) if att else None
            if f is not None:
                flops[r[name_col]] = flops.get(r[name_col], 0) + f
        total += ms
    if not per:
        print(f"{path}: no launch", file=sys.stderr)
        return 1
    dram = f" {'dram_GB':>9} {'GB/s':>7}" if byte_cols else ""
    print(f"{'kernel':<60} {'launches':>8} {'total_ms':>10} {'share_%':>7} {'mean_us':>9}{dram}  grid x block")
    for name, (n, t) in sorted(per.items(), key=lambda kv: -kv[1][1]):
        common = shapes.get(name)
        shape = max(sorted(common), key=lambda k: common[k]) if common else "-"
        rate = f" {moved[name] / 1e9:>9.3f} {moved[name] / 1e6 / t if t > 0 else 0.0:>7.0f}" if byte_cols else ""
        print(f"{name[:60]:<60} {n:>8} {t:>10.2f} {100 * t / total:>7.1f} {1000 * t / n:>9.1f}{rate}  {shape}")
    rate = ""
    if byte_cols:  # the mean column left empty, then the bytes and their rate over all
        all_bytes = sum(moved.values())
        rate = f" {'':>9} {all_bytes / 1e9:>9.3f} {all_bytes / 1e6 / total if total > 0 else 0.0:>7.0f}"
    print(f"{'total':<60} {sum(n for n, _ in per.values()):>8} {total:>10.2f} {100.0:>7.1f}{rate}")
    if att:
        print("attention (flops counted from the grids, against the peak of the unit it runs on):")
        for name in sorted(flops, key=lambda k: -per[k][1]):
            _, _, peak, unit = ATT_KERNELS[bare_name(name)]
            tflops = flops[name] / (per[name][1] * 1e-3) / 1e12
            print(f"  {bare_name(name):<28} {flops[name] / 1e12:>9.3f} TFLOP {tflops:>8.2f} TFLOP/s "
                  f"{100 * tflops / peak:>6.1f}% of {peak:g} ({unit})")
        if not flops:
            print("  no attention launch with a grid")
    return 0


if __name__ == "__main__":
    args = sys.argv[1:]
    att = None
    if len(args) == 3 and args[1] == "--attention":
        att = parse_attention(args[2])
        if att is None:
            print(f"--attention wants GROUP,HEAD_DIM,mixed|fp32, not '{args[2]}'", file=sys.stderr)
            sys.exit(2)
        args = args[:1]
    if len(args) != 1:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit(main(args[0], att))
