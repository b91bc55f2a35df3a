#!/usr/bin/env python3
"""Golden byte tables of the challenge tokenizers, made with the sentencepiece library.

For each data/tokenizers/fineweb_{1024,2048,4096,8192}_bpe.model this asks
sentencepiece itself (is_control / is_unknown / is_unused / is_byte /
id_to_piece) for every id and applies the challenge's byte-table rule:

  table size = max(pieces, vocab); defaults: 0 bytes, no leading space, boundary
  control, unknown, unused piece -> stays a boundary with 0 bytes
  byte piece (<0xNN>)            -> not a boundary, 1 byte
  any other piece                -> not a boundary, UTF-8 length of the text
                                    after stripping one leading U+2581, which
                                    sets has_leading_space

Outputs, in exactly the format of `pgolf tokenizer luts MODEL --json` (one
compact line and a newline) so the e2e test compares bytes:
  golden/tokenizer_luts_{1024,2048,4096,8192}.json
and golden/tokenizer_luts.meta.json: library and Python versions, the command,
each model's SHA-256, and per-model facts that `pgolf tokenizer info` reports
(piece type counts, special ids, byte fallback) for the unit tests to check.

Tests read these files; they never run this script.
Usage: python3 golden/make_tokenizer_luts.py
"""

from __future__ import annotations

import hashlib
import json
import platform
import sys
from pathlib import Path

import sentencepiece as spm

REPO = Path(__file__).resolve().parent.parent
SIZES = (1024, 2048, 4096, 8192)
SPACE = "\u2581"


def model_path(n: int) -> Path:
    return REPO / f"data/tokenizers/fineweb_{n}_bpe.model"


def tables(sp: spm.SentencePieceProcessor, vocab: int):
    pieces = sp.vocab_size()
    size = max(pieces, vocab)
    base = [0] * size
    space = [False] * size
    boundary = [True] * size
    for i in range(pieces):
        if sp.is_control(i) or sp.is_unknown(i) or sp.is_unused(i):
            continue
        boundary[i] = False
        if sp.is_byte(i):
            base[i] = 1
            continue
        text = sp.id_to_piece(i)
        if text.startswith(SPACE):
            space[i] = True
            text = text[len(SPACE):]
        base[i] = len(text.encode("utf-8"))
    return size, base, space, boundary


def luts_json(size: int, base, space, boundary) -> str:
    def bools(v):
        return ",".join("true" if x else "false" for x in v)

    return (
        f'{{"vocab_size":{size},"base_bytes":[{",".join(map(str, base))}],'
        f'"has_leading_space":[{bools(space)}],"is_boundary":[{bools(boundary)}]}}\n'
    )


def piece_type_counts(sp: spm.SentencePieceProcessor) -> dict:
    counts = dict(normal=0, unknown=0, control=0, user_defined=0, unused=0, byte=0)
    for i in range(sp.vocab_size()):
        if sp.is_control(i):
            counts["control"] += 1
        elif sp.is_unknown(i):
            counts["unknown"] += 1
        elif sp.is_unused(i):
            counts["unused"] += 1
        elif sp.is_byte(i):
            counts["byte"] += 1
        else:
            # The Python API cannot tell user-defined pieces from normal ones.
            counts["normal"] += 1
    return counts


def model_info(sp: spm.SentencePieceProcessor) -> dict:
    byte_texts = {f"<0x{b:02X}>" for b in range(256)}
    byte_pieces = sum(
        1 for i in range(sp.vocab_size()) if sp.is_byte(i) and sp.id_to_piece(i) in byte_texts
    )
    return {
        "pieces": sp.vocab_size(),
        "types": piece_type_counts(sp),
        "unk_id": sp.unk_id(),
        "bos_id": sp.bos_id(),
        "eos_id": sp.eos_id(),
        "pad_id": sp.pad_id(),
        "byte_pieces": byte_pieces,
        "space_piece_id": sp.piece_to_id(SPACE) if sp.piece_to_id(SPACE) != sp.unk_id() else -1,
    }


def main() -> None:
    meta = {
        "generator": "golden/make_tokenizer_luts.py",
        "command": "python3 golden/make_tokenizer_luts.py",
        "sentencepiece_version": spm.__version__,
        "python_version": platform.python_version(),
        "python_implementation": platform.python_implementation(),
        "rule": "openai/parameter-golf train_gpt.py build_sentencepiece_luts",
        "models": {},
    }
    for n in SIZES:
        path = model_path(n)
        sp = spm.SentencePieceProcessor(model_file=str(path))
        size, base, space, boundary = tables(sp, n)
        out = REPO / f"golden/tokenizer_luts_{n}.json"
        out.write_text(luts_json(size, base, space, boundary), encoding="utf-8")
        meta["models"][str(n)] = {
            "model": str(path.relative_to(REPO)),
            "sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
            "luts": str(out.relative_to(REPO)),
            "vocab": n,
            "total_base_bytes": sum(base),
            "leading_space_count": sum(space),
            "boundary_count": sum(boundary),
            "info": model_info(sp),
        }
        print(f"{out.relative_to(REPO)}: {size} entries", file=sys.stderr)
    meta_path = REPO / "golden/tokenizer_luts.meta.json"
    meta_path.write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
