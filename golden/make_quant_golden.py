#!/usr/bin/env python3
"""Golden values of the official int8 export, made with the official code.

Imports the challenge's train_gpt.py from the path given (it is never copied
into this repository) and applies its own quantize_float_tensor,
quantize_state_dict_int8 and dequantize_state_dict_int8, on CPU, to tensors
that both this script and tests/test_quantize.c generate from one integer
formula (so no input data needs storing):

  gen(seed, i):  x = (i*2654435761 + seed*97531 + 12345) mod 2^32
                 x ^= x>>16; x = x*0x45d9f3b mod 2^32; x ^= x>>16;
                 x = x*0x45d9f3b mod 2^32; x ^= x>>16
                 v = ((x mod 4001) - 2000) * 2^-14;  v *= 37 if x mod 97 == 0
  (every value is exact in float32).

Cases (each recorded with q bytes, scale bits and dequantized bits):
  mat300x70   2-D per-row, outliers, and special rows: 5 all zeros; 7 ties
              at .5 with scale 1; 9 tiny values (scale clamped to 1/127);
              11 ties at .5 with scale 0.5
  mat64x512   2-D per-row, rows as long as the baseline's
  vec70000    1-D per-tensor with outliers
  vec_zero    1-D of 100 zeros (per-tensor scale 1.0)
  vec_ties    1-D of 70000 with clip 127 (scale 1) and .5 ties
torch.quantile itself on 300 generated rows (scaled by 0.7310586f) of many lengths and quantiles,
and the whole export of a small model state_dict (official GPT class, 2
layers, width 256, vocab 1024, so some tensors are quantized and some kept)
with generated values, once all-fp32 and once with the official mixed
dtypes (token embedding in bf16).

Output: golden/quant.json. Tests read it; they never run this.
Usage: python3 golden/make_quant_golden.py OFFICIAL_TRAIN_GPT_PATH
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import platform
import sys
from pathlib import Path

import numpy as np
import torch

REPO = Path(__file__).resolve().parent.parent
OUT = REPO / "golden/quant.json"
M32 = 0xFFFFFFFF


def load_official(path: str):
    spec = importlib.util.spec_from_file_location("official_train_gpt", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def gen(seed: int, n: int) -> np.ndarray:
    i = np.arange(n, dtype=np.uint64)
    x = (i * np.uint64(2654435761) + np.uint64(seed * 97531 + 12345)) & np.uint64(M32)
    x ^= x >> np.uint64(16)
    x = (x * np.uint64(0x45D9F3B)) & np.uint64(M32)
    x ^= x >> np.uint64(16)
    x = (x * np.uint64(0x45D9F3B)) & np.uint64(M32)
    x ^= x >> np.uint64(16)
    v = ((x % np.uint64(4001)).astype(np.int64) - 2000).astype(np.float64) * 2.0**-14
    v = np.where(x % np.uint64(97) == 0, v * 37.0, v)
    return v.astype(np.float32)


def tie_values(n: int, top: float, unit: float) -> np.ndarray:
    # Two values at +-top set the clip to top exactly; the rest are odd
    # multiples of unit/2, i.e. exact .5 ties once divided by the scale.
    k = np.arange(n, dtype=np.int64)
    v = ((k % 41) - 20).astype(np.float64) * unit + unit / 2
    v[0], v[1] = top, -top
    return v.astype(np.float32)


def mat300x70() -> np.ndarray:
    m = gen(1, 300 * 70).reshape(300, 70)
    m[5] = 0
    m[7] = tie_values(70, 127.0, 1.0)
    m[9] = gen(5, 70) * 2.0**-6
    m[11] = tie_values(70, 63.5, 0.5)
    return m


def vec_ties() -> np.ndarray:
    v = tie_values(70000, 127.0, 1.0)
    v[2], v[3] = 127.0, -127.0  # enough copies of the top that the quantile is 127
    return v


def sha(b: bytes) -> str:
    return hashlib.sha256(b).hexdigest()


def f32_hex(a: np.ndarray) -> list[str]:
    return [f"{int(u):08x}" for u in np.asarray(a, dtype="<f4").view("<u4").ravel()]


def f16_hex(a: np.ndarray) -> list[str]:
    return [f"{int(u):04x}" for u in np.asarray(a, dtype="<f2").view("<u2").ravel()]


def quant_case(off, name: str, arr: np.ndarray) -> dict:
    t = torch.from_numpy(arr.copy())
    q, s = off.quantize_float_tensor(t)
    qn = q.numpy().astype(np.int8)
    rec = {"name": name, "shape": list(arr.shape), "q_sha256": sha(qn.tobytes())}
    if s.ndim > 0:
        rec["scheme"] = "per_row"
        rec["scales_f16"] = f16_hex(s.numpy())
        deq = (q.float() * s.to(torch.float32).view(-1, 1)).numpy()
        clip = torch.quantile(t.float().abs(), off.INT8_CLIP_Q, dim=1).numpy()
        rec["clip_f32"] = f32_hex(clip)
    else:
        rec["scheme"] = "per_tensor"
        rec["scale_f32"] = f32_hex(s.numpy())[0]
        deq = (q.float() * float(s.item())).numpy()
    rec["dequant_sha256"] = sha(deq.astype("<f4").tobytes())
    rec["q_first"] = [int(v) for v in qn.ravel()[:16]]
    return rec


N_QUANTILE_CASES = 1500


def quantile_case(k: int) -> tuple[int, int, float]:
    """Case k: (seed, n, q)."""
    n = 2 + (k * 7919) % 3000
    q = 0.9999984 if k % 3 == 0 else ((k * 104729) % 1000003) / 1000003.0
    return 1000 + k, n, q


def quantile_cases() -> dict:
    # torch.quantile(|gen(seed, n)| * 0.7310586f, q) (the float32 product
    # gives values with full mantissas) for many lengths and quantiles: the
    # rank is formed in double and the weight rounded to float32 before a
    # fused lerp; enough cases that a float32 rank, an unfused lerp or an
    # all-double lerp each disagree somewhere.
    values = []
    for k in range(N_QUANTILE_CASES):
        seed, n, q = quantile_case(k)
        a = torch.from_numpy(np.abs(gen(seed, n)) * np.float32(0.7310586))
        values.append(f32_hex(torch.quantile(a, q).numpy())[0])
    return {
        "case_k": "seed = 1000 + k; n = 2 + (k*7919) % 3000; q = 0.9999984 if k % 3 == 0 "
                  "else ((k*104729) % 1000003) / 1000003.0 (a double; torch takes it as float32)",
        "input": "abs(gen(seed, n)) * float32(0.7310586), float32 arithmetic",
        "value_f32": values,
    }


def mini_state_dict(off, mixed: bool):
    torch.manual_seed(0)
    model = off.GPT(
        vocab_size=1024, num_layers=2, model_dim=256, num_heads=4, num_kv_heads=2,
        mlp_mult=2, tie_embeddings=True, tied_embed_init_std=0.005,
        logit_softcap=30.0, rope_base=10000.0, qk_gain_init=1.5,
    )
    sd = model.state_dict()
    out = {}
    for idx, (name, t) in enumerate(sd.items()):
        v = torch.from_numpy(gen(100 + idx, t.numel()).reshape(tuple(t.shape)))
        if mixed and name == "tok_emb.weight":
            v = v.bfloat16()
        out[name] = v.contiguous()
    return out


def export_case(off, mixed: bool) -> dict:
    sd = mini_state_dict(off, mixed)
    obj, stats = off.quantize_state_dict_int8(sd)
    deq = off.dequantize_state_dict_int8(obj)
    tensors = []
    for name, t in sd.items():
        rec = {"name": name, "shape": list(t.shape), "dtype": str(t.dtype).removeprefix("torch.")}
        if name in obj["quantized"]:
            q, s = obj["quantized"][name], obj["scales"][name]
            rec["kind"] = "int8_per_row" if s.ndim > 0 else "int8_per_tensor"
            rec["data_sha256"] = sha(q.numpy().astype(np.int8).tobytes())
            rec["scales_sha256"] = sha(s.numpy().tobytes())
        else:
            p = obj["passthrough"][name]
            rec["kind"] = "f32" if p.dtype == torch.float32 else "f16"
            rec["data_sha256"] = sha(p.numpy().tobytes())
        d = deq[name]
        rec["dequant_dtype"] = str(d.dtype).removeprefix("torch.")
        rec["dequant_sha256"] = sha(d.float().numpy().astype("<f4").tobytes())
        tensors.append(rec)
    return {"mixed": mixed, "stats": stats, "tensors": tensors}


def main() -> None:
    if len(sys.argv) != 2:
        sys.exit("usage: make_quant_golden.py OFFICIAL_TRAIN_GPT_PATH")
    off = load_official(sys.argv[1])
    torch.set_num_threads(1)
    cases = [
        quant_case(off, "mat300x70", mat300x70()),
        quant_case(off, "mat64x512", gen(3, 64 * 512).reshape(64, 512)),
        quant_case(off, "vec70000", gen(2, 70000)),
        quant_case(off, "vec_zero", np.zeros(100, dtype=np.float32)),
        quant_case(off, "vec_ties", vec_ties()),
    ]
    doc = {
        "what": "official quantize_float_tensor / quantize_state_dict_int8 / dequantize_state_dict_int8 on generated tensors",
        "generator": "golden/make_quant_golden.py",
        "official_source_sha256": sha(Path(sys.argv[1]).read_bytes()),
        "versions": {
            "python": platform.python_version(),
            "torch": torch.__version__,
            "numpy": np.__version__,
            "torch_cpu_capability": torch.backends.cpu.get_cpu_capability(),
        },
        "constants": {
            "INT8_CLIP_Q": off.INT8_CLIP_Q,
            "INT8_KEEP_FLOAT_MAX_NUMEL": off.INT8_KEEP_FLOAT_MAX_NUMEL,
        },
        "cases": cases,
        "quantiles": quantile_cases(),
        "exports": [export_case(off, False), export_case(off, True)],
    }
    OUT.write_text(json.dumps(doc, indent=1) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
