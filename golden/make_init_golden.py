#!/usr/bin/env python3
"""Golden starting parameters of the official baseline GPT, made with the official code.

Usage: python3 golden/make_init_golden.py PATH/TO/official/train_gpt.py [OUT.json]
(default OUT: golden/init.json next to this script)

The official script (openai/parameter-golf train_gpt.py) is imported from the
given path with importlib; it is never copied into this repository, and none
of its code is. Its main() is never called (it needs CUDA). This script redoes
main()'s model setup in main()'s order, on CPU:
    torch.manual_seed(seed)
    model = GPT(**preset).bfloat16()     # main(): .to(device).bfloat16()
    every CastedLinear module .float()
    restore_low_dim_params_to_fp32(model)
Initialisation happens inside GPT(...) before any .to(device), so the CPU
generator and the CPU kernels are the ones the official run uses; the result
is what its training loop starts from.

Recorded, for the presets of trainer/model.h (tiny, baseline = the official
defaults) x seeds 1337 and 42: the SHA-256 of all state_dict tensors as float32
little-endian (tok_emb's bf16 values widened exactly) concatenated in
state_dict order; per tensor its name, shape, dtype after the round trip, own
SHA-256 and the float32 bits of its first 4 values.

Also raw outputs of PyTorch's CPU generator and distributions, to test the
primitives one by one (all float32 bits as "0x%08x"; long outputs as SHA-256):
each case is a seed and a sequence of calls on the default generator; its
values are the concatenation of the calls' outputs. And "fill16": the
Box-Muller kernel on chosen uniforms at its edges, planted into the generator
state (see planted_normal); and "fill16_exhaustive": the SHA-256 of the
kernel's output over every possible u1 and every possible u2 (2^24 each).

The normal_ kernel depends on PyTorch's CPU capability (AVX2 and AVX512 run
the same AVX2 kernel; DEFAULT computes differently); the capability is
recorded and the script refuses DEFAULT. Threads: 1 (no kernel here is
parallel, but it keeps the record honest).
Tests (tests/test_torch_init.c) read this file; they never run this script.
"""
import hashlib
import importlib.util
import json
import math
import os
import platform
import struct
import sys

import numpy as np
import torch

SEEDS = [1337, 42]
# trainer/model.h gpt_config_preset; baseline = the official Hyperparameters defaults.
PRESETS = {
    "baseline": dict(vocab_size=1024, num_layers=9, model_dim=512, num_heads=8, num_kv_heads=4,
                     mlp_mult=2, tie_embeddings=True, tied_embed_init_std=0.005,
                     logit_softcap=30.0, rope_base=10000.0, qk_gain_init=1.5),
    "tiny": dict(vocab_size=1024, num_layers=4, model_dim=64, num_heads=4, num_kv_heads=2,
                 mlp_mult=2, tie_embeddings=True, tied_embed_init_std=0.005,
                 logit_softcap=30.0, rope_base=10000.0, qk_gain_init=1.5),
}


def load_official(path):
    spec = importlib.util.spec_from_file_location("official_train_gpt", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def f32_bytes(t):
    return t.detach().to(torch.float32).contiguous().numpy().astype("<f4").tobytes()


def bits(t):
    return ["0x%08x" % v for v in t.detach().to(torch.float32).reshape(-1).numpy().view(np.uint32)]


def sha(b):
    return hashlib.sha256(b).hexdigest()


def official_init(mod, preset, seed):
    torch.manual_seed(seed)
    model = mod.GPT(**preset).bfloat16()
    for m in model.modules():
        if isinstance(m, mod.CastedLinear):
            m.float()
    mod.restore_low_dim_params_to_fp32(model)
    whole = hashlib.sha256()
    tensors = []
    for name, t in model.state_dict().items():
        b = f32_bytes(t)
        whole.update(b)
        tensors.append({"name": name, "shape": list(t.shape), "dtype": str(t.dtype).replace("torch.", ""),
                        "sha256": sha(b), "first4": bits(t.reshape(-1)[:4])})
    n = sum(math.prod(t["shape"]) for t in tensors)
    return {"preset": preset, "seed": seed, "n_params": n, "sha256": whole.hexdigest(), "tensors": tensors}


# Each call: [op, *args]. "normal" n mean std; "uniform" n from to;
# "kaiming" rows cols (nn.init.kaiming_uniform_(a=sqrt(5)) on an empty [rows, cols]).
PRIMITIVE_CASES = [
    {"seed": 1337, "calls": [["randn", 37]]},
    {"seed": 1337, "calls": [["uniform", 5, -0.1, 0.1]]},
    {"seed": 1337, "calls": [["uniform", 24, 0.0, 1.0]]},
    {"seed": 42, "calls": [["normal", 5, 0.0, 1.0], ["normal", 3, 0.0, 1.0], ["normal", 1, 0.5, 2.0]]},
    {"seed": 42, "calls": [["normal", 15, 0.0, 1.0], ["normal", 16, 0.0, 1.0], ["normal", 17, 0.0, 1.0]]},
    {"seed": 7, "calls": [["normal", 31, 1.0, 3.0], ["normal", 33, -2.0, 0.25], ["uniform", 3, -1.0, 2.0]]},
    {"seed": 0, "calls": [["normal", 1000, 0.0, 0.005]]},
    {"seed": 2**32 + 5, "calls": [["uniform", 7, 0.0, 1.0]]},
    {"seed": 123, "calls": [["normal", 100003, 0.0, 1.0]]},
    {"seed": 123, "calls": [["kaiming", 96, 64], ["kaiming", 64, 128], ["uniform", 1001, -3.0, 3.0]]},
    # 2^22 uniforms: every 24-bit pattern class of the fma is well exercised.
    {"seed": 99, "calls": [["uniform", 1 << 22, -0.0441941738, 0.0441941738]]},
    # 2^22 normals with a tail: long-run state and the tail recompute.
    {"seed": 5, "calls": [["normal", (1 << 22) + 9, 0.0, 1.0]]},
]
SHA_ONLY = 64  # outputs longer than this are recorded as SHA-256 only


def untemper(y):
    """Inverse of MT19937's output tempering (so a chosen output can be planted)."""
    y = np.uint32(y)
    y ^= y >> np.uint32(18)
    y ^= (y << np.uint32(15)) & np.uint32(0xEFC60000)
    t = y
    for _ in range(5):
        t = y ^ ((t << np.uint32(7)) & np.uint32(0x9D2C5680))
    y = t
    for _ in range(3):
        t = y ^ (t >> np.uint32(11))
    return int(t)


def planted_normal(draws):
    """normal_(0, 1) on 16 floats whose 16 uniform draws are exactly `draws`.

    The generator state is set (torch.set_rng_state) to MT19937 words whose
    tempered values are the draws, with left = 624 and next = 0 so the next
    623 draws read those words without a twist. Offsets are those of
    at::CPUGeneratorImplState (the_initial_seed u64, left i32, seeded i32,
    next u64, state u64[624], ...); the size is checked."""
    st = bytearray(torch.get_rng_state().numpy().tobytes())
    if len(st) != 5056:
        raise SystemExit(f"unexpected CPU generator state size {len(st)}")
    struct.pack_into("<i", st, 8, 624)
    struct.pack_into("<Q", st, 16, 0)
    for i, d in enumerate(draws):
        struct.pack_into("<Q", st, 24 + 8 * i, untemper(d))
    torch.set_rng_state(torch.frombuffer(st, dtype=torch.uint8).clone())
    return torch.empty(16).normal_(0.0, 1.0)


# Edge inputs of the Box-Muller kernel, 24-bit uniforms (u = k / 2^24):
# u1 = 1 - u at both ends and at powers of two; u2 near the octant
# boundaries (2m+1)/8 where the sin/cos reduction switches polynomials.
def fill16_cases():
    one = 1 << 24
    firsts = [0, 1, 2, one - 1, one - 2, 1 << 23, 1 << 22, (1 << 23) + 1]
    seconds = []
    for m in range(4):
        c = round((2 * m + 1) / 8 * one)
        seconds += [c - 1, c + 1]
    cases = [firsts + seconds, firsts[::-1] + [0, one - 1, 1 << 22, 1 << 23, 1 << 21, 3 << 22, 5 << 21, 7 << 21]]
    out = []
    for draws in cases:
        draws = [d | (0xA5 << 24) for d in draws]  # the top 8 bits are ignored
        out.append({"draws": ["0x%08x" % d for d in draws], "bits": bits(planted_normal(draws))})
    return out


# Every input of the Box-Muller kernel: 2^21 blocks of 16 planted draws;
# block b has u1 draws k = 8b + j (j = 0..7, so every 24-bit u1 once) and
# u2 draws (k * EXHAUSTIVE_MULT) mod 2^24 (odd multiplier: every u2 once).
EXHAUSTIVE_MULT = 0x9E3779
PLANT = 608  # 38 blocks per planted state (623 words available)


def fill16_exhaustive():
    n = 1 << 24
    k = np.arange(n, dtype=np.uint64)
    draws = np.empty((n // 8, 16), dtype=np.uint64)
    draws[:, :8] = k.reshape(-1, 8)
    draws[:, 8:] = ((k * EXHAUSTIVE_MULT) & 0xFFFFFF).reshape(-1, 8)
    draws = draws.reshape(-1)
    words = untemper_np(draws.astype(np.uint32)).astype(np.uint64)
    st = bytearray(torch.get_rng_state().numpy().tobytes())
    struct.pack_into("<i", st, 8, 624)
    struct.pack_into("<Q", st, 16, 0)
    buf = np.frombuffer(st, dtype=np.uint8).copy()
    state_words = buf[24:24 + 624 * 8].view(np.uint64)
    h = hashlib.sha256()
    for i in range(0, len(draws), PLANT):
        m = min(PLANT, len(draws) - i)  # always a multiple of 16
        state_words[:m] = words[i:i + m]
        torch.set_rng_state(torch.from_numpy(buf))
        h.update(f32_bytes(torch.empty(m).normal_(0.0, 1.0)))
    return {"blocks": n // 8, "u2_multiplier": EXHAUSTIVE_MULT, "sha256": h.hexdigest()}


def untemper_np(y):
    y = y.copy()
    y ^= y >> np.uint32(18)
    y ^= (y << np.uint32(15)) & np.uint32(0xEFC60000)
    t = y.copy()
    for _ in range(5):
        t = y ^ ((t << np.uint32(7)) & np.uint32(0x9D2C5680))
    y = t
    t = y.copy()
    for _ in range(3):
        t = y ^ (t >> np.uint32(11))
    return t


def run_calls(case):
    torch.manual_seed(case["seed"])
    outs = []
    for c in case["calls"]:
        op = c[0]
        if op == "randn":
            outs.append(torch.randn(c[1]))
        elif op == "normal":
            outs.append(torch.empty(c[1]).normal_(c[2], c[3]))
        elif op == "uniform":
            outs.append(torch.empty(c[1]).uniform_(c[2], c[3]))
        elif op == "kaiming":
            w = torch.empty(c[1], c[2])
            torch.nn.init.kaiming_uniform_(w, a=math.sqrt(5))
            outs.append(w.reshape(-1))
        else:
            raise ValueError(op)
    v = torch.cat([o.reshape(-1) for o in outs])
    rec = {"seed": case["seed"], "calls": case["calls"], "n": v.numel(), "sha256": sha(f32_bytes(v))}
    if v.numel() <= SHA_ONLY:
        rec["bits"] = bits(v)
    else:
        rec["first4"] = bits(v[:4])
    return rec


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    out = sys.argv[2] if len(sys.argv) == 3 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "init.json")
    cap = torch.backends.cpu.get_cpu_capability()
    if cap not in ("AVX2", "AVX512"):
        sys.exit(f"torch CPU capability {cap}: normal_ would not run the AVX2 kernel pgolf reproduces")
    torch.set_num_threads(1)
    mod = load_official(sys.argv[1])
    with open(sys.argv[1], "rb") as f:
        official_sha = sha(f.read())
    doc = {
        "generator": "golden/make_init_golden.py",
        "versions": {"torch": torch.__version__, "python": platform.python_version(), "numpy": np.__version__},
        "torch_cpu_capability": cap,
        "official_train_gpt_sha256": official_sha,
        "primitives": [run_calls(c) for c in PRIMITIVE_CASES],
        "fill16": fill16_cases(),
        "fill16_exhaustive": fill16_exhaustive(),
        "kaiming_bounds": {str(c): math.sqrt(3.0) * (math.sqrt(2.0 / (1 + math.sqrt(5) ** 2)) / math.sqrt(c))
                           for c in (64, 128, 512, 1024)},
        "init": [],
    }
    for name in ("tiny", "baseline"):
        for seed in SEEDS:
            rec = official_init(mod, PRESETS[name], seed)
            rec["name"] = name
            doc["init"].append(rec)
    with open(out, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
