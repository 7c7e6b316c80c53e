"""Fusing BM25F's ranking with the semantic one: a linear mix of normalised scores.

BM25F is precise when the query shares words with the tool and blind when it does not
("sprinkle the lawn" for `water_garden`); the static vectors see the meaning but
blur the details that BM25F gets right (`*_get` vs `*_list`). So each candidate scores

    lexical / best lexical  +  ALPHA · (cosine − mean cosine) / (best cosine − mean cosine)

the lexical part in [0, 1] (the query's best BM25F hit is 1) and the semantic part at most ALPHA,
measured against the catalogue's average so that a query's general drift counts for nothing.
Candidates are BM25F's best `depth` and the semantic best `depth`. A tool with no lexical match
must reach MIN_COSINE and stand MIN_LIFT above the mean: an unrelated query ("zxqv wplk") still has
a nearest tool, but not a near one, and a query near everything picks out nothing.

Reciprocal rank fusion was measured too and lost: it throws the scores away, so a clear BM25F
winner and a near tie weigh the same. So did dividing the lexical score by the best a query could
reach instead of by its best hit (docs/search.md has the figures).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import numpy.typing as npt

from mcpmanager.core.search.document import Hit

ALPHA = 0.3  # the static vectors' weight against the lexical part's 1 (tuned on half of each set)
MIN_COSINE = 0.3  # a tool that shares no word with the query must be at least this near
MIN_LIFT = 0.2  # ... and this much nearer than the catalogue's average tool


def fuse(
    lexical: Sequence[Hit],
    cosines: npt.NDArray[np.float32],
    slot_of: Callable[[str], int | None],
    key_of: Callable[[int], str | None],
    limit: int,
    depth: int,
    alpha: float = ALPHA,
) -> list[Hit]:
    """The best `limit` tools of the fused ranking, best first; ties in BM25F's order (by exposed
    name), then by key. `alpha`: the semantic part's weight (each model has its own: `semantic.Model`)."""
    if not len(cosines):
        return list(lexical[:limit])
    alive = cosines != 0.0
    # In float64: the same catalogue built in another order must give the same scores.
    mean = float(cosines[alive].astype(np.float64).mean()) if alive.any() else 0.0
    top = np.argpartition(-cosines, depth - 1)[:depth] if len(cosines) > depth else np.arange(len(cosines))
    best = float(cosines[top].max())
    spread = best - mean
    best_lexical = lexical[0].score if lexical else 1.0
    scores: dict[str, float] = {hit.key: hit.score / best_lexical for hit in lexical}
    for slot in top.tolist():
        key = key_of(slot)
        if key is not None and key not in scores and cosines[slot] >= MIN_COSINE and cosines[slot] - mean >= MIN_LIFT:
            scores[key] = 0.0
    if spread > 0:
        for key in scores:
            slot = slot_of(key)
            if slot is not None:
                scores[key] += alpha * (float(cosines[slot]) - mean) / spread
    order = {hit.key: rank for rank, hit in enumerate(lexical)}
    ranked = sorted(scores.items(), key=lambda item: (-item[1], order.get(item[0], len(order)), item[0]))
    return [Hit(key, score) for key, score in ranked[:limit]]
