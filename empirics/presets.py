"""Presets for pretraining and the data-scaling sweep: data, model, optimisation and grid in one place.

The training-set sizes n (in tokens) form a geometric grid from `n_min` up to the full training
split, whose size is the corpus's training tokens capped at `n_max`; the largest run therefore
trains on the full split, and it is the model whose embeddings give the intrinsic dimension.

Timings are for 2 CPU cores unless stated; GPU figures are design targets, not measured here.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, replace

from tmcheck.empirics.model import GPTConfig
from tmcheck.empirics.train import TrainConfig


@dataclass
class Preset:
    name: str
    corpora: tuple[str, ...]          # corpora of the sweep (`--corpus` overrides)
    model: GPTConfig                  # vocab_size is taken from the tokenizer
    train: TrainConfig
    batch_size: int = 32              # sequences per micro-batch
    vocab_size: int = 1024            # BPE vocabulary
    tokenizer_bytes: int = 4_000_000  # bytes of training text the BPE sees
    n_min: int = 16_384               # smallest training-set size, tokens
    n_max: int = 10**9                # cap on the full training split, tokens
    n_sizes: int = 5                  # points of the geometric grid
    seeds: tuple[int, ...] = (0, 1)   # training seeds per size
    max_eval_tokens: int = 32_768     # tokens of the val and test splits used for losses
    id_docs: int = 256                # test documents embedded for the ID (paper: the whole test set)
    id_context: int = 1024            # tokens per document fed to the model (paper: 1024)
    id_tokens_per_doc: int = 32       # embedded tokens per document (paper: 32)
    notes: str = ""

    def grid(self, train_tokens: int) -> list[int]:
        """Geometric grid of n from n_min to the full training split (already capped near n_max when the
        data were prepared), rounded to integers."""
        top = train_tokens
        if top < self.n_min:
            raise ValueError(f"the training split has {train_tokens:,} tokens, fewer than n_min={self.n_min:,}")
        if self.n_sizes == 1:
            return [top]
        r = (top / self.n_min) ** (1 / (self.n_sizes - 1))
        return [int(round(self.n_min * r**i)) for i in range(self.n_sizes - 1)] + [top]

    def as_dict(self) -> dict:
        return asdict(self)


PRESETS: dict[str, Preset] = {
    "tiny": Preset(
        name="tiny", corpora=("stories",),
        model=GPTConfig(block_size=32, n_layer=1, n_head=2, n_embd=32),
        train=TrainConfig(max_steps=150, lr=3e-3, min_lr=3e-4, warmup_steps=10, eval_every=15, patience=2),
        batch_size=16, vocab_size=384, tokenizer_bytes=300_000, n_min=2_000, n_max=40_000, n_sizes=3,
        seeds=(0, 1), max_eval_tokens=4_096, id_docs=96, id_context=64, id_tokens_per_doc=8,
        notes="one corpus, the whole pipeline in well under 3 minutes on 2 cores; used by the tests"),
    "cpu-demo": Preset(
        name="cpu-demo", corpora=("code", "prose", "stories"),
        model=GPTConfig(block_size=64, n_layer=2, n_head=4, n_embd=64),
        train=TrainConfig(max_steps=400, lr=2e-3, min_lr=2e-4, warmup_steps=20, eval_every=25, patience=3),
        batch_size=32, vocab_size=512, tokenizer_bytes=2_000_000, n_min=4_000, n_max=128_000, n_sizes=5,
        seeds=(0, 1), max_eval_tokens=8_192, id_docs=200, id_context=256, id_tokens_per_doc=32,
        notes="three corpora, 5 sizes over 1.5 decades, 2 seeds; under 20 minutes on 2 cores; `make demo`"),
    "cpu-small": Preset(
        name="cpu-small", corpora=("code", "prose", "stories"),
        model=GPTConfig(block_size=128, n_layer=4, n_head=4, n_embd=128),
        train=TrainConfig(max_steps=1500, lr=1e-3, min_lr=1e-4, warmup_steps=100, eval_every=100, patience=3),
        batch_size=32, vocab_size=2048, n_min=32_000, n_max=2_000_000, n_sizes=6, seeds=(0, 1),
        max_eval_tokens=65_536, id_docs=512, id_context=512, id_tokens_per_doc=32,
        notes="about 2 hours on 2 cores: 6 sizes over 1.8 decades"),
    "gpu-quick": Preset(
        name="gpu-quick", corpora=("code", "prose", "stories"),
        model=GPTConfig(block_size=256, n_layer=6, n_head=6, n_embd=384),
        train=TrainConfig(max_steps=600, lr=1e-3, min_lr=1e-4, warmup_steps=50, eval_every=50, patience=3),
        batch_size=64, vocab_size=4096, n_min=8_000, n_max=8_000_000, n_sizes=6, seeds=(0, 1),
        max_eval_tokens=131_072, id_docs=2048, id_context=1024, id_tokens_per_doc=32,
        notes="sized for about 8 minutes on one H200 (bf16), 3 decades of n; not measured in this repository"),
    "gpu-paper": Preset(
        name="gpu-paper", corpora=("code", "prose", "stories"),
        model=GPTConfig(block_size=1024, n_layer=12, n_head=12, n_embd=768),
        train=TrainConfig(max_steps=200_000, lr=6e-4, min_lr=6e-5, warmup_steps=2000, eval_every=1000, patience=5,
                          grad_accum=60),
        batch_size=32, vocab_size=50_257, tokenizer_bytes=50_000_000, n_min=1_000_000, n_max=10**10, n_sizes=7,
        seeds=(0, 1), max_eval_tokens=1_048_576, id_docs=10**9, id_context=1024, id_tokens_per_doc=32,
        notes="Table 2: 12 layers, 12 heads, width 768, context 1024, AdamW 6e-4 -> 6e-5, 2000 warmup, "
              "200k steps, global batch 1920 sequences (32 x 60 accumulation; Table 2 does not say "
              "sequences or tokens); the n grid spans 3 decades where the corpus allows"),
}


def get_preset(name: str, **overrides) -> Preset:
    if name not in PRESETS:
        raise ValueError(f"unknown preset {name!r}; choose from {', '.join(PRESETS)}")
    return replace(PRESETS[name], **overrides) if overrides else PRESETS[name]


def decades(grid: list[int]) -> float:
    return math.log10(grid[-1] / grid[0])
