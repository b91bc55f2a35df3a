#!/usr/bin/env python3
"""The loops of a cubin's SASS (cuobjdump -sass) that divide integers.

A GPU has no integer divider: a division by a value known only at run
time is a sequence seeded by I2F.RP / I2F.U32.RP (about 20 instructions)
or, in 64 bits, a called routine seeded by I2F.U64.RP (about 70). In a
grid-stride loop that is paid per element (kernels/index_walk.h says
how the kernels avoid it). A loop is the span from a backward branch's
target to the branch; it divides if an instruction in it is a seed or
calls a routine that holds one.

Prints one line per dividing loop:
    KERNEL LOOP_START-LOOP_END DIVISIONS
(the function's name as declared, hexadecimal addresses, seeds plus
calls); nothing for a file without device functions. With --allow, the
loops of the kernels the list names (ci/sass-divisions.allow: a name and
why, a line each) are left out, and it exits 1 if any loop is printed.
Exits 2 on input that is not cuobjdump's SASS or a list line without a
reason.
    python3 ci/sass_divisions.py [--allow LIST] FILE.sass
"""
import re
import sys

SEED = re.compile(r"\bI2F(\.U32|\.U64)?\.RP\b")
INSTR = re.compile(r"/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;")
FUNC = re.compile(r"Function : (\S+)")
ADDR = re.compile(r"\b0x([0-9a-f]+)\b")
CALL = re.compile(r"\bCALL\b")
BRANCH = re.compile(r"^(@\S+\s+)?BRA\b")  # a branch, predicated or not


def functions(lines):
    """{name: [(address, text)]} in the order of the listing."""
    out, name = {}, None
    for line in lines:
        m = FUNC.search(line)
        if m:
            name = m.group(1)
            out[name] = []
            continue
        m = INSTR.search(line)
        if name and m:
            out[name].append((int(m.group(1), 16), m.group(2)))
    return out


def dividing_routines(instrs):
    """Addresses of the routines (a CALL's target up to its RET) that hold a seed."""
    targets = set()
    for _, text in instrs:
        if CALL.search(text):
            m = ADDR.search(text)
            if m:
                targets.add(int(m.group(1), 16))
    dividing = set()
    for t in targets:
        for addr, text in instrs:
            if addr < t:
                continue
            if SEED.search(text):
                dividing.add(t)
                break
            if re.search(r"\bRET\b", text):
                break
    return dividing


def dividing_loops(instrs):
    """[(start, end, divisions)] for each backward branch whose span divides."""
    routines = dividing_routines(instrs)
    loops = []
    for addr, text in instrs:
        if not BRANCH.match(text):
            continue
        m = ADDR.search(text)
        if not m or int(m.group(1), 16) >= addr:
            continue
        start = int(m.group(1), 16)
        n = 0
        for a, t in instrs:
            if start <= a <= addr:
                if SEED.search(t):
                    n += 1
                elif CALL.search(t):
                    c = ADDR.search(t)
                    if c and int(c.group(1), 16) in routines:
                        n += 1
        if n:
            loops.append((start, addr, n))
    return loops


def declared_name(mangled):
    """The name as declared: _Z<len><name>... (templates too), else as is."""
    m = re.match(r"_Z(\d+)", mangled)
    if not m:
        return mangled
    start = m.end()
    return mangled[start:start + int(m.group(1))]


def read_allow(path):
    """{kernel: reason} from the list; raises ValueError naming the line."""
    allow = {}
    with open(path, encoding="utf-8") as f:
        for no, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            parts = line.split(None, 1)
            if len(parts) < 2:
                raise ValueError(f"{path}:{no}: '{parts[0]}' has no reason after it")
            allow[parts[0]] = parts[1]
    return allow


def main(argv):
    args = argv[1:]
    allow = None
    if len(args) == 3 and args[0] == "--allow":
        try:
            allow = read_allow(args[1])
        except (OSError, ValueError) as e:
            print(f"sass_divisions: {e}", file=sys.stderr)
            return 2
        args = args[2:]
    if len(args) != 1:
        print("usage: sass_divisions.py [--allow LIST] FILE.sass", file=sys.stderr)
        return 2
    try:
        with open(args[0], encoding="utf-8", errors="replace") as f:
            text = f.read()
    except OSError as e:
        print(f"sass_divisions: {args[0]}: {e.strerror}", file=sys.stderr)
        return 2
    funcs = functions(text.splitlines())
    if not funcs and "code for sm_" not in text:
        print(f"sass_divisions: {args[0]}: not cuobjdump -sass output", file=sys.stderr)
        return 2
    found = 0
    for mangled, instrs in funcs.items():
        name = declared_name(mangled)
        if allow is not None and name in allow:
            continue
        for start, end, n in dividing_loops(instrs):
            print(f"{name} {start:#06x}-{end:#06x} {n}")
            found += 1
    return 1 if allow is not None and found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
