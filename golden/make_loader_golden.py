#!/usr/bin/env python3
"""Golden batches of the official training loader, made with the official code.

Imports the challenge's train_gpt.py from the path given (never copied into
this repository) and records what its DistributedTokenLoader.next_batch
returns, as SHA-256 of the x and y token ids (uint16 little-endian, row-major)
plus the first tokens, for:

  demo     data/demo/fineweb_train_*.bin, global 4096 tokens, seq 128,
           grad_accum 8: world 1 (rank 0) and world 2 (ranks 0 and 1),
           the first 3 batches;
  wrap     four small synthetic shards (sizes 1000, 0, 777, 1500; token j of
           shard f is (j*31 + f*7) mod 1024), global 256, seq 16, grad_accum
           2, world 2, ranks 0 and 1, 30 batches: the stream crosses every
           file boundary, skips the empty shard and wraps to the first file.
           tests/test_loader.c writes the same shards.

Output: golden/loader.json. Tests read it; they never run this.
Usage: python3 golden/make_loader_golden.py OFFICIAL_TRAIN_GPT_PATH
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import platform
import sys
import tempfile
from pathlib import Path

import numpy as np
import torch

REPO = Path(__file__).resolve().parent.parent
OUT = REPO / "golden/loader.json"
WRAP_SIZES = [1000, 0, 777, 1500]


def load_official(path: str):
    spec = importlib.util.spec_from_file_location("official_train_gpt", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def write_shard(path: Path, tokens: np.ndarray) -> None:
    header = np.zeros(256, dtype="<i4")
    header[0], header[1], header[2] = 20240520, 1, len(tokens)
    path.write_bytes(header.tobytes() + tokens.astype("<u2").tobytes())


def batches(off, pattern: str, rank: int, world: int, global_tokens: int, seq: int, accum: int, n: int):
    loader = off.DistributedTokenLoader(pattern, rank, world, torch.device("cpu"))
    out = []
    for _ in range(n):
        x, y = loader.next_batch(global_tokens, seq, accum)
        xb = x.numpy().astype("<u2")
        yb = y.numpy().astype("<u2")
        out.append({
            "rows": int(xb.shape[0]),
            "x_sha256": hashlib.sha256(xb.tobytes()).hexdigest(),
            "y_sha256": hashlib.sha256(yb.tobytes()).hexdigest(),
            "x_first": [int(v) for v in xb.ravel()[:8]],
            "y_first": [int(v) for v in yb.ravel()[:8]],
        })
    state = {"file_idx": loader.stream.file_idx, "pos": loader.stream.pos}
    return {"rank": rank, "world": world, "batches": out, "end_state": state}


def main() -> None:
    if len(sys.argv) != 2:
        sys.exit("usage: make_loader_golden.py OFFICIAL_TRAIN_GPT_PATH")
    off = load_official(sys.argv[1])
    demo_pattern = str(REPO / "data/demo/fineweb_train_*.bin")
    demo = {
        "global_tokens": 4096, "seq_len": 128, "grad_accum": 8,
        "runs": [batches(off, demo_pattern, r, w, 4096, 128, 8, 3) for (r, w) in [(0, 1), (0, 2), (1, 2)]],
    }
    with tempfile.TemporaryDirectory() as d:
        for f, size in enumerate(WRAP_SIZES):
            toks = (np.arange(size, dtype=np.int64) * 31 + f * 7) % 1024
            write_shard(Path(d) / f"fineweb_train_{f:06d}.bin", toks)
        wrap = {
            "shard_sizes": WRAP_SIZES, "token_rule": "(j*31 + f*7) % 1024",
            "global_tokens": 256, "seq_len": 16, "grad_accum": 2,
            "runs": [batches(off, str(Path(d) / "fineweb_train_*.bin"), r, 2, 256, 16, 2, 30) for r in (0, 1)],
        }
    doc = {
        "what": "official DistributedTokenLoader.next_batch batches",
        "generator": "golden/make_loader_golden.py",
        "official_source_sha256": hashlib.sha256(Path(sys.argv[1]).read_bytes()).hexdigest(),
        "versions": {"python": platform.python_version(), "torch": torch.__version__, "numpy": np.__version__},
        "demo": demo,
        "wrap": wrap,
    }
    OUT.write_text(json.dumps(doc, indent=1) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
