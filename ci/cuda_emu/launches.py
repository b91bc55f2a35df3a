"""Rewrite each CUDA launch  kernel<<<grid, block, shared, stream>>>(args)
of a .cu file into  emu_launch(dim3(grid), dim3(block), [&]() { kernel(args); })
for ci/cuda_emu/emu.h.  usage: launches.py IN.cu OUT.cpp"""
import re
import sys


def split_top(text):
    """Split at the commas outside parentheses and brackets."""
    parts, depth, cur = [], 0, ""
    for ch in text:
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += ch
    return parts + [cur.strip()]


def closing_paren(src, open_at):
    depth = 0
    for i in range(open_at, len(src)):
        depth += {"(": 1, ")": -1}.get(src[i], 0)
        if depth == 0:
            return i
    raise SystemExit("cuda-emu: unbalanced launch arguments")


def rewrite(src):
    out, at = [], 0
    for m in re.finditer(r"(\w+)<<<", src):
        if m.start() < at:
            continue
        cfg_end = src.index(">>>", m.end())
        grid, block = split_top(src[m.end():cfg_end])[:2]
        args_open = cfg_end + 3
        if src[args_open] != "(":
            raise SystemExit("cuda-emu: launch without arguments")
        args_close = closing_paren(src, args_open)
        out.append(src[at:m.start()])
        out.append("emu_launch(dim3(%s), dim3(%s), [&]() { %s(%s); })"
                   % (grid, block, m.group(1), src[args_open + 1:args_close]))
        at = args_close + 1
    return "".join(out) + src[at:]


if __name__ == "__main__":
    with open(sys.argv[1]) as f:
        text = f.read()
    with open(sys.argv[2], "w") as f:
        f.write(rewrite(text))
