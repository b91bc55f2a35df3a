#!/usr/bin/env python3
"""Golden byte accounting of the demo shards, made with the sentencepiece library.

Reads data/demo/fineweb_{val,train}_*.bin (the challenge shard format) and the
sp1024 tokenizer, builds the official per-token tables with sentencepiece:

  control, unknown, unused piece -> is_boundary, base_bytes 0
  byte piece (<0xNN>)            -> base_bytes 1
  any other piece                -> base_bytes = UTF-8 length of the piece
                                    after stripping one leading U+2581,
                                    which sets has_leading_space

and counts, over the whole concatenated split stream t_0..t_{n-1}, the bytes of
each target t_i (i >= 1):
  base_bytes[t_i] + (has_leading_space[t_i] and not is_boundary[t_{i-1}])

It reports the total both over all n-1 targets and with the official
evaluation's truncation to whole sequences (targets 1..((n-1)//L)*L, L=1024),
and cross-checks the total against the UTF-8 length of sp.decode() of every
document (documents are the runs that start at each BOS token).

Output: golden/demo_bytes.json. Tests read that file; they never run this.
Usage: python3 golden/make_demo_bytes.py
"""

from __future__ import annotations

import hashlib
import json
import platform
import sys
from pathlib import Path

import numpy as np
import sentencepiece as spm

REPO = Path(__file__).resolve().parent.parent
MODEL = REPO / "data/tokenizers/fineweb_1024_bpe.model"
DEMO = REPO / "data/demo"
OUT = REPO / "golden/demo_bytes.json"
SEQ_LEN = 1024
MAGIC, VERSION = 20240520, 1


def sha256_file(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def read_shard(path: Path) -> np.ndarray:
    raw = path.read_bytes()
    header = np.frombuffer(raw[:1024], dtype="<i4")
    if header[0] != MAGIC or header[1] != VERSION:
        sys.exit(f"{path}: bad magic/version")
    count = int(header[2])
    if len(raw) != 1024 + 2 * count or header[3:].any():
        sys.exit(f"{path}: bad size or nonzero reserved header words")
    return np.frombuffer(raw[1024:], dtype="<u2").astype(np.int64)


def tables(sp: spm.SentencePieceProcessor):
    n = sp.vocab_size()
    base = np.zeros(n, dtype=np.int64)
    lead = np.zeros(n, dtype=bool)
    boundary = np.zeros(n, dtype=bool)
    for t in range(n):
        if sp.is_control(t) or sp.is_unknown(t) or sp.is_unused(t):
            boundary[t] = True
            continue
        if sp.is_byte(t):
            base[t] = 1
            continue
        piece = sp.id_to_piece(t)
        if piece.startswith("\u2581"):
            lead[t] = True
            piece = piece[1:]
        base[t] = len(piece.encode("utf-8"))
    return base, lead, boundary


def target_bytes(tok: np.ndarray, base, lead, boundary) -> np.ndarray:
    """Per-target bytes for targets 1..n-1 (array of length n-1)."""
    prev, cur = tok[:-1], tok[1:]
    return base[cur] + (lead[cur] & ~boundary[prev]).astype(np.int64)


def split_report(split: str, sp, base, lead, boundary) -> dict:
    paths = sorted(DEMO.glob(f"fineweb_{split}_*.bin"))
    if not paths:
        sys.exit(f"no {split} shards in {DEMO}")
    shards = []
    parts = []
    for p in paths:
        t = read_shard(p)
        parts.append(t)
        shards.append({"name": p.name, "tokens": int(t.size), "file_bytes": p.stat().st_size,
                       "sha256": sha256_file(p)})
    tok = np.concatenate(parts)
    n = int(tok.size)
    bos = sp.bos_id()
    if tok.max() >= sp.vocab_size():
        sys.exit(f"{split}: token id outside the vocabulary")
    if tok[0] != bos:
        sys.exit(f"{split}: stream does not start with BOS")

    per = target_bytes(tok, base, lead, boundary)
    total = int(per.sum())
    usable = ((n - 1) // SEQ_LEN) * SEQ_LEN
    total_trunc = int(per[:usable].sum())

    # Documents: each starts at a BOS token (sp.encode never emits control ids).
    starts = np.flatnonzero(tok == bos)
    ends = np.append(starts[1:], n)
    decoded = 0
    docs_first_lead = 0
    docs_empty = 0
    docs_mismatch = 0
    for s, e in zip(starts, ends):
        ids = tok[s + 1:e].tolist()
        if not ids:
            docs_empty += 1
            continue
        if lead[ids[0]]:
            docs_first_lead += 1
        d = len(sp.decode(ids).encode("utf-8"))
        decoded += d
        # bytes the rule gives this document's tokens (targets s+1..e-1)
        if int(per[s:e - 1].sum()) != d:
            docs_mismatch += 1

    unknown = int(sum(int(np.count_nonzero(tok == t)) for t in range(sp.vocab_size())
                      if sp.is_unknown(t)))
    byte_pieces = int(np.isin(tok, [t for t in range(sp.vocab_size()) if sp.is_byte(t)]).sum())
    # Leading-space tokens whose space the rule counts / drops (prev is a boundary).
    cur, prev = tok[1:], tok[:-1]
    lead_counted = int((lead[cur] & ~boundary[prev]).sum())
    lead_dropped = int((lead[cur] & boundary[prev]).sum())

    return {
        "shards": shards,
        "tokens": n,
        "documents": int(starts.size),
        "empty_documents": docs_empty,
        "bos_tokens": int(starts.size),
        "targets": n - 1,
        "target_bytes": total,
        "decoded_text_bytes": decoded,
        "totals_agree": total == decoded,
        "documents_whose_totals_disagree": docs_mismatch,
        "unknown_tokens": unknown,
        "byte_piece_tokens": byte_pieces,
        "leading_space_counted": lead_counted,
        "leading_space_dropped_after_boundary": lead_dropped,
        "documents_first_piece_has_leading_space": docs_first_lead,
        "tokens_per_byte": (n - 1) / total,
        "first_sequence_target_bytes": int(per[:SEQ_LEN].sum()),
        "truncated": {
            "seq_len": SEQ_LEN,
            "sequences": usable // SEQ_LEN,
            "targets": usable,
            "target_bytes": total_trunc,
            "tokens_per_byte": usable / total_trunc,
        },
    }


def main() -> None:
    sp = spm.SentencePieceProcessor(model_file=str(MODEL))
    base, lead, boundary = tables(sp)
    out = {
        "what": "byte accounting of the demo shards by the official previous-token rule",
        "generator": "golden/make_demo_bytes.py",
        "versions": {"python": platform.python_version(), "sentencepiece": spm.__version__,
                     "numpy": np.__version__},
        "tokenizer": {
            "path": "data/tokenizers/fineweb_1024_bpe.model",
            "sha256": sha256_file(MODEL),
            "vocab_size": sp.vocab_size(),
            "bos_id": sp.bos_id(), "eos_id": sp.eos_id(), "unk_id": sp.unk_id(), "pad_id": sp.pad_id(),
            "boundary_pieces": int(boundary.sum()),
            "byte_pieces": int(sum(sp.is_byte(t) for t in range(sp.vocab_size()))),
            "leading_space_pieces": int(lead.sum()),
            "base_bytes_sum": int(base.sum()),
        },
        "rule": "target i>=1: base_bytes[t_i] + (has_leading_space[t_i] && !is_boundary[t_{i-1}])",
        "splits": {s: split_report(s, sp, base, lead, boundary) for s in ("val", "train")},
    }
    OUT.write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    for s, r in out["splits"].items():
        print(f"{s}: tokens {r['tokens']} docs {r['documents']} target_bytes {r['target_bytes']} "
              f"decoded {r['decoded_text_bytes']} agree {r['totals_agree']} "
              f"truncated {r['truncated']['targets']}/{r['truncated']['target_bytes']}")


if __name__ == "__main__":
    main()
