#!/usr/bin/env python3
"""Golden training numbers of the official baseline GPT, made with the official code.

Usage: python3 golden/make_train_golden.py PATH/TO/official/train_gpt.py

The official script (openai/parameter-golf train_gpt.py) is imported from the
given path with importlib; it is never copied into this repository, and none
of its code is. Its main() is never called: main() needs CUDA, wraps the
model and Newton-Schulz in torch.compile, and runs a wall-clock loop. This
script calls the plain (uncompiled) GPT, Muon, zeropower_via_newtonschulz5,
restore_low_dim_params_to_fp32 and DistributedTokenLoader of the module, and
redoes main()'s setup and loop in the same order (described below), on CPU.

Configuration: the official Hyperparameters with the tiny preset of
trainer/model.h (4 layers, width 64, 4 heads, 2 KV heads, MLP 2x, vocab 1024,
seq 128), train_batch_tokens 8192, world size 1, so grad_accum_steps 8 and
grad_scale 1/8: each micro-step is next_batch(8192, 128, 8), 8 sequences of
128 tokens taken from 1025 consecutive tokens of the stream. Data: the train
shard of data/demo. Seed 1337. Every value is written to the JSON's "config".

Setup as main(): torch.manual_seed(seed) (with random/numpy seeded too), then
GPT(...).bfloat16(), every CastedLinear .float(), restore_low_dim_params_to_fp32:
the official dtype round trip, leaving tok_emb.weight in bf16. The round
trip also casts every Rotary's inv_freq buffer to bf16 (.bfloat16() casts
buffers; restore_low_dim_params_to_fp32 restores parameters only), so the
official RoPE frequencies are bf16-rounded in every mode, and in the mixed
run the positions (arange in inv_freq's dtype), the angles t * inv_freq and
their cos and sin are bf16 tensors (eager semantics). The JSON records the
inv_freq values ("rotary").
Optimizers as main(): Adam(tok_emb, tied_embed_lr), Muon(block matrices,
matrix_lr), Adam(block vectors/control tensors + skip_weights, scalar_lr);
betas (beta1, beta2), eps adam_eps, fused=True; step order tok, muon, scalar.
Loop as main(): zero_grad(set_to_none); 8 micro-steps of
  x, y = next_batch(...); loss = model(x, y); train_loss += loss.detach();
  (loss * grad_scale).backward()
then train_loss /= 8 (float32 throughout), Muon momentum
(1 - frac) * 0.85 + frac * 0.95 with frac = min(step / 500, 1), lr =
base_lr * lr_mul with lr_mul = 1 (iterations 20000 and warm-down 1200 put the
first 20 steps far from the warm-down; max_wallclock_seconds is set to 0 so
lr_mul is the step-based rule, which is 1 here), no gradient clipping
(grad_clip_norm 0), each optimizer's step() in order. main()'s warm-up steps
are skipped: main() restores the initial weights, optimizer states and loader
after them, so they change nothing (they only prime torch.compile).

What is recorded (golden/train_tiny.json, and golden/train_tiny_grads.bin):
 1. init: SHA-256 of every state_dict tensor as float32 little-endian
    (tok_emb's bf16 values widened exactly), and of all of them concatenated
    in state_dict order.
 2. fp32: the round-tripped model cast to float32 entirely (.float(), so the
    token embedding too), no autocast. Muon in float32: the official
    zeropower_via_newtonschulz5 and Muon with exactly two source changes,
    made here at run time from the imported module's source text (checked to
    occur exactly once each): in zeropower_via_newtonschulz5 `G.bfloat16()`
    becomes `G.float()` (Newton-Schulz iterates in float32), and in Muon.step
    the update buffer `dtype=torch.bfloat16` becomes `dtype=torch.float32`
    (the orthogonalised update is not rounded to bf16 before p.add_).
    Recorded: the loss of the first micro-batch at step 0 (mean CE of the first
    next_batch), and the gradient of THAT loss (one micro-step, NOT scaled by
    grad_scale) for every parameter, in the .bin file; then the 20 steps.
 3. mixed: the official mixed precision on CPU: tok_emb in bf16, forward under
    torch.autocast("cpu", bfloat16), the official bf16 Newton-Schulz and bf16
    Muon update buffer, fused Adam on the bf16 embedding; the 20 steps.
    CPU and CUDA autocast differ for this model: CUDA autocast runs
    aten::rms_norm and aten::pow (behind Tensor.square) in float32
    (its fp32 list), CPU autocast leaves them in the input dtype. So on CUDA
    every F.rms_norm output is float32 (the residual stream x0 and x, q and k
    after their norm, and everything mixed with them, stay float32; only the
    linear layers and attention take bf16 inputs), while on CPU the whole
    stream is bf16 (rounded after each norm; the norm itself computes in
    float32 with eps = finfo(float32).eps also for bf16 input).
    The relu^2 forward value is the same either way (a bf16 square is exact in
    float32 and is rounded once to bf16 at the next linear); its backward is not.
 4. mixed_cuda_policy: as 3, but with AutocastCPU kernels registered (for this
    process only) for aten::rms_norm and aten::pow.Tensor_Scalar that follow
    CUDA's fp32 policy (cast floating inputs to float32, run the op with
    autocast excluded): the official CUDA rounding points emulated on CPU.
    Remaining CPU/CUDA differences: kernel-internal accumulation order and
    precision (oneDNN/MKL vs cuBLAS/flash attention, fused Adam), TF32 is
    irrelevant (no float32 matmul runs under autocast).

Losses are written as float32 bits ("0x%08x") and as decimals. Gradients are
float32 little-endian, tensors in state_dict order, with an index (name,
shape, offset in floats, numel, L2 norm) in the JSON. Threads: torch runs on
one thread so the numbers do not depend on the machine's core count.
Tests (tests/test_golden_train.c) read these files; they never run this.
"""

from __future__ import annotations

import hashlib
import importlib.util
import inspect
import json
import platform
import random
import struct
import sys
import time
from pathlib import Path

import numpy as np
import sentencepiece
import torch

REPO = Path(__file__).resolve().parent.parent
OUT_JSON = REPO / "golden/train_tiny.json"
OUT_GRADS = REPO / "golden/train_tiny_grads.bin"
DATA = "data/demo"
STEPS = 20

# The tiny preset of trainer/model.h and the batch of the brief; every other
# Hyperparameters value stays the official default (recorded in the JSON).
OVERRIDES = {
    "data_path": DATA,
    "train_files": DATA + "/fineweb_train_*.bin",
    "val_files": DATA + "/fineweb_val_*.bin",
    "tokenizer_path": "data/tokenizers/fineweb_1024_bpe.model",
    "run_id": "golden",
    "seed": 1337,
    "vocab_size": 1024,
    "num_layers": 4,
    "model_dim": 64,
    "num_heads": 4,
    "num_kv_heads": 2,
    "mlp_mult": 2,
    "train_seq_len": 128,
    "train_batch_tokens": 8192,
    "iterations": 20000,
    "warmdown_iters": 1200,
    "max_wallclock_seconds": 0.0,
}
WORLD_SIZE, RANK = 1, 0


def load_official(path: str):
    spec = importlib.util.spec_from_file_location("official_train_gpt", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # inspect.getsource of its classes looks it up here
    spec.loader.exec_module(mod)
    return mod


def make_args(mod):
    args = mod.Hyperparameters()
    for k, v in OVERRIDES.items():
        if not hasattr(args, k):
            raise SystemExit(f"official Hyperparameters has no {k}")
        setattr(args, k, v)
    return args


def args_dict(args) -> dict:
    keys = sorted(k for k in dir(type(args)) if not k.startswith("_"))
    return {k: getattr(args, k) for k in keys}


def patched(mod, obj, old: str, new: str, ns: dict):
    """Re-define obj from its own source with `old` replaced by `new` once."""
    src = inspect.getsource(obj)
    if src.count(old) != 1:
        raise SystemExit(f"expected exactly one {old!r} in {obj.__name__}, found {src.count(old)}")
    exec(compile(src.replace(old, new), f"<{obj.__name__} float32 variant>", "exec"), ns)
    return ns[obj.__name__]


def float32_muon(mod):
    """The official Muon with Newton-Schulz and its update buffer in float32."""
    ns = dict(mod.__dict__)
    patched(mod, mod.zeropower_via_newtonschulz5, "G.bfloat16()", "G.float()", ns)
    return patched(mod, mod.Muon, "dtype=torch.bfloat16", "dtype=torch.float32", ns)


def build_model(mod, args):
    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    model = mod.GPT(
        vocab_size=args.vocab_size,
        num_layers=args.num_layers,
        model_dim=args.model_dim,
        num_heads=args.num_heads,
        num_kv_heads=args.num_kv_heads,
        mlp_mult=args.mlp_mult,
        tie_embeddings=args.tie_embeddings,
        tied_embed_init_std=args.tied_embed_init_std,
        logit_softcap=args.logit_softcap,
        rope_base=args.rope_base,
        qk_gain_init=args.qk_gain_init,
    ).bfloat16()
    for module in model.modules():
        if isinstance(module, mod.CastedLinear):
            module.float()
    mod.restore_low_dim_params_to_fp32(model)
    return model


def f32_bytes(t: torch.Tensor) -> bytes:
    return t.detach().to(torch.float32).contiguous().numpy().astype("<f4").tobytes()


def sha(b: bytes) -> str:
    return hashlib.sha256(b).hexdigest()


def init_record(model) -> dict:
    whole = hashlib.sha256()
    tensors = []
    for name, t in model.state_dict().items():
        b = f32_bytes(t)
        whole.update(b)
        tensors.append({"name": name, "shape": list(t.shape), "dtype": str(t.dtype).removeprefix("torch."),
                        "sha256": sha(b)})
    return {"sha256": whole.hexdigest(), "tensors": tensors}


def bits(x: float) -> str:
    return "0x%08x" % struct.unpack("<I", struct.pack("<f", x))[0]


def loss_rec(t: torch.Tensor) -> dict:
    v = float(t.detach().to(torch.float32).item())
    return {"bits": bits(v), "value": "%.9g" % v}


def make_optimizers(mod, args, model, muon_cls):
    named = list(model.blocks.named_parameters())
    pats = mod.CONTROL_TENSOR_NAME_PATTERNS
    matrix = [p for n, p in named if p.ndim == 2 and not any(q in n for q in pats)]
    scalar = [p for n, p in named if p.ndim < 2 or any(q in n for q in pats)]
    if model.skip_weights.numel() > 0:
        scalar.append(model.skip_weights)
    lr_tok = args.tied_embed_lr if args.tie_embeddings else args.embed_lr
    betas = (args.beta1, args.beta2)
    opt_tok = torch.optim.Adam([{"params": [model.tok_emb.weight], "lr": lr_tok, "base_lr": lr_tok}],
                               betas=betas, eps=args.adam_eps, fused=True)
    opt_muon = muon_cls(matrix, lr=args.matrix_lr, momentum=args.muon_momentum,
                        backend_steps=args.muon_backend_steps)
    for g in opt_muon.param_groups:
        g["base_lr"] = args.matrix_lr
    opt_scalar = torch.optim.Adam([{"params": scalar, "lr": args.scalar_lr, "base_lr": args.scalar_lr}],
                                  betas=betas, eps=args.adam_eps, fused=True)
    return [opt_tok, opt_muon, opt_scalar], opt_muon


def lr_mul(args, step: int) -> float:
    # main()'s step-based rule (max_wallclock_seconds = 0).
    if args.warmdown_iters <= 0:
        return 1.0
    start = max(args.iterations - args.warmdown_iters, 0)
    if start <= step < args.iterations:
        return max((args.iterations - step) / max(args.warmdown_iters, 1), 0.0)
    return 1.0


def train(mod, args, model, muon_cls, autocast: bool) -> list[dict]:
    grad_accum = 8 // WORLD_SIZE
    grad_scale = 1.0 / grad_accum
    optimizers, opt_muon = make_optimizers(mod, args, model, muon_cls)
    loader = mod.DistributedTokenLoader(args.train_files, RANK, WORLD_SIZE, torch.device("cpu"))
    model.train()
    out = []
    for step in range(STEPS):
        scale = lr_mul(args, step)
        for opt in optimizers:
            opt.zero_grad(set_to_none=True)
        train_loss = torch.zeros(())
        micro = []
        for _ in range(grad_accum):
            x, y = loader.next_batch(args.train_batch_tokens, args.train_seq_len, grad_accum)
            with torch.autocast(device_type="cpu", dtype=torch.bfloat16, enabled=autocast):
                loss = model(x, y)
            train_loss += loss.detach()
            micro.append(bits(float(loss.detach().float().item())))
            (loss * grad_scale).backward()
        train_loss /= grad_accum
        frac = min(step / args.muon_momentum_warmup_steps, 1.0) if args.muon_momentum_warmup_steps > 0 else 1.0
        momentum = (1 - frac) * args.muon_momentum_warmup_start + frac * args.muon_momentum
        for g in opt_muon.param_groups:
            g["momentum"] = momentum
        for opt in optimizers:
            for g in opt.param_groups:
                g["lr"] = g["base_lr"] * scale
        if args.grad_clip_norm > 0:
            torch.nn.utils.clip_grad_norm_(model.parameters(), args.grad_clip_norm)
        for opt in optimizers:
            opt.step()
        for opt in optimizers:
            opt.zero_grad(set_to_none=True)
        rec = loss_rec(train_loss)
        out.append({"step": step + 1, "train_loss_bits": rec["bits"], "train_loss": rec["value"],
                     "lr_mul": scale, "muon_momentum": momentum, "micro_loss_bits": micro})
        print(f"  step {step + 1:2d} train_loss {rec['value']}", file=sys.stderr)
    return out


def fp32_step0(mod, args, model) -> tuple[dict, dict, bytes]:
    loader = mod.DistributedTokenLoader(args.train_files, RANK, WORLD_SIZE, torch.device("cpu"))
    x, y = loader.next_batch(args.train_batch_tokens, args.train_seq_len, 8 // WORLD_SIZE)
    batch = {"x_shape": list(x.shape),
             "x_sha256_u16le": sha(x.numpy().astype("<u2").tobytes()),
             "y_sha256_u16le": sha(y.numpy().astype("<u2").tobytes()),
             "x_first": [int(v) for v in x.reshape(-1)[:8]],
             "y_first": [int(v) for v in y.reshape(-1)[:8]]}
    model.train()
    loss = model(x, y)
    loss.backward()
    blob = bytearray()
    index = []
    sd_names = list(model.state_dict().keys())
    named = list(model.named_parameters())
    if [n for n, _ in named] != sd_names:
        raise SystemExit("named_parameters order differs from state_dict order")
    for name, p in named:
        g = p.grad.detach().to(torch.float32).contiguous()
        index.append({"name": name, "shape": list(g.shape), "offset": len(blob) // 4, "numel": g.numel(),
                      "l2": "%.9g" % float(g.double().norm().item())})
        blob += g.numpy().astype("<f4").tobytes()
    return {"loss": loss_rec(loss), "batch": batch}, {"tensors": index}, bytes(blob)


class CudaAutocastPolicy:
    """AutocastCPU kernels for the ops CUDA autocast runs in float32 and CPU
    autocast does not (among those this model calls): rms_norm, pow."""

    def __init__(self):
        self.lib = torch.library.Library("aten", "IMPL")
        self.lib.impl("rms_norm", self._fp32(torch.ops.aten.rms_norm.default), "AutocastCPU")
        self.lib.impl("pow.Tensor_Scalar", self._fp32(torch.ops.aten.pow.Tensor_Scalar), "AutocastCPU")

    @staticmethod
    def _fp32(op):
        def kernel(*a, **kw):
            keys = torch._C.DispatchKeySet(torch._C.DispatchKey.AutocastCPU)
            with torch._C._ExcludeDispatchKeyGuard(keys):
                a = [t.float() if isinstance(t, torch.Tensor) and t.is_floating_point() else t for t in a]
                return op(*a, **kw)
        return kernel


def check_cuda_policy_active():
    x = torch.ones(2, 4, dtype=torch.bfloat16)
    with torch.autocast(device_type="cpu", dtype=torch.bfloat16):
        a = torch.nn.functional.rms_norm(x, (4,)).dtype
        b = x.square().dtype
    if a != torch.float32 or b != torch.float32:
        raise SystemExit(f"CUDA autocast policy not in effect: rms_norm {a}, square {b}")


def main() -> None:
    if len(sys.argv) != 2:
        raise SystemExit(__doc__.split("\n\n")[1])
    official = Path(sys.argv[1])
    torch.set_num_threads(1)
    t0 = time.time()
    mod = load_official(str(official))
    args = make_args(mod)
    import os
    os.chdir(REPO)  # data paths are relative to the repository

    rec: dict = {
        "what": "official train_gpt.py, tiny preset on data/demo: initial parameters, fp32 step-0 loss "
                "and gradients, 20 training steps in fp32 and in mixed precision",
        "generator": {
            "script": "golden/make_train_golden.py",
            "command": "python3 golden/make_train_golden.py " + str(official),
            "official_train_gpt_sha256": sha(official.read_bytes()),
            "versions": {"python": platform.python_version(), "torch": torch.__version__,
                         "numpy": np.__version__, "sentencepiece": sentencepiece.__version__},
            "cpu_capability": torch.backends.cpu.get_cpu_capability(),
            "torch_threads": torch.get_num_threads(),
            "machine": platform.machine(),
        },
        "config": {
            "hyperparameters": args_dict(args),
            "world_size": WORLD_SIZE,
            "grad_accum_steps": 8 // WORLD_SIZE,
            "grad_scale": 1.0 / (8 // WORLD_SIZE),
            "micro_batch_seqs": args.train_batch_tokens // 8 // args.train_seq_len,
            "tokens_taken_per_micro_step": args.train_batch_tokens // 8 + 1,
            "steps": STEPS,
            "control_tensor_name_patterns": list(mod.CONTROL_TENSOR_NAME_PATTERNS),
            "optimizer_step_order": ["adam tok_emb.weight (tied_embed_lr)", "muon block matrices (matrix_lr)",
                                     "adam block vectors/control tensors then skip_weights (scalar_lr)"],
            "adam_fused": True,
            "notes": ["lr_mul is main()'s step-based rule (max_wallclock_seconds 0): 1 for these steps",
                      "main()'s warmup_steps are not run: main() restores weights, optimizer states "
                      "and loader after them, so they do not change the run",
                      "no gradient clipping (grad_clip_norm 0)"],
        },
    }

    model = build_model(mod, args)
    rec["init"] = init_record(model)
    inv = model.blocks[0].attn.rotary.inv_freq
    rec["rotary"] = {
        "inv_freq_dtype_after_round_trip": str(inv.dtype).removeprefix("torch."),
        "inv_freq_bits": [bits(float(v)) for v in inv.float()],
        "note": "the .bfloat16() round trip rounds the Rotary inv_freq buffer; fp32 mode widens "
                "these values; the mixed runs build positions, angles, cos and sin in bf16"}
    print(f"init sha256 {rec['init']['sha256']}", file=sys.stderr)

    muon32 = float32_muon(mod)
    model.float()
    step0, grad_index, blob = fp32_step0(mod, args, model)
    OUT_GRADS.write_bytes(blob)
    grad_index.update({"file": "golden/train_tiny_grads.bin", "format": "float32 little-endian",
                       "sha256": sha(blob), "floats": len(blob) // 4,
                       "scaled_by_grad_scale": False})
    print(f"fp32 step-0 loss {step0['loss']['value']}", file=sys.stderr)
    print("fp32 training", file=sys.stderr)
    model = build_model(mod, args).float()
    fp32_steps = train(mod, args, model, muon32, autocast=False)
    rec["fp32"] = {
        "description": "model cast to float32 entirely; no autocast; Newton-Schulz and the Muon update "
                       "buffer in float32 (see the script's docstring for the two source changes)",
        "step0": step0, "grads": grad_index, "steps": fp32_steps}

    print("mixed training (CPU autocast)", file=sys.stderr)
    model = build_model(mod, args)
    rec["mixed"] = {
        "description": "official mixed precision on CPU: tok_emb bf16, torch.autocast('cpu', bfloat16) "
                       "around the forward, official bf16 Newton-Schulz and Muon update buffer; CPU "
                       "autocast keeps rms_norm and pow in the input dtype (CUDA: float32)",
        "steps": train(mod, args, model, mod.Muon, autocast=True)}

    print("mixed training (CUDA autocast policy for rms_norm and pow)", file=sys.stderr)
    policy = CudaAutocastPolicy()
    check_cuda_policy_active()
    model = build_model(mod, args)
    rec["mixed_cuda_policy"] = {
        "description": "as mixed, with AutocastCPU kernels for aten::rms_norm and aten::pow.Tensor_Scalar "
                       "that follow CUDA autocast's fp32 policy: the official CUDA rounding points on CPU",
        "steps": train(mod, args, model, mod.Muon, autocast=True)}
    del policy

    rec["generator"]["seconds"] = round(time.time() - t0, 1)
    OUT_JSON.write_text(json.dumps(rec, indent=1) + "\n")
    print(f"wrote {OUT_JSON} and {OUT_GRADS} in {rec['generator']['seconds']} s", file=sys.stderr)


if __name__ == "__main__":
    main()
