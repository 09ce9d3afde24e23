"""Presets: every sweep kind's settings as one dataclass family, in one registry (paper Section 3).

`Preset` is the base (a name, notes, plain-data round trip); `PretrainPreset` configures the
pretraining data-scaling sweep (kind "pretrain", Figure 2), `SynthPreset` the synthetic manifold
regression (kind "synthetic", eq. 3-4). `PRESETS[kind][name]` holds the named presets of each kind.
A new kind subclasses Preset with its `kind` (the subclass registers itself for `preset_from_dict`)
and adds its dictionary of named presets to PRESETS.

Pretraining: the training-set sizes n (in tokens) form a geometric grid from `n_min` up to the full
training split, whose size is the corpus's training tokens capped at `n_max`; the largest run
therefore trains on the full split, and it is the model whose embeddings give the intrinsic dimension.

Timings are for 2 CPU cores unless stated; GPU figures are design targets, not measured here.
"""

from __future__ import annotations

import dataclasses
import math
import typing
from dataclasses import asdict, dataclass, replace
from typing import Any, ClassVar

from tmcheck.empirics.lm.gpt import GPTConfig
from tmcheck.empirics.lm.train import TrainConfig


def _from_plain(tp: Any, value: Any) -> Any:
    """A JSON value back as the annotated type: lists to tuples, dicts to dataclasses."""
    if dataclasses.is_dataclass(tp) and isinstance(value, dict):
        hints = typing.get_type_hints(tp)
        return tp(**{k: _from_plain(hints.get(k, Any), v) for k, v in value.items()})
    if typing.get_origin(tp) is tuple and isinstance(value, list):
        args = typing.get_args(tp)
        inner = args[0] if args else Any
        return tuple(_from_plain(inner, v) for v in value)
    return value


@dataclass(frozen=True, kw_only=True)
class Preset:
    """The base of every preset: `kind` (a class constant) names the sweep kind it configures."""

    kind: ClassVar[str] = ""
    classes: ClassVar[dict[str, type]] = {}  # kind -> its preset class; subclasses register themselves
    name: str
    notes: str = ""

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if cls.kind:
            Preset.classes[cls.kind] = cls

    def as_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> Preset:
        """The preset a config.json stores (unknown keys refused, missing ones take their defaults)."""
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(d) - names)
        if unknown:
            raise ValueError(f"a {cls.kind} preset has no setting {unknown[0]!r}")
        return _from_plain(cls, dict(d))

    def validate(self) -> None:
        """Raise ValueError (one line) if the preset cannot run; the base accepts everything."""

    def with_overrides(self, **overrides) -> Preset:
        """The preset with the given fields replaced (None values ignored), validated."""
        p = replace(self, **{k: v for k, v in overrides.items() if v is not None})
        p.validate()
        return p


@dataclass(frozen=True, kw_only=True)
class PretrainPreset(Preset):
    """A pretraining data-scaling sweep (kind "pretrain"): data, model, optimisation and grid."""

    kind: ClassVar[str] = "pretrain"
    corpora: tuple[str, ...]  # corpora of the sweep (`--corpus` overrides)
    model: GPTConfig  # vocab_size is taken from the tokenizer
    train: TrainConfig
    batch_size: int = 32  # sequences per micro-batch
    vocab_size: int = 1024  # BPE vocabulary
    tokenizer_bytes: int = 4_000_000  # bytes of training text the BPE sees
    n_min: int = 16_384  # smallest training-set size, tokens
    n_max: int = 10**9  # cap on the full training split, tokens
    n_sizes: int = 5  # points of the geometric grid
    seeds: tuple[int, ...] = (0, 1)  # training seeds per size
    max_eval_tokens: int = 32_768  # tokens of the val and test splits used for losses
    id_docs: int = 256  # test documents embedded for the ID (paper: the whole test set)
    id_context: int = 1024  # tokens per document fed to the model (paper: 1024)
    id_tokens_per_doc: int = 32  # embedded tokens per document (paper: 32)

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


PRETRAIN: dict[str, PretrainPreset] = {
    "tiny": PretrainPreset(
        name="tiny",
        corpora=("stories",),
        model=GPTConfig(block_size=32, n_layer=1, n_head=2, n_embd=32),
        train=TrainConfig(max_steps=150, lr=3e-3, min_lr=3e-4, warmup_steps=10, eval_every=15, patience=2),
        batch_size=16,
        vocab_size=384,
        tokenizer_bytes=300_000,
        n_min=2_000,
        n_max=40_000,
        n_sizes=3,
        seeds=(0, 1),
        max_eval_tokens=4_096,
        id_docs=96,
        id_context=64,
        id_tokens_per_doc=8,
        notes="one corpus, the whole pipeline in well under 3 minutes on 2 cores; used by the tests. A smoke "
        "test, not a measurement: its runs may stop on the 150-step cap, and the report then withholds "
        "their verdicts",
    ),
    "cpu-demo": PretrainPreset(
        name="cpu-demo",
        corpora=("code", "prose", "stories"),
        model=GPTConfig(block_size=64, n_layer=2, n_head=4, n_embd=64),
        train=TrainConfig(
            max_steps=2000,
            lr=2e-3,
            min_lr=2e-4,
            warmup_steps=20,
            eval_every=25,
            patience=3,
            schedule="plateau",
            cooldown=150,
            threads=1,
        ),
        batch_size=32,
        vocab_size=512,
        tokenizer_bytes=2_000_000,
        n_min=2_000,
        n_max=32_000,
        n_sizes=5,
        seeds=(0, 1),
        max_eval_tokens=8_192,
        id_docs=200,
        id_context=256,
        id_tokens_per_doc=32,
        notes="three corpora, 5 sizes over 1.2 decades (n 2,000-32,000 tokens), 2 seeds; every run trains at a "
        "constant rate until its validation loss stops improving (3 evaluations, 75 steps), then cools down "
        "over 150 steps and stops (cap 2,000 steps, not reached by design); `make demo`. Sized "
        "down from n up to 128,000 with a 400-step cap (issue 12 item 6): there the runs from n = 22,000 up "
        "stopped on the cap, and a prose run at n = 129,665 was still improving after 900 steps (8 epochs), "
        "more than 2 shared cores allow for 30 runs; one thread per run (no gain from two, bench_train)",
    ),
    "cpu-small": PretrainPreset(
        name="cpu-small",
        corpora=("code", "prose", "stories"),
        model=GPTConfig(block_size=128, n_layer=4, n_head=4, n_embd=128),
        train=TrainConfig(max_steps=1500, lr=1e-3, min_lr=1e-4, warmup_steps=100, eval_every=100, patience=3),
        batch_size=32,
        vocab_size=2048,
        n_min=32_000,
        n_max=2_000_000,
        n_sizes=6,
        seeds=(0, 1),
        max_eval_tokens=65_536,
        id_docs=512,
        id_context=512,
        id_tokens_per_doc=32,
        notes="about 2 hours on 2 cores: 6 sizes over 1.8 decades",
    ),
    "gpu-quick": PretrainPreset(
        name="gpu-quick",
        corpora=("code", "prose", "stories"),
        model=GPTConfig(block_size=256, n_layer=6, n_head=6, n_embd=384),
        train=TrainConfig(max_steps=600, lr=1e-3, min_lr=1e-4, warmup_steps=50, eval_every=50, patience=3),
        batch_size=64,
        vocab_size=4096,
        n_min=8_000,
        n_max=8_000_000,
        n_sizes=6,
        seeds=(0, 1),
        max_eval_tokens=131_072,
        id_docs=2048,
        id_context=1024,
        id_tokens_per_doc=32,
        notes="sized for about 8 minutes on one H200 (bf16), 3 decades of n; not measured in this repository",
    ),
    "gpu-paper": PretrainPreset(
        name="gpu-paper",
        corpora=("code", "prose", "stories"),
        model=GPTConfig(block_size=1024, n_layer=12, n_head=12, n_embd=768),
        train=TrainConfig(
            max_steps=200_000, lr=6e-4, min_lr=6e-5, warmup_steps=2000, eval_every=1000, patience=5, grad_accum=60
        ),
        batch_size=32,
        vocab_size=50_257,
        tokenizer_bytes=50_000_000,
        n_min=1_000_000,
        n_max=10**10,
        n_sizes=7,
        seeds=(0, 1),
        max_eval_tokens=1_048_576,
        id_docs=10**9,
        id_context=1024,
        id_tokens_per_doc=32,
        notes="Table 2: 12 layers, 12 heads, width 768, context 1024, AdamW 6e-4 -> 6e-5, 2000 warmup, "
        "200k steps, global batch 1920 sequences (32 x 60 accumulation; Table 2 does not say "
        "sequences or tokens); the n grid spans 3 decades where the corpus allows",
    ),
}


@dataclass(frozen=True, kw_only=True)
class SynthPreset(Preset):
    """A synthetic-regression sweep (kind "synthetic"): the problem grid, the model, the optimiser."""

    kind: ClassVar[str] = "synthetic"
    dims: tuple[int, ...] = (1, 2, 4)  # intrinsic dimensions d of the data-scaling sweep
    betas: tuple[float, ...] = (1.0, 0.5)
    ns: tuple[int, ...] = (64, 160, 400, 1000, 2500, 6400)  # training-set sizes (validation included)
    seeds: tuple[int, ...] = (0, 1, 2)
    manifold: str = "torus"
    D: int = 16
    target: str = "holder"
    density: str = "uniform"
    noise: float = 0.5
    n_test: int = 20_000  # held-out points, the same for every run
    val_fraction: float = 0.2
    min_val: int = 16
    size: str = "fixed"  # "fixed" width, or "theory": FFN width ∝ n^{d/(2β+d)}, `ffn_width` at max(ns)
    d_embd: int = 8
    n_blocks: int = 2
    n_heads: int = 2
    ffn_width: int = 32
    attention: str = "relu"
    batch_size: int = 128
    epochs: int = 60  # optimizer steps = epochs * n_train / batch_size, clipped to [min_steps, max_steps]
    schedule: str = "cosine"  # TrainConfig.schedule: "plateau" trains until the validation loss stops improving
    cooldown: int = 0  # steps of the final decay under schedule "plateau"
    min_steps: int = 800
    max_steps: int = 3000
    lr: float = 1e-2
    weight_decay: float = 1e-4
    eval_every: int = 50
    patience: int = 10
    baselines: tuple[str, ...] = ("knn", "krr")
    krr_max_n: int = 10**6  # kernel ridge regression (O(n³), on the CPU) only up to this n
    model_dims: tuple[int, ...] = ()  # model-scaling sweep (empty: none)
    model_betas: tuple[float, ...] = (0.5,)
    model_widths: tuple[int, ...] = (2, 6, 18, 54)
    model_n: int = 6400
    model_noise: float = 0.0  # eq. (4) is about approximation: no label noise
    model_seeds: tuple[int, ...] = (0,)
    problem_seed: int = 0
    device: str = "auto"

    def validate(self) -> None:
        from tmcheck.empirics.sweep.synthetic import check_preset

        check_preset(self)


SYNTHETIC: dict[str, SynthPreset] = {
    "tiny": SynthPreset(
        name="tiny",
        dims=(1, 2),
        betas=(1.0,),
        ns=(50, 120, 300),
        seeds=(0, 1),
        D=6,
        n_test=2000,
        min_val=8,
        n_blocks=1,
        min_steps=250,
        max_steps=250,
        eval_every=50,
        patience=10,
        model_dims=(1,),
        model_betas=(1.0,),
        model_widths=(2, 6, 16),
        model_n=300,
        notes="the whole pipeline (both sweeps, both baselines, report) in well under 2 minutes. A smoke test, "
        "not a measurement: its transformer runs stop on the 250-step cap, so the report withholds their "
        "verdicts",
    ),
    "cpu": SynthPreset(
        name="cpu",
        D=8,
        ns=(64, 200, 640, 2000),
        min_steps=6000,
        max_steps=6000,
        patience=10,
        schedule="plateau",
        cooldown=500,
        notes="d in {1,2,4}, beta in {1, 1/2}, n from 64 to 2000, 3 seeds, no model sweep; every transformer "
        "trains at a constant rate until its validation loss stops improving (10 evaluations, 500 steps), "
        "then cools down over 500 steps and stops, under one cap of 6,000 steps for every n. Sized down from n "
        "up to 6400 with 1,500-4,000 steps (issue 12 item 6): "
        "there most runs from n = 640 up stopped on the cap, and a run at n = 6400 (d = 4, beta = 1) needed "
        "6,750 steps to stop on patience, more than 2 shared cores allow for 18 such runs",
    ),
    "demo": SynthPreset(
        name="demo",
        dims=(1, 2),
        betas=(1.0,),
        ns=(64, 200, 640, 2000),
        seeds=(0, 1),
        D=8,
        n_test=10_000,
        min_steps=6000,
        max_steps=6000,
        patience=10,
        schedule="plateau",
        cooldown=500,
        notes="what `make demo` runs: the cpu preset's training budget at d in {1, 2}, beta = 1, n from 64 "
        "to 2000, 2 seeds, no model sweep",
    ),
    "gpu": SynthPreset(
        name="gpu",
        dims=(1, 2, 4, 8),
        ns=(100, 300, 1000, 3000, 10_000),
        seeds=(0, 1, 2),
        n_test=50_000,
        size="theory",
        d_embd=16,
        n_blocks=3,
        n_heads=4,
        ffn_width=256,
        batch_size=512,
        epochs=100,
        min_steps=800,
        max_steps=3000,
        krr_max_n=3000,
        model_dims=(1, 2, 4, 8),
        model_betas=(0.5, 1.0),
        model_widths=(4, 16, 64, 256, 1024),
        model_n=10_000,
        model_seeds=(0,),
        notes="the full grid; sized for one H200 in under 10 minutes (about 180k transformer steps at ~2 ms "
        "plus kernel ridge up to n=3000 on the host), device-agnostic, not measured here",
    ),
}


PRESETS: dict[str, dict[str, Preset]] = {"pretrain": PRETRAIN, "synthetic": SYNTHETIC}


def get_preset(name: str, kind: str = "pretrain", **overrides) -> Preset:
    """The named preset of a kind (with fields replaced by `overrides`); ValueError names the choices."""
    if kind not in PRESETS:
        raise ValueError(f"no presets for sweep kind {kind!r}; expected one of {', '.join(PRESETS)}")
    if name not in PRESETS[kind]:
        raise ValueError(f"unknown preset {name!r}; choose from {', '.join(PRESETS[kind])}")
    return replace(PRESETS[kind][name], **overrides) if overrides else PRESETS[kind][name]


def preset_class(kind: str) -> type[Preset]:
    if kind not in Preset.classes:
        raise ValueError(f"no preset class for sweep kind {kind!r}")
    return Preset.classes[kind]


def preset_from_dict(kind: str, d: dict) -> Preset:
    return preset_class(kind).from_dict(d)


def decades(grid: list[int]) -> float:
    return math.log10(grid[-1] / grid[0])
