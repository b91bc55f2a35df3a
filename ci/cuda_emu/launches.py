"""Rewrite each CUDA launch  kernel<<<grid, block, shared, stream>>>(args)
(or a template's  kernel<ARGS><<<...>>>(args)) of a .cu file into
  emu_launch(dim3(grid), dim3(block), shared, stream, bounds, "kernel", kernel, args)
for ci/cuda_emu/emu.h: shared and stream default to 0 as in CUDA, and
bounds is the first argument of the kernel's __launch_bounds__ in the same
file (1024, the hardware's limit, without one), so the stand-in refuses
a block the GPU would refuse.
Each __shared__ declaration  __shared__ T a[N], b[M];  is followed by
  emu_shared_fresh(a, sizeof a, "a"); emu_shared_fresh(b, sizeof b, "b");
which fills the array with poison bytes at each block's first thread to
reach it (ci/cuda_emu/grid.cpp): a GPU's shared memory starts as
garbage, the stand-in's static arrays as the previous block's values,
which the same inputs make right.  usage: launches.py IN.cu OUT.cpp"""
import re
import sys

COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", flags=re.S)


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
    raise SystemExit("cuda-emu: unbalanced parentheses")


def launch_bounds(src):
    """Each __global__ function's name -> its maximum threads a block (an
    expression of the file), read from the words between __global__ and
    the name: __global__ void __launch_bounds__(N[, M]) name(...)."""
    bounds = {}
    src = COMMENT.sub(" ", src)  # not in comments
    for m in re.finditer(r"\b__global__\b", src):
        at, bound = m.end(), "1024"
        while True:
            w = re.compile(r"\s*(\w+)\s*(\()?").match(src, at)
            if not w:
                raise SystemExit("cuda-emu: cannot read the __global__ at %d" % m.start())
            if w.group(1) == "__launch_bounds__" and w.group(2):
                close = closing_paren(src, w.end() - 1)
                bound = split_top(src[w.end():close])[0]
                at = close + 1
            elif w.group(2):  # the name, before its parameters
                bounds[w.group(1)] = bound
                break
            else:  # void, static, ...
                at = w.end()
    return bounds


def comment_spans(src):
    return [(m.start(), m.end()) for m in COMMENT.finditer(src)]


def fresh_shared(src):
    """Each __shared__ declaration (the first word of its line), followed by
    an emu_shared_fresh call per array it declares; extern (dynamic) shared
    memory is refused."""
    spans = comment_spans(src)
    out, at = [], 0
    # a declaration starts its line (extern: dynamic shared memory, refused)
    for m in re.finditer(r"^[ \t]*(extern[ \t]+)?__shared__\b", src, flags=re.M):
        if any(a <= m.start() < b for a, b in spans):
            continue
        if m.group(1):
            raise SystemExit("cuda-emu: extern __shared__ at %d: the stand-in has no dynamic shared memory"
                             % m.start())
        end = src.index(";", m.end())
        decl = re.sub(r"\b__align__\s*\(\s*\d+\s*\)", " ", src[m.end():end])
        names = []
        for part in split_top(decl):
            words = re.findall(r"\w+", part.split("[")[0])
            if not words:
                raise SystemExit("cuda-emu: cannot read the __shared__ declaration at %d" % m.start())
            names.append(words[-1])
        out.append(src[at:end + 1])
        out.append("".join(' emu_shared_fresh(%s, sizeof %s, "%s");' % (n, n, n) for n in names))
        at = end + 1
    return "".join(out) + src[at:]


def rewrite(src):
    src = fresh_shared(src)
    bounds = launch_bounds(src)
    out, at = [], 0
    # kernel<<<...>>> or a template's kernel<ARGS><<<...>>>, the launch on the
    # next line if a formatter wrapped it there
    for m in re.finditer(r"(\w+)(<[^<>;(){}]*>)?\s*<<<", src):
        if m.start() < at:
            continue
        name, targs = m.group(1), m.group(2) or ""
        if name not in bounds:
            raise SystemExit("cuda-emu: %s is launched but not a __global__ of this file" % name)
        cfg_end = src.index(">>>", m.end())
        cfg = split_top(src[m.end():cfg_end]) + ["0", "0"]
        grid, block, shared, stream = cfg[0], cfg[1], cfg[2], cfg[3]
        args_open = cfg_end + 3
        if src[args_open] != "(":
            raise SystemExit("cuda-emu: launch without arguments")
        args_close = closing_paren(src, args_open)
        args = src[args_open + 1:args_close].strip()
        out.append(src[at:m.start()])
        call = ('emu_launch(dim3(%s), dim3(%s), (size_t)(%s), (cudaStream_t)(%s), '
                '(unsigned)(%s), "%s", %s%s)'
                % (grid, block, shared, stream, bounds[name], name, name + targs,
                   ", " + args if args else ""))
        # as many lines as the launch had, so that the lines after it keep
        # their numbers
        lost = src.count("\n", m.start(), args_close + 1) - call.count("\n")
        out.append(call + "\n" * max(lost, 0))
        at = args_close + 1
    return "".join(out) + src[at:]


if __name__ == "__main__":
    with open(sys.argv[1]) as f:
        text = f.read()
    with open(sys.argv[2], "w") as f:
        # the compilers' and sanitizers' reports name the .cu (the lines
        # are the same: no rewrite adds or removes one)
        f.write('#line 1 "%s"\n' % sys.argv[1])
        f.write(rewrite(text))
