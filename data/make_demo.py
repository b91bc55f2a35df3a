#!/usr/bin/env python3
"""Make pgolf's embedded demo shards (data/demo/) from the King James Bible.

Source: the Debian packages bible-kjv-text (the text, /usr/lib/bible.data,
public domain) and bible-kjv (the `bible` program that decompresses it).
Install them first:  apt-get install bible-kjv bible-kjv-text

What it does, step by step:
  1. `bible -f Gen1:1-Rev22:21` prints every verse, one a line, as
     "<BookAbbrev><chapter>:<verse> <text>" (-f turns pretty-printing off;
     with no -l there is no line wrapping).
  2. One document per chapter, in canonical order (Genesis 1 .. Revelation 22,
     1189 chapters). A verse's text is whitespace-normalized (runs of
     whitespace become one space, ends stripped); the verses of a chapter are
     joined with single spaces. No headings, no verse numbers.
  3. Split by whole documents: chapter index i (0-based, canonical order)
     goes to validation when i % 10 == 0, to train otherwise.
  4. Each document is tokenized the way the challenge's exporter does it
     (openai/parameter-golf data/download_hf_docs_and_tokenize.py):
     [bos_id] + sp.encode(text, out_type=int), no EOS. Documents are
     concatenated in canonical order within each split.
  5. Shards in the challenge format: 256 little-endian int32 (magic 20240520,
     version 1, token count, zeros) then the tokens as little-endian uint16.
     One shard per split while a split stays under MAX_SHARD_TOKENS.

Python is needed only to MAKE these files; nothing at test time runs it.
The output is deterministic: the same package version and tokenizer give
byte-identical shards.

Usage: python3 data/make_demo.py [--model PATH] [--out DIR]
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import sentencepiece as spm

MAGIC = 20240520
VERSION = 1
HEADER_INTS = 256
VAL_EVERY = 10             # chapter i is validation iff i % VAL_EVERY == 0
MAX_SHARD_TOKENS = 2_000_000
EXPECT_VERSES = 31102
EXPECT_CHAPTERS = 1189
EXPECT_BOOKS = 66
BIBLE_RANGE = "Gen1:1-Rev22:21"

REPO = Path(__file__).resolve().parent.parent
VERSE_RE = re.compile(r"^([1-3]?[A-Za-z]+)(\d+):(\d+) (.*)$")


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def package_version(pkg: str) -> str:
    try:
        out = subprocess.run(["dpkg-query", "-W", "-f=${Version}", pkg],
                             capture_output=True, text=True, check=True)
        return out.stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def dump_bible() -> str:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LC_ALL": "C"}
    try:
        out = subprocess.run(["bible", "-f", BIBLE_RANGE], capture_output=True,
                             stdin=subprocess.DEVNULL, env=env, check=True)
    except FileNotFoundError:
        sys.exit("make_demo: `bible` not found; apt-get install bible-kjv bible-kjv-text")
    return out.stdout.decode("ascii")


def chapters(dump: str) -> list[tuple[str, int, str]]:
    """[(book abbreviation, chapter, document text)] in canonical order."""
    docs: list[tuple[str, int, list[str]]] = []
    verses = 0
    books: list[str] = []
    for line in dump.splitlines():
        if not line:
            continue
        m = VERSE_RE.match(line)
        if m is None:
            sys.exit(f"make_demo: unexpected line from bible: {line[:80]!r}")
        book, chap, text = m[1], int(m[2]), " ".join(m[4].split())
        if not text:
            sys.exit(f"make_demo: empty verse {m[1]}{m[2]}:{m[3]}")
        if not docs or docs[-1][0] != book or docs[-1][1] != chap:
            docs.append((book, chap, []))
            if not books or books[-1] != book:
                books.append(book)
        docs[-1][2].append(text)
        verses += 1
    if (verses, len(docs), len(books)) != (EXPECT_VERSES, EXPECT_CHAPTERS, EXPECT_BOOKS):
        sys.exit(f"make_demo: got {verses} verses, {len(docs)} chapters, {len(books)} books; "
                 f"expected {EXPECT_VERSES}, {EXPECT_CHAPTERS}, {EXPECT_BOOKS}")
    return [(b, c, " ".join(v)) for b, c, v in docs]


def write_shard(path: Path, tokens: np.ndarray) -> None:
    header = np.zeros(HEADER_INTS, dtype="<i4")
    header[0], header[1], header[2] = MAGIC, VERSION, tokens.size
    data = header.tobytes() + tokens.astype("<u2").tobytes()
    assert len(data) == 4 * HEADER_INTS + 2 * tokens.size
    tmp = path.with_suffix(".tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", type=Path, default=REPO / "data/tokenizers/fineweb_1024_bpe.model")
    ap.add_argument("--out", type=Path, default=REPO / "data/demo")
    args = ap.parse_args()

    sp = spm.SentencePieceProcessor(model_file=str(args.model))
    vocab, bos = sp.vocab_size(), sp.bos_id()
    if bos < 0 or vocab > 1 << 16:
        sys.exit("make_demo: tokenizer must have a BOS id and fit uint16")

    docs = chapters(dump_bible())
    texts = [t for _, _, t in docs]
    encoded = sp.encode(texts, out_type=int)

    split_tokens: dict[str, list[np.ndarray]] = {"val": [], "train": []}
    split_docs = {"val": 0, "train": 0}
    for i, ids in enumerate(encoded):
        split = "val" if i % VAL_EVERY == 0 else "train"
        arr = np.empty(len(ids) + 1, dtype=np.int64)
        arr[0] = bos
        arr[1:] = ids
        if arr.min() < 0 or arr.max() >= vocab:
            sys.exit(f"make_demo: token id out of range in document {i}")
        split_tokens[split].append(arr)
        split_docs[split] += 1

    args.out.mkdir(parents=True, exist_ok=True)
    for stale in list(args.out.glob("fineweb_train_*.bin")) + list(args.out.glob("fineweb_val_*.bin")):
        stale.unlink()

    print(f"source: bible-kjv-text {package_version('bible-kjv-text')}, "
          f"bible-kjv {package_version('bible-kjv')}, "
          f"/usr/lib/bible.data sha256 {sha256_file(Path('/usr/lib/bible.data'))}")
    print(f"tokenizer: {args.model.name} sha256 {sha256_file(args.model)}")
    for split in ("val", "train"):
        stream = np.concatenate(split_tokens[split])
        nshards = max(1, -(-stream.size // MAX_SHARD_TOKENS))
        print(f"{split}: {split_docs[split]} documents, {stream.size} tokens, {nshards} shard(s)")
        for k in range(nshards):
            part = stream[k * MAX_SHARD_TOKENS:(k + 1) * MAX_SHARD_TOKENS]
            path = args.out / f"fineweb_{split}_{k:06d}.bin"
            write_shard(path, part)
            print(f"  {sha256_file(path)}  {path.name}  {part.size} tokens, "
                  f"{path.stat().st_size} bytes")


if __name__ == "__main__":
    main()
