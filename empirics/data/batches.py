"""Batch sources over token shards, in the form the trainer takes (`batches(step, micro)`).

Training batches are random windows of the first n tokens of the training split; the offsets
depend only on (seed, step, micro), so a resumed run sees exactly the batches it would have seen.
Evaluation uses fixed, non-overlapping windows.
"""

from __future__ import annotations

import numpy as np
import torch


class LMBatches:
    """Random (x, y) windows from tokens[:n]: x = tokens[o:o+T], y = tokens[o+1:o+T+1], each (B, T)."""

    def __init__(self, tokens: np.ndarray, n: int, block_size: int, batch_size: int, seed: int = 0):
        if n > len(tokens):
            raise ValueError(f"n={n:,} tokens exceeds the training split ({len(tokens):,} tokens)")
        if n < block_size + 2:
            raise ValueError(f"n={n:,} tokens is shorter than one window of {block_size + 1} tokens")
        self.tokens, self.n, self.T, self.B, self.seed = tokens, n, block_size, batch_size, seed

    def __call__(self, step: int, micro: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
        rng = np.random.default_rng([self.seed, step, micro])
        offsets = rng.integers(0, self.n - self.T - 1, size=self.B)
        w = np.stack([np.asarray(self.tokens[o : o + self.T + 1], dtype=np.int64) for o in offsets])  # (B, T+1)
        w = torch.from_numpy(w)
        return w[:, :-1], w[:, 1:]


def eval_windows(tokens: np.ndarray, block_size: int, batch_size: int, max_tokens: int | None = None) -> list:
    """Non-overlapping (x, y) windows covering tokens[:max_tokens], in batches of at most batch_size."""
    n = len(tokens) if max_tokens is None else min(len(tokens), max_tokens)
    count = (n - 1) // block_size
    if count == 0:
        raise ValueError(f"evaluation split has {n} tokens, fewer than one window of {block_size + 1}")
    arr = np.asarray(tokens[: count * block_size + 1], dtype=np.int64)
    x = torch.from_numpy(arr[:-1].reshape(count, block_size))  # (count, T)
    y = torch.from_numpy(arr[1:].reshape(count, block_size))  # (count, T)
    return [(x[i : i + batch_size], y[i : i + batch_size]) for i in range(0, count, batch_size)]
