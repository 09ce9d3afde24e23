"""Presets: every sweep kind's settings as one dataclass family, in one registry (paper Section 3).

`Preset` is the base (a name, notes, plain-data round trip); `PretrainPreset` configures the
pretraining data-scaling sweep (kind "pretrain", Figure 2), `ModelPreset` the model-scaling sweep
(kind "model", Figure 3, eq. 4), `SynthPreset` the synthetic manifold regression (kind "synthetic",
eq. 3-4). `PRESETS[kind][name]` holds the named presets of each kind. A new kind subclasses Preset
with its `kind` (the subclass registers itself for `preset_from_dict`) and adds its dictionary of
named presets to PRESETS.

Fields are declared with their bounds (tmcheck.empirics.schema: `Count` is at least 1, ...), so a
preset read from a config.json is checked by the one schema (a wrong type or value is one line
naming the field); `validate` adds the relations between fields. `config_options` names the other
settings a sweep's config.json stores beside the preset (pretraining: its corpora).

Pretraining: the training-set sizes n (in tokens) form a geometric grid from `n_min` up to the full
training split, whose size is the corpus's training tokens capped at `n_max`; the largest run
therefore trains on the full split, and it is the model whose embeddings give the intrinsic dimension.

Timings are for 2 CPU cores unless stated; GPU figures are design targets, not measured here.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass, replace
from typing import Annotated, Any, ClassVar

from pydantic import AfterValidator, Field

from tmcheck.empirics import schema
from tmcheck.empirics.data.corpora import check_corpus
from tmcheck.empirics.lm.gpt import GPTConfig
from tmcheck.empirics.lm.train import SCHEDULES, TrainConfig
from tmcheck.empirics.schema import Count, Fraction, NonNegative, NonNegativeFloat, PositiveFloat

Corpus = Annotated[str, AfterValidator(check_corpus)]  # a corpus tmcheck can load (refused otherwise)
Vocabulary = Annotated[int, Field(ge=258, le=schema.MAX_VOCAB)]  # 256 bytes, <|endoftext|>, a merge


def non_embedding_params(n_layer: int, n_embd: int) -> int:
    """Parameters of our GPT without token and position embeddings (Kaplan et al.'s N, the paper's
    Figure 3 axis): per block 12 C^2 + 13 C (attention 4 C^2 + 4 C, MLP 8 C^2 + 5 C, two LayerNorms
    4 C), plus the final LayerNorm 2 C. The output head is tied to the token embedding."""
    return n_layer * (12 * n_embd**2 + 13 * n_embd) + 2 * n_embd


def check_model(model: GPTConfig, where: str) -> None:
    """A GPT configuration within the schema's bounds (positive sizes, heads dividing the width)."""
    schema.validate(schema.GPTShape, asdict(model), f"{where}: model")


def check_train(train: TrainConfig, where: str) -> None:
    """A trainer configuration that can run: positive counts, finite rates, a known schedule."""
    bad = [
        (name, want)
        for name, ok, want in (
            ("max_steps", train.max_steps >= 1, ">= 1"),
            ("lr", math.isfinite(train.lr) and train.lr > 0, "a finite number > 0"),
            ("min_lr", math.isfinite(train.min_lr) and 0 <= train.min_lr <= train.lr, "between 0 and lr"),
            ("warmup_steps", train.warmup_steps >= 0, ">= 0"),
            ("weight_decay", math.isfinite(train.weight_decay) and train.weight_decay >= 0, "a finite number >= 0"),
            ("grad_clip", math.isfinite(train.grad_clip) and train.grad_clip >= 0, "a finite number >= 0"),
            ("grad_accum", train.grad_accum >= 1, ">= 1"),
            ("eval_every", train.eval_every >= 1, ">= 1"),
            ("patience", train.patience >= 0, ">= 0"),
            ("schedule", train.schedule in SCHEDULES, f"one of {', '.join(SCHEDULES)}"),
            ("cooldown", train.cooldown >= (1 if train.schedule == "plateau" else 0), ">= 1 under schedule plateau"),
            ("threads", train.threads >= 0, ">= 0"),
        )
        if not ok
    ]
    if bad:
        name, want = bad[0]
        raise schema.SchemaError(f"{where}: train.{name}: expected {want}, got {getattr(train, name)!r}")


@dataclass(frozen=True, kw_only=True)
class Preset:
    """The base of every preset: `kind` (a class constant) names the sweep kind it configures."""

    kind: ClassVar[str] = ""
    classes: ClassVar[dict[str, type]] = {}  # kind -> its preset class; subclasses register themselves
    config_options: ClassVar[dict[str, Any]] = {}  # config.json's settings beside the preset: name -> type
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
        """The preset a config.json stores: the schema's types and bounds (unknown fields refused,
        missing ones take their defaults), then `validate`."""
        p = schema.validate(cls, d, f"a {cls.kind} preset")
        p.validate()
        return p

    def validate(self) -> None:
        """SchemaError (a ValueError, one line) naming the first field that cannot run."""
        schema.check(self, f"preset {self.name!r}")
        self.check_relations()

    def check_relations(self) -> None:
        """The relations between fields that their declared bounds cannot express; none in the base."""

    @classmethod
    def config_corpora(cls, config: Mapping) -> list[str]:
        """The corpora a config of this kind (or a preset's own fields) would read; none in the base."""
        return []

    def with_overrides(self, **overrides) -> Preset:
        """The preset with the given fields replaced (None values ignored), validated."""
        p = replace(self, **{k: v for k, v in overrides.items() if v is not None})
        p.validate()
        return p


@dataclass(frozen=True, kw_only=True)
class PretrainPreset(Preset):
    """A pretraining data-scaling sweep (kind "pretrain"): data, model, optimisation and grid."""

    kind: ClassVar[str] = "pretrain"
    config_options: ClassVar[dict[str, Any]] = {"corpora": tuple[Corpus, ...]}
    corpora: tuple[Corpus, ...]  # corpora of the sweep (`--corpus` overrides)
    model: GPTConfig  # vocab_size is taken from the tokenizer
    train: TrainConfig
    batch_size: Count = 32  # sequences per micro-batch
    vocab_size: Vocabulary = 1024  # BPE vocabulary
    tokenizer_bytes: Count = 4_000_000  # bytes of training text the BPE sees
    n_min: Count = 16_384  # smallest training-set size, tokens
    n_max: Count = 10**9  # cap on the full training split, tokens
    n_sizes: Count = 5  # points of the geometric grid
    seeds: tuple[NonNegative, ...] = (0, 1)  # training seeds per size
    max_eval_tokens: Count = 32_768  # tokens of the val and test splits used for losses
    id_docs: Count = 256  # test documents embedded for the ID (paper: the whole test set)
    id_context: Count = 1024  # tokens per document fed to the model (paper: 1024)
    id_tokens_per_doc: Count = 32  # embedded tokens per document (paper: 32)

    @classmethod
    def config_corpora(cls, config: Mapping) -> list[str]:
        preset = config.get("preset") if isinstance(config.get("preset"), Mapping) else {}
        return [*(config.get("corpora") or ()), *(preset.get("corpora") or ())]

    def check_relations(self) -> None:
        where = f"preset {self.name!r}"
        if not self.corpora or not self.seeds:
            raise schema.SchemaError(f"{where}: corpora and seeds: expected at least one of each")
        if self.n_max < self.n_min:
            raise schema.SchemaError(f"{where}: n_max: expected >= n_min={self.n_min:,}, got {self.n_max:,}")
        check_model(self.model, where)
        check_train(self.train, where)

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
        notes=(
            "three corpora, 5 sizes over 1.2 decades (n 2,000-32,000 tokens), 2 seeds; every run trains at a "
            "constant rate until its validation loss stops improving (3 evaluations, 75 steps), then cools down "
            "over 150 steps and stops (cap 2,000 steps, not reached by design); `make demo` re-runs a sample. "
            "Sized down from n up to 128,000 with a 400-step cap, where the larger runs stopped on the cap; one "
            "thread per run"
        ),
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
class ModelPreset(Preset):
    """A model-scaling sweep (kind "model"): one corpus, a width x depth grid at a fixed n, and a data arm."""

    kind: ClassVar[str] = "model"
    config_options: ClassVar[dict[str, Any]] = {"corpus": Corpus}
    corpus: Corpus  # the one corpus (`--corpus` overrides)
    model: GPTConfig  # context and head size of every model; n_layer/n_embd from the grid
    train: TrainConfig
    widths: tuple[Count, ...]  # n_embd of the grid
    depths: tuple[Count, ...]  # n_layer of the grid
    head_dim: Count = 16  # n_head = n_embd // head_dim (at least 1)
    batch_size: Count = 32
    vocab_size: Vocabulary = 512
    tokenizer_bytes: Count = 2_000_000
    n_max: Count = 10**9  # the fixed n: the training split, capped here (tokens)
    data_ns: tuple[Count, ...] = ()  # data arm: smaller training-set sizes (the full n is added)
    data_layers: Count = 1  # data arm's model
    data_width: Count = 32
    seeds: tuple[NonNegative, ...] = (0,)
    max_eval_tokens: Count = 32_768
    id_docs: Count = 256  # test documents embedded for d-hat
    id_context: Count = 256
    id_tokens_per_doc: Count = 32
    beta: Annotated[float, Field(gt=0, le=1)] = 1.0  # smoothness in alpha_N = 2 beta / d (the paper: 1)

    @classmethod
    def config_corpora(cls, config: Mapping) -> list[str]:
        preset = config.get("preset") if isinstance(config.get("preset"), Mapping) else {}
        return [c for c in (config.get("corpus"), preset.get("corpus")) if c]

    def check_relations(self) -> None:
        if not self.widths or not self.depths:
            raise ValueError("a model preset needs positive widths and depths")
        if len(set(self.grid())) < 3:
            raise ValueError("a model-scaling sweep needs at least 3 distinct model sizes")
        for w in (*self.widths, self.data_width):
            if w > self.head_dim and w % self.head_dim:  # narrower models get one head of their width
                raise ValueError(f"width {w} is not divisible by head_dim {self.head_dim}")
        if any(n >= self.n_max for n in self.data_ns):
            raise ValueError(f"data_ns must lie in [1, n_max={self.n_max:,})")
        if not self.seeds:
            raise ValueError("a model preset needs at least one seed")
        check_model(self.model, f"preset {self.name!r}")
        check_train(self.train, f"preset {self.name!r}")

    def heads(self, width: int) -> int:
        return max(1, width // self.head_dim)

    def grid(self) -> list[tuple[int, int]]:
        """(n_layer, n_embd) of the model arm, smallest N first."""
        return sorted({(L, w) for L in self.depths for w in self.widths}, key=lambda s: non_embedding_params(*s))

    def sized(self, n_layer: int, n_embd: int) -> ModelPreset:
        """This preset with its GPT resized: what train_lm trains."""
        return replace(self, model=replace(self.model, n_layer=n_layer, n_embd=n_embd, n_head=self.heads(n_embd)))


MODEL: dict[str, ModelPreset] = {
    "tiny": ModelPreset(
        name="tiny",
        corpus="stories",
        model=GPTConfig(block_size=32),
        train=TrainConfig(max_steps=60, lr=3e-3, min_lr=3e-4, warmup_steps=5, eval_every=10, patience=2, threads=1),
        widths=(8, 16, 32),
        depths=(1,),
        head_dim=8,
        batch_size=16,
        vocab_size=320,
        tokenizer_bytes=200_000,
        n_max=20_000,
        data_ns=(3_000, 8_000),
        data_layers=1,
        data_width=16,
        max_eval_tokens=2_048,
        id_docs=64,
        id_context=32,
        id_tokens_per_doc=8,
        notes="3 widths, 1 depth, a 3-point data arm; the whole pipeline in well under a minute; used by the tests",
    ),
    "cpu": ModelPreset(
        name="cpu",
        corpus="sql",
        model=GPTConfig(block_size=64),
        train=TrainConfig(max_steps=2500, lr=3e-3, min_lr=3e-4, warmup_steps=50, eval_every=50, patience=4, threads=1),
        widths=(16, 32, 64, 128),
        depths=(1, 2),
        head_dim=16,
        batch_size=16,
        vocab_size=512,
        n_max=1_000_000,
        data_ns=(62_500, 125_000, 250_000, 500_000),
        data_layers=1,
        data_width=64,
        max_eval_tokens=16_384,
        id_docs=400,
        id_context=64,
        id_tokens_per_doc=16,
        notes=(
            "SQL (tmcheck data prepare sql), widths 16-128 x depths 1-2: N over 2.1 decades at n = 1M tokens (2.5"
            " epochs in 2500 steps of 16 x 64 tokens), data arm at width 64, depth 1 (5 sizes); one thread per "
            "run"
        ),
    ),
}


SynthBeta = Annotated[float, Field(gt=0, le=1)]  # a Hölder exponent of the synthetic study


@dataclass(frozen=True, kw_only=True)
class SynthTuned:
    """The settings of one (d, β) of a synthetic sweep that replace the preset's (None: the preset's own),
    as `tmcheck synth tune` chose them on validation data (tmcheck.empirics.synthetic.tune)."""

    d: Count
    beta: SynthBeta
    lr: PositiveFloat | None = None
    weight_decay: NonNegativeFloat | None = None
    batch_size: Count | None = None
    patience: NonNegative | None = None
    cooldown: NonNegative | None = None
    min_steps: Count | None = None
    max_steps: Count | None = None
    d_embd: Count | None = None
    n_blocks: Count | None = None
    n_heads: Count | None = None
    ffn_width: Count | None = None
    ns: tuple[Count, ...] | None = None  # this (d, β)'s own training-set sizes (None: the preset's `ns`)
    source: str = ""  # where the setting was chosen (a tuning directory)

    def overrides(self) -> dict:
        """The preset fields this entry replaces, with their values."""
        out = {k: v for k, v in asdict(self).items() if k not in ("d", "beta", "source") and v is not None}
        if "ns" in out:
            out["ns"] = tuple(out["ns"])
        return out


@dataclass(frozen=True, kw_only=True)
class SynthPreset(Preset):
    """A synthetic-regression sweep (kind "synthetic"): the problem grid, the model, the optimiser."""

    kind: ClassVar[str] = "synthetic"
    dims: tuple[Count, ...] = (1, 2, 4)  # intrinsic dimensions d of the data-scaling sweep
    betas: tuple[Annotated[float, Field(gt=0, le=1)], ...] = (1.0, 0.5)
    ns: tuple[Count, ...] = (64, 160, 400, 1000, 2500, 6400)  # training-set sizes (validation included)
    seeds: tuple[NonNegative, ...] = (0, 1, 2)
    manifold: str = "torus"
    D: Count = 16
    target: str = "holder"
    density: str = "uniform"
    noise: NonNegativeFloat = 0.5
    n_test: Count = 20_000  # held-out points, the same for every run
    val_fraction: Fraction = 0.2
    min_val: Count = 16
    size: str = "fixed"  # "fixed" width, or "theory": FFN width ∝ n^{d/(2β+d)}, `ffn_width` at max(ns)
    d_embd: Count = 8
    n_blocks: Count = 2
    n_heads: Count = 2
    ffn_width: Count = 32
    attention: str = "relu"
    batch_size: Count = 128
    epochs: Count = 60  # optimizer steps = epochs * n_train / batch_size, clipped to [min_steps, max_steps]
    schedule: str = "cosine"  # TrainConfig.schedule: "plateau" trains until the validation loss stops improving
    cooldown: NonNegative = 0  # steps of the final decay under schedule "plateau"
    min_steps: Count = 800
    max_steps: Count = 3000
    lr: PositiveFloat = 1e-2
    weight_decay: NonNegativeFloat = 1e-4
    eval_every: Count = 50
    patience: NonNegative = 10
    baselines: tuple[str, ...] = ("knn", "krr")
    krr_max_n: Count = 10**6  # kernel ridge regression (O(n³), on the CPU) only up to this n
    model_dims: tuple[Count, ...] = ()  # model-scaling sweep (empty: none)
    model_betas: tuple[Annotated[float, Field(gt=0, le=1)], ...] = (0.5,)
    model_widths: tuple[Count, ...] = (2, 6, 18, 54)
    # model sweep: (L_T, w_FFN) pairs trained beside the widths at each (d, β)'s own depth, so N varies
    # with depth as well as width (empty: widths only)
    model_shapes: tuple[tuple[Count, Count], ...] = ()
    model_n: Count = 6400
    model_noise: NonNegativeFloat = 0.0  # eq. (4) is about approximation: no label noise
    model_seeds: tuple[NonNegative, ...] = (0,)
    problem_seed: NonNegative = 0
    device: str = "auto"
    tuned: tuple[SynthTuned, ...] = ()  # per-(d, β) replacements of the model and optimiser fields

    def as_dict(self) -> dict:
        """Plain data; `tuned` and `model_shapes` only when there are some (a config.json written before
        them reads the same)."""
        d = asdict(self)
        for later in ("tuned", "model_shapes"):
            if not d[later]:
                del d[later]
        return d

    def with_overrides(self, **overrides) -> SynthPreset:
        """As Preset.with_overrides; a new `ns` (`--n`) replaces the tuned entries' own grids too, so every
        (d, β) trains on the sizes asked for."""
        if overrides.get("ns") is not None and "tuned" not in overrides:
            kept = (replace(t, ns=None) for t in self.tuned)
            overrides["tuned"] = tuple(t for t in kept if t.overrides())  # an entry of a grid only goes
        return super().with_overrides(**overrides)

    def at(self, d: int, beta: float) -> SynthPreset:
        """The preset every run of (d, β) trains under: its `tuned` entry applied (the preset itself when
        there is none)."""
        for t in self.tuned:
            if t.d == d and t.beta == beta:
                return replace(self, tuned=(), **t.overrides())
        return self

    def check_tuned(self) -> None:
        """Each tuned entry names a (d, β) of the grid once, and the preset it makes is valid."""
        where = f"preset {self.name!r}"
        grid = {(d, b) for d in self.dims for b in self.betas} | {
            (d, b) for d in self.model_dims for b in self.model_betas
        }
        seen = set()
        for i, t in enumerate(self.tuned):
            key = (t.d, t.beta)
            if key in seen:
                raise schema.SchemaError(f"{where}: tuned[{i}]: a second entry for d={t.d}, beta={t.beta:g}")
            seen.add(key)
            if key not in grid:
                raise schema.SchemaError(f"{where}: tuned[{i}]: d={t.d}, beta={t.beta:g} is not in the sweep's grid")
            if not t.overrides():
                raise schema.SchemaError(f"{where}: tuned[{i}]: replaces no field")
            try:
                self.at(*key).check_relations()
            except ValueError as exc:
                raise schema.SchemaError(f"{where}: tuned[{i}] (d={t.d}, beta={t.beta:g}): {exc}") from None

    def check_relations(self) -> None:
        """Every problem and every size of the grid is valid; raises ValueError with one line if not."""
        from tmcheck.empirics.synthetic.problem import validation_size

        self.check_tuned()

        if self.size not in SIZES:
            raise ValueError(f"unknown size rule {self.size!r}; expected one of {', '.join(SIZES)}")
        for m in self.baselines:
            if m not in METHODS[1:]:
                raise ValueError(f"unknown baseline {m!r}; expected one of {', '.join(METHODS[1:])}")
        if self.schedule not in SCHEDULES or (self.schedule == "plateau" and self.cooldown < 1):
            raise ValueError(
                f"schedule must be one of {', '.join(SCHEDULES)} (plateau with cooldown >= 1), "
                f"got {self.schedule!r} with cooldown {self.cooldown}"
            )
        if not 1 <= self.min_steps <= self.max_steps:
            raise ValueError(f"need 1 <= min_steps <= max_steps, got {self.min_steps} and {self.max_steps}")
        if not self.ns or not self.seeds:
            raise ValueError("the data-scaling grid needs at least one n and one seed")
        for d in {*self.dims, *self.model_dims}:
            for beta in {*self.betas, *self.model_betas}:
                self.problem(d, beta, self.noise)
        for n in (*self.ns, self.model_n):
            validation_size(n, self.val_fraction, self.min_val)
        self.model_config(self.ffn_width)

    def problem(self, d: int, beta: float, noise: float):
        """The regression problem of (d, beta) under this preset: manifold, target, density, seed."""
        from tmcheck.empirics.synthetic.problem import Problem

        return Problem(
            manifold=self.manifold,
            d=d,
            D=self.D,
            target=self.target,
            beta=beta,
            density=self.density,
            noise=noise,
            seed=self.problem_seed,
        )

    def model_config(self, width: int):
        """The regression transformer of this preset with FFN width `width`."""
        from tmcheck.empirics.synthetic.model import ModelConfig

        return ModelConfig(
            D=self.D,
            d_embd=self.d_embd,
            n_blocks=self.n_blocks,
            n_heads=self.n_heads,
            ffn_width=width,
            attention=self.attention,
        )


SIZES = ("fixed", "theory")  # the synthetic sweep's width rules
METHODS = ("transformer", "knn", "krr")  # the synthetic sweep's methods: the model and its baselines


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
        notes=(
            "d in {1,2,4}, beta in {1, 1/2}, n from 64 to 2000, 3 seeds, no model sweep; every transformer trains"
            " at a constant rate until its validation loss stops improving (10 evaluations, 500 steps), then "
            "cools down over 500 steps and stops, under one cap of 6,000 steps for every n. Sized down from n up "
            "to 6400, where most runs from n = 640 up stopped on the cap"
        ),
    ),
    "cpu-decide": SynthPreset(
        name="cpu-decide",
        D=8,
        ns=(100, 316, 1000, 3162, 10_000),
        seeds=(0, 1, 2, 3, 4),
        min_steps=6000,
        max_steps=6000,
        patience=10,
        schedule="plateau",
        cooldown=500,
        tuned=(
            SynthTuned(
                batch_size=512,
                beta=1.0,
                d=1,
                d_embd=8,
                ffn_width=128,
                lr=0.01,
                max_steps=8000,
                min_steps=8000,
                n_blocks=2,
                n_heads=4,
                patience=20,
                source="results/synth-tune",
                weight_decay=0.01,
            ),
            SynthTuned(
                batch_size=512,
                beta=0.5,
                d=1,
                d_embd=16,
                ffn_width=64,
                lr=0.01,
                max_steps=8000,
                min_steps=8000,
                n_blocks=3,
                n_heads=2,
                patience=20,
                source="results/synth-tune",
                weight_decay=0.1,
            ),
            SynthTuned(
                batch_size=32,
                beta=1.0,
                d=2,
                d_embd=8,
                ffn_width=128,
                lr=0.003,
                max_steps=8000,
                min_steps=8000,
                n_blocks=3,
                n_heads=4,
                patience=10,
                source="results/synth-tune",
                weight_decay=0.01,
            ),
            SynthTuned(
                batch_size=512,
                beta=0.5,
                d=2,
                d_embd=16,
                ffn_width=64,
                lr=0.001,
                max_steps=8000,
                min_steps=8000,
                n_blocks=2,
                n_heads=4,
                patience=20,
                source="results/synth-tune",
                weight_decay=0.1,
            ),
            SynthTuned(
                batch_size=512,
                beta=1.0,
                d=4,
                d_embd=8,
                ffn_width=32,
                lr=0.03,
                max_steps=20000,
                min_steps=20000,
                n_blocks=3,
                n_heads=2,
                patience=20,
                source="results/synth-tune",
                weight_decay=0.01,
            ),
            SynthTuned(
                batch_size=32,
                beta=0.5,
                d=4,
                d_embd=8,
                ffn_width=128,
                lr=0.003,
                max_steps=20000,
                min_steps=20000,
                n_blocks=3,
                n_heads=4,
                patience=20,
                source="results/synth-tune",
                weight_decay=0.0001,
            ),
        ),
        model_dims=(1, 2),
        model_betas=(1.0, 0.5),
        model_widths=(4, 16, 64, 256, 1024),
        model_n=10_000,
        notes=(
            "the cpu preset's problem grid over two decades of n (5 sizes from 100 to 10,000), 5 seeds; a model "
            "sweep at d in {1, 2}, both beta, n = 10,000 without label noise, FFN widths 4 to 1024 (N over about "
            "1.3 decades); each (d, beta) trains under the setting `tmcheck synth tune` chose on validation data "
            "drawn from the training pool (results/synth-tune, docs/results/synthetic-tuning.md); run in "
            "results/synth-decide"
        ),
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
        notes="the full grid, sized for one H200 (device-agnostic); not measured here",
    ),
}


# d = 4 leaves the trivial regime later: at n = 100 no setting tried (results/synth-decide and the probes
# of docs/results/synthetic-decide.md) beats the training mean, and at n = 316 the mean of 5 seeds does by
# 1%. Its grid starts at n = 1000 and spans the same two decades; kernel ridge stops at n = 10,000 (its
# n x n kernel). d = 1, 2 keep cpu-decide's grid and settings, so their runs are cpu-decide's (--reuse).
D4_NS = (1000, 3162, 10_000, 31_623, 100_000)
SYNTHETIC["cpu-decide2"] = replace(
    SYNTHETIC["cpu-decide"],
    name="cpu-decide2",
    krr_max_n=10_000,
    model_shapes=((1, 4), (1, 64), (4, 64), (4, 1024)),
    tuned=tuple(replace(t, ns=D4_NS) if t.d == 4 else t for t in SYNTHETIC["cpu-decide"].tuned),
    notes=(
        "cpu-decide with d = 4 on its own grid, n = 1000 to 100,000 (5 sizes, two decades), where the "
        "transformer leaves the trivial regime; kernel ridge up to n = 10,000; d in {1, 2} and the model sweep's "
        "widths as in cpu-decide (their runs taken from results/synth-decide with --reuse), and the model sweep "
        "also at depths L_T = 1 (widths 4, 64) and 4 (widths 64, 1024), so that N spans more than two "
        "decades; run in results/synth-decide2"
    ),
)


PRESETS: dict[str, dict[str, Preset]] = {"pretrain": PRETRAIN, "model": MODEL, "synthetic": SYNTHETIC}


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
