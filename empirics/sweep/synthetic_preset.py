"""The presets of the synthetic manifold-regression sweep (kind "synthetic", eq. 3-4 of the paper):
`SynthPreset` (the problem grid, the model, the optimiser), `SynthTuned` (one (d, β)'s settings that
`tmcheck synth tune` chose, tmcheck.empirics.sweep.tune) and the named presets PRESETS, which the
kind's record (tmcheck.empirics.sweep.synthetic.KIND) names.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import Annotated, ClassVar

from pydantic import Field

from tmcheck.empirics import schema
from tmcheck.empirics.schema import Count, Fraction, NonNegative, NonNegativeFloat, PositiveFloat
from tmcheck.empirics.sweep.preset import Preset, named

SynthBeta = Annotated[float, Field(gt=0, le=1)]  # a Hölder exponent of the synthetic study


@dataclass(frozen=True, kw_only=True)
class SynthTuned:
    """The settings of one (d, β) of a synthetic sweep that replace the preset's (None: the preset's own),
    as `tmcheck synth tune` chose them on validation data (tmcheck.empirics.sweep.tune)."""

    d: Count
    beta: SynthBeta
    # why kept: a schema's optional fields, one a line, as ExecutorSpec's: declarations alike in shape only
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
    # "fixed" model at every n, or "theory": FFN width and heads ∝ n^{d/(2β+d)} (Theorem 1's N), equal to
    # `ffn_width` and `n_heads` at n = size_anchor (None: max(ns)), where they were tuned
    size: str = "fixed"
    size_anchor: Count | None = None
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
        for later in ("tuned", "model_shapes", "size_anchor"):
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
        from tmcheck.empirics.lm.train import SCHEDULES
        from tmcheck.empirics.synthetic.problem import validation_size
        from tmcheck.util.bounds import check_memory

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
        # a run holds its pool of max(ns) labelled points (D coordinates and a label, float64), a copy of
        # the split and the Hölder field's per-level arrays: about 3 such arrays; refused before a plan is written
        pool = max(max(self.ns), self.model_n, self.n_test)
        check_memory("--set ns", 3 * 8 * pool * (self.D + 1), f"a data pool of {pool:,} points in D = {self.D}")
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

    def model_config(self, width: int, heads: int | None = None):
        """The regression transformer of this preset with FFN width `width` (and `heads` heads, the
        preset's n_heads when None)."""
        from tmcheck.empirics.synthetic.model import ModelConfig

        # why kept: the preset's fields passed on by name, as other calls pass theirs: alike in shape only
        return ModelConfig(
            D=self.D,
            d_embd=self.d_embd,
            n_blocks=self.n_blocks,
            n_heads=self.n_heads if heads is None else heads,
            ffn_width=width,
            attention=self.attention,
        )

    def theory_shape(self, d: int, beta: float, n: int) -> tuple[int, int]:
        """(FFN width, heads) of the theory-sized model at n: each ∝ n^{d/(2β+d)} (Theorem 1 / Appendix B:
        l, m and w_FFN grow as ε^{-d/β} with ε = n^{-β/(2β+d)}), equal to the tuned ffn_width and n_heads
        at n = size_anchor (max(ns) when None). Both grow by one factor, so N does too (the embedding,
        d_embd and depth stay fixed)."""
        anchor = self.size_anchor or max(self.ns)
        factor = (n / anchor) ** (d / (2 * beta + d))
        return max(1, round(self.ffn_width * factor)), max(1, round(self.n_heads * factor))


SIZES = ("fixed", "theory")  # the synthetic sweep's width rules
METHODS = ("transformer", "knn", "krr")  # the synthetic sweep's methods: the model and its baselines


def tuned(d, beta, lr, weight_decay, batch_size, steps, patience, d_embd, n_blocks, n_heads, ffn_width) -> SynthTuned:
    """A (d, β)'s setting as results/synth-tune chose it: min_steps = max_steps = steps."""
    sizes = {"d_embd": d_embd, "n_blocks": n_blocks, "n_heads": n_heads, "ffn_width": ffn_width}
    optimiser = {"lr": lr, "weight_decay": weight_decay, "batch_size": batch_size, "patience": patience}
    return SynthTuned(
        d=d, beta=beta, **optimiser, **sizes, min_steps=steps, max_steps=steps, source="results/synth-tune"
    )


# what `tmcheck synth tune` chose for cpu-decide's (d, β), in the order of tuned()'s arguments:
#      d  beta   lr     wd      batch  steps  patience  d_embd  blocks  heads  ffn_width
DECIDE_TUNED = tuple(
    tuned(*row)
    for row in (
        (1, 1.0, 0.01, 0.01, 512, 8000, 20, 8, 2, 4, 128),
        (1, 0.5, 0.01, 0.1, 512, 8000, 20, 16, 3, 2, 64),
        (2, 1.0, 0.003, 0.01, 32, 8000, 10, 8, 3, 4, 128),
        (2, 0.5, 0.001, 0.1, 512, 8000, 20, 16, 2, 4, 64),
        (4, 1.0, 0.03, 0.01, 512, 20000, 20, 8, 3, 2, 32),
        (4, 0.5, 0.003, 0.0001, 32, 20000, 20, 8, 3, 4, 128),
    )
)
# the cpu preset's training budget: a constant rate until the validation loss stops improving (10
# evaluations), then a 500-step cooldown, under one cap of 6,000 steps (cpu, cpu-decide and demo)
CPU = SynthPreset(name="cpu", D=8, min_steps=6000, max_steps=6000, schedule="plateau", cooldown=500)
CPU_DECIDE = replace(
    CPU,
    name="cpu-decide",
    ns=(100, 316, 1000, 3162, 10_000),
    seeds=(0, 1, 2, 3, 4),
    tuned=DECIDE_TUNED,
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
)
# d = 4 leaves the trivial regime later: at n = 100 no setting tried (results/synth-decide and the probes
# of docs/results/synthetic-decide.md) beats the training mean, and at n = 316 the mean of 5 seeds does by
# 1%. Its grid starts at n = 1000 and spans the same two decades; kernel ridge stops at n = 10,000 (its
# n x n kernel). d = 1, 2 keep cpu-decide's grid and settings, so their runs are cpu-decide's (--reuse).
D4_NS = (1000, 3162, 10_000, 31_623, 100_000)

# the theory-sized arm (#38 item 4): every (d, β)'s tuned setting, trained until early stopping ends it (at least
# 3,000 steps, a cap of 1,000,000 that no run is meant to reach) on the preset's grid of n
THEORY_TUNED = tuple(replace(t, min_steps=3000, max_steps=1_000_000, ns=None) for t in DECIDE_TUNED)
CPU_THEORY = replace(
    CPU_DECIDE,
    name="cpu-theory",
    dims=(1, 2),
    ns=(1000, 3162, 10_000, 31_623, 100_000),
    seeds=(0, 1, 2),
    size="theory",
    size_anchor=10_000,
    baselines=(),
    epochs=2000,
    tuned=tuple(t for t in THEORY_TUNED if t.d <= 2),
    model_dims=(),
    notes=(
        "the transformer sized as the theorem sizes it (#38 item 4): each n trains its own model, FFN width and "
        "heads ∝ n^{d/(2beta+d)} equal to the setting `tmcheck synth tune` chose on held-out data at n = "
        "10,000 (results/synth-tune); a budget of 2,000 epochs (at least 3,000 steps) that early stopping on "
        "the validation loss ends first (a first try at 200 epochs and 2,000 steps ran 6 of 10 small-n runs to "
        "their budget), under a cap of 1,000,000 steps; the tuned learning rate at "
        "every size (AdamW's update is invariant to a weight's scale; the rule is not checked per size). "
        "d in {1, 2}, both beta, n = 1,000 to 100,000, 3 seeds; the fixed-size arm is results/synth-decide2 "
        "(and synth-decide); the kNN and kernel-ridge controls are results/synth-controls"
    ),
)

# why kept: a preset spells out its settings as keyword data: alike in shape to the other presets, not in value
PRESETS: dict[str, SynthPreset] = named(
    SynthPreset(
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
        model_dims=(1,),
        model_betas=(1.0,),
        model_widths=(2, 6, 16),
        model_n=300,
        notes="the whole pipeline (both sweeps, both baselines, report) in well under 2 minutes. A smoke test, "
        "not a measurement: its transformer runs stop on the 250-step cap, so the report withholds their "
        "verdicts",
    ),
    replace(
        CPU,
        ns=(64, 200, 640, 2000),
        notes=(
            "d in {1,2,4}, beta in {1, 1/2}, n from 64 to 2000, 3 seeds, no model sweep; every transformer trains"
            " at a constant rate until its validation loss stops improving (10 evaluations, 500 steps), then "
            "cools down over 500 steps and stops, under one cap of 6,000 steps for every n. Sized down from n up "
            "to 6400, where most runs from n = 640 up stopped on the cap"
        ),
    ),
    CPU_DECIDE,
    replace(
        CPU,
        name="demo",
        dims=(1, 2),
        betas=(1.0,),
        ns=(64, 200, 640, 2000),
        seeds=(0, 1),
        n_test=10_000,
        notes="what `make demo` runs: the cpu preset's training budget at d in {1, 2}, beta = 1, n from 64 "
        "to 2000, 2 seeds, no model sweep",
    ),
    SynthPreset(
        name="gpu",
        dims=(1, 2, 4, 8),
        ns=(100, 300, 1000, 3000, 10_000),
        n_test=50_000,
        size="theory",
        d_embd=16,
        n_blocks=3,
        n_heads=4,
        ffn_width=256,
        batch_size=512,
        epochs=100,
        krr_max_n=3000,
        model_dims=(1, 2, 4, 8),
        model_betas=(0.5, 1.0),
        model_widths=(4, 16, 64, 256, 1024),
        model_n=10_000,
        notes="the full grid, sized for one H200 (device-agnostic); not measured here",
    ),
    CPU_THEORY,
    replace(
        CPU_THEORY,
        name="cpu-theory-d4",
        dims=(4,),
        betas=(1.0,),
        tuned=tuple(t for t in THEORY_TUNED if (t.d, t.beta) == (4, 1.0)),
        notes=(
            "cpu-theory's rules (each n its own model, FFN width and heads ∝ n^{d/(2beta+d)} equal to the tuned "
            "setting at n = 10,000, 2,000 epochs ended by early stopping, the tuned learning rate at every size) "
            "at d = 4, beta = 1 only: #38's compute rule cuts d = 4 to beta = 1 first; the fixed-size arm of the "
            "same cell is results/synth-decide2; run in results/synth-theory-d4"
        ),
    ),
    replace(
        CPU_DECIDE,
        name="cpu-decide2",
        krr_max_n=10_000,
        model_shapes=((1, 4), (1, 64), (4, 64), (4, 1024)),
        tuned=tuple(replace(t, ns=D4_NS) if t.d == 4 else t for t in DECIDE_TUNED),
        notes=(
            "cpu-decide with d = 4 on its own grid, n = 1000 to 100,000 (5 sizes, two decades), where the "
            "transformer leaves the trivial regime; kernel ridge up to n = 10,000; d in {1, 2} and the model sweep's "
            "widths as in cpu-decide (their runs taken from results/synth-decide with --reuse), and the model sweep "
            "also at depths L_T = 1 (widths 4, 64) and 4 (widths 64, 1024), so that N spans more than two "
            "decades; run in results/synth-decide2"
        ),
    ),
)
