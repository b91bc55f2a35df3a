#!/usr/bin/env python3
"""Golden values of the official optimizers, for tests/test_optim.c.

Usage: python3 golden/make_optim_golden.py OFFICIAL_TRAIN_GPT_PATH [OUT]
(OUT defaults to golden/optim.json). The official train_gpt.py is imported
from the given path, never copied; everything runs on CPU.

What is recorded (every float32 array as the concatenated "%08x" bit
patterns of its elements, every double as repr(), which round-trips):

ns     The official zeropower_via_newtonschulz5 (the plain Python function;
       main() only wraps it in torch.compile) with steps=5 on three matrices
       (wide, tall, square), G given as float32:
         bf16: the function as it is (G.bfloat16(), bf16 CPU ops);
         fp32: the same function re-defined from its own source with the
               single change `G.bfloat16()` -> `G.float()`, so every
               operation runs on float32 tensors (exactly as
               golden/make_train_golden.py makes its float32 Muon).
muon   3 steps of the official Muon class on three fp32 parameters (wide,
       tall, square), with the official momentum warm-up formula (start
       0.85, momentum 0.95, MOMENTUM_WARMUP_STEPS = 2 so the warm-up is
       visible in 3 steps) and lr = matrix_lr * lr_mul with lr_mul 1, 0.5,
       0.25; "mixed" is the class as it is (bf16 Newton-Schulz and update
       buffer), "fp32" is the class re-defined from its source with
       `dtype=torch.bfloat16` -> `dtype=torch.float32` and the float32
       Newton-Schulz above. Parameters and momentum buffers after each step.
adam   3 steps of torch.optim.Adam(betas=(0.9, 0.95), eps=1e-8) as main()
       builds it (fused=True), lr = 0.05 * lr_mul, on float32 tensors (111
       elements: vector path and scalar tail; 5 elements: scalar only) and
       a bf16 tensor (the official bf16 tok_emb), and the same float32
       cases with fused=False for reference.
clip   torch.nn.utils.clip_grad_norm_ on lists of gradients (float32 only;
       float32 with a bf16 tensor second, as the mixed model's tok_emb),
       with a max_norm that clips and one that does not: the returned total
       norm and the gradients after.

Inputs come from torch.Generator(manual_seed(SEED)).randn and are stored
in the file, so the C tests need no random number generator.
"""

from __future__ import annotations

import hashlib
import importlib.util
import inspect
import json
import platform
import sys
from pathlib import Path

import numpy as np
import torch

SEED = 20240520
NS_SHAPES = [("wide", 24, 40), ("tall", 40, 24), ("square", 32, 32)]
MUON_SHAPES = [("wide", 16, 24), ("tall", 24, 16), ("square", 16, 16)]
LR_MULS = [1.0, 0.5, 0.25]
MATRIX_LR = 0.04
TIED_EMBED_LR = 0.05
MOMENTUM, MOMENTUM_START, MOMENTUM_WARMUP_STEPS = 0.95, 0.85, 2
BACKEND_STEPS = 5
BETAS, EPS = (0.9, 0.95), 1e-8


def hexf(t: torch.Tensor) -> str:
    a = t.detach().to(torch.float32).contiguous().numpy().astype("<f4").view("<u4")
    return "".join("%08x" % int(x) for x in a.reshape(-1))


def load_official(path: str):
    spec = importlib.util.spec_from_file_location("official_train_gpt", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # inspect.getsource looks the module up here
    spec.loader.exec_module(mod)
    return mod


def patched(obj, old: str, new: str, ns: dict):
    """Re-define obj from its own source with `old` replaced by `new` once."""
    src = inspect.getsource(obj)
    if src.count(old) != 1:
        raise SystemExit(f"expected exactly one {old!r} in {obj.__name__}, found {src.count(old)}")
    exec(compile(src.replace(old, new), f"<{obj.__name__} float32 variant>", "exec"), ns)
    return ns[obj.__name__]


def float32_variants(mod):
    ns = dict(mod.__dict__)
    ns_f32 = patched(mod.zeropower_via_newtonschulz5, "G.bfloat16()", "G.float()", ns)
    muon_f32 = patched(mod.Muon, "dtype=torch.bfloat16", "dtype=torch.float32", ns)
    return ns_f32, muon_f32


def momentum_at(step: int) -> float:
    # The official loop's warm-up formula (main()), with MOMENTUM_WARMUP_STEPS.
    frac = min(step / MOMENTUM_WARMUP_STEPS, 1.0) if MOMENTUM_WARMUP_STEPS > 0 else 1.0
    return (1 - frac) * MOMENTUM_START + frac * MOMENTUM


def make_ns(mod, ns_f32, gen) -> list:
    out = []
    for name, r, c in NS_SHAPES:
        g = torch.randn(r, c, generator=gen) * 0.3
        with torch.no_grad():
            bf = mod.zeropower_via_newtonschulz5(g.clone(), steps=BACKEND_STEPS)
            f32 = ns_f32(g.clone(), steps=BACKEND_STEPS)
        assert bf.dtype == torch.bfloat16 and f32.dtype == torch.float32
        out.append({"name": name, "rows": r, "cols": c, "steps": BACKEND_STEPS,
                    "g": hexf(g), "fp32": hexf(f32), "bf16": hexf(bf)})
    return out


def run_muon(muon_cls, p0, grads) -> dict:
    params = [torch.nn.Parameter(p.clone()) for p in p0]
    opt = muon_cls(params, lr=MATRIX_LR, momentum=MOMENTUM, backend_steps=BACKEND_STEPS)
    steps = []
    for step, mul in enumerate(LR_MULS):
        for p, g in zip(params, grads[step]):
            p.grad = g.clone()
        m = momentum_at(step)
        for group in opt.param_groups:
            group["momentum"] = m
            group["lr"] = MATRIX_LR * mul
        opt.step()
        steps.append({"params": [hexf(p) for p in params],
                      "momentum_buffers": [hexf(opt.state[p]["momentum_buffer"]) for p in params]})
    return {"steps": steps}


def make_muon(mod, muon_f32, gen) -> dict:
    p0 = [torch.randn(r, c, generator=gen) * 0.05 for _, r, c in MUON_SHAPES]
    grads = [[torch.randn(r, c, generator=gen) * 0.01 for _, r, c in MUON_SHAPES]
             for _ in LR_MULS]
    return {
        "shapes": [[r, c] for _, r, c in MUON_SHAPES],
        "matrix_lr": repr(MATRIX_LR), "lr_muls": [repr(x) for x in LR_MULS],
        "momentum": repr(MOMENTUM), "momentum_warmup_start": repr(MOMENTUM_START),
        "momentum_warmup_steps": MOMENTUM_WARMUP_STEPS, "backend_steps": BACKEND_STEPS,
        "momentum_per_step": [repr(momentum_at(s)) for s in range(len(LR_MULS))],
        "params0": [hexf(p) for p in p0],
        "grads": [[hexf(g) for g in gs] for gs in grads],
        "mixed": run_muon(mod.Muon, p0, grads),
        "fp32": run_muon(muon_f32, p0, grads),
    }


def run_adam(p0, grads, dtype, fused: bool) -> list:
    p = torch.nn.Parameter(p0.clone().to(dtype))
    opt = torch.optim.Adam([{"params": [p], "lr": TIED_EMBED_LR, "base_lr": TIED_EMBED_LR}],
                           betas=BETAS, eps=EPS, fused=fused)
    steps = []
    for g, mul in zip(grads, LR_MULS):
        p.grad = g.clone().to(dtype)
        for group in opt.param_groups:
            group["lr"] = group["base_lr"] * mul
        opt.step()
        st = opt.state[p]
        assert st["exp_avg"].dtype == dtype
        steps.append({"param": hexf(p), "exp_avg": hexf(st["exp_avg"]),
                      "exp_avg_sq": hexf(st["exp_avg_sq"]), "step": float(st["step"])})
    return steps


def make_adam(gen) -> list:
    cases = []
    for name, shape, dtype in [("f32_111", (3, 37), torch.float32), ("f32_5", (5,), torch.float32),
                               ("bf16_984", (41, 24), torch.bfloat16)]:
        p0 = (torch.randn(*shape, generator=gen) * 0.1).to(dtype).float()
        grads = [(torch.randn(*shape, generator=gen) * 0.1 ** k).to(dtype).float()
                 for k in range(len(LR_MULS))]
        case = {"name": name, "dtype": "bf16" if dtype == torch.bfloat16 else "f32",
                "numel": int(p0.numel()), "lr": repr(TIED_EMBED_LR),
                "lr_muls": [repr(x) for x in LR_MULS], "beta1": repr(BETAS[0]),
                "beta2": repr(BETAS[1]), "eps": repr(EPS),
                "param0": hexf(p0), "grads": [hexf(g) for g in grads],
                "fused": run_adam(p0, grads, dtype, True)}
        if dtype == torch.float32:
            case["unfused"] = run_adam(p0, grads, dtype, False)
        cases.append(case)
    return cases


def make_clip(gen) -> list:
    cases = []
    shapes = [(8,), (16, 12), (5,), (7, 9)]
    for mixed in (False, True):
        base = [torch.randn(*s, generator=gen) * 0.2 for s in shapes]
        dtypes = [torch.float32] * len(shapes)
        if mixed:
            dtypes[1] = torch.bfloat16
        for max_norm in (0.5, 1e6):
            ps = [torch.nn.Parameter(torch.zeros(s, dtype=d)) for s, d in zip(shapes, dtypes)]
            for p, g in zip(ps, base):
                p.grad = g.clone().to(p.dtype)
            total = torch.nn.utils.clip_grad_norm_(ps, max_norm)
            cases.append({"mixed": mixed, "max_norm": repr(max_norm),
                          "shapes": [list(s) for s in shapes],
                          "bf16": [d == torch.bfloat16 for d in dtypes],
                          "grads": [hexf(g.to(d)) for g, d in zip(base, dtypes)],
                          "total_norm": hexf(total.reshape(1)),
                          "clipped": [hexf(p.grad) for p in ps]})
    return cases


def main() -> None:
    if len(sys.argv) not in (2, 3):
        raise SystemExit(__doc__)
    path = sys.argv[1]
    out = Path(sys.argv[2]) if len(sys.argv) == 3 else Path(__file__).resolve().parent / "optim.json"
    torch.set_num_threads(1)
    mod = load_official(path)
    ns_f32, muon_f32 = float32_variants(mod)
    gen = torch.Generator().manual_seed(SEED)
    doc = {
        "meta": {
            "script": "golden/make_optim_golden.py",
            "official_train_gpt_sha256": hashlib.sha256(Path(path).read_bytes()).hexdigest(),
            "torch": torch.__version__, "numpy": np.__version__,
            "python": platform.python_version(), "machine": platform.machine(),
            "torch_cpu_capability": torch.backends.cpu.get_cpu_capability(),
            "seed": SEED,
        },
        "ns": make_ns(mod, ns_f32, gen),
        "muon": make_muon(mod, muon_f32, gen),
        "adam": make_adam(gen),
        "clip": make_clip(gen),
    }
    out.write_text(json.dumps(doc, indent=1) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
