"""The model-scaling sweep (kind "model"; Section 3, Figure 3 and eq. 4 of the paper).

A grid of GPT sizes (width x depth) trained on one corpus at one fixed, large n (the full
training split, capped at the preset's `n_max`) until early stopping on the validation loss; the
test loss at the best-validation checkpoint against the non-embedding parameter count N gives
alpha-hat_N, to compare with alpha_N = 2 beta / d-hat (d-hat: the ID of the largest model's
test-set embeddings) and with the ID-free conversion alpha_N = alpha_D / (1 - alpha_D) of the same
corpus's alpha-hat_D (Table 1's relation). alpha-hat_D comes from the sweep's own data arm: the
model (`data_layers`, `data_width`) trained at the geometric n grid `data_ns` (plus the full n,
which is its model-arm run), with the same tokenizer and recipe.

One run per (n_layer, n_embd, n, seed), name "{tag}-l{n_layer}-w{n_embd}-n{n}-s{seed}"; a run is
tmcheck.empirics.lm.pretrain.train_lm with the preset's GPT resized. Each row records whether training
stopped on patience (`stopped_early`) or at the step cap (`capped`): the report gives no verdict
from capped runs. The presets: ModelPreset, PRESETS.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Annotated, Any, ClassVar

from pydantic import Field

from tmcheck.empirics.data import check_corpus, prepare_dataset
from tmcheck.empirics.lm.gpt import GPTConfig
from tmcheck.empirics.lm.pretrain import dataset_spec, train_lm
from tmcheck.empirics.lm.train import TrainConfig
from tmcheck.empirics.schema import Count, NonNegative
from tmcheck.empirics.sweep import layout
from tmcheck.empirics.sweep.core import Context, RunSpec
from tmcheck.empirics.sweep.kinds import module_kind
from tmcheck.empirics.sweep.preset import Corpus, Preset, Vocabulary, check_model, check_train, named
from tmcheck.empirics.sweep.pretrain import corpus_tag, run_data_dir

NAME = "{tag}-l{n_layer}-w{n_embd}-n{n}-s{seed}"
DESCRIPTION = "model scaling: test loss against non-embedding parameters N (Figure 3)"


def non_embedding_params(n_layer: int, n_embd: int) -> int:
    """Parameters of our GPT without token and position embeddings (Kaplan et al.'s N, the paper's
    Figure 3 axis): per block 12 C^2 + 13 C (attention 4 C^2 + 4 C, MLP 8 C^2 + 5 C, two LayerNorms
    4 C), plus the final LayerNorm 2 C. The output head is tied to the token embedding."""
    return n_layer * (12 * n_embd**2 + 13 * n_embd) + 2 * n_embd


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


PRESET = ModelPreset
# why kept: a preset spells out its settings as keyword data: alike in shape to the other presets, not in value
PRESETS: dict[str, ModelPreset] = named(
    ModelPreset(
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
        data_width=16,
        max_eval_tokens=2_048,
        id_docs=64,
        id_context=32,
        id_tokens_per_doc=8,
        notes="3 widths, 1 depth, a 3-point data arm; the whole pipeline in well under a minute; used by the tests",
    ),
    ModelPreset(
        name="cpu",
        corpus="sql",
        model=GPTConfig(block_size=64),
        train=TrainConfig(max_steps=2500, lr=3e-3, min_lr=3e-4, warmup_steps=50, eval_every=50, patience=4, threads=1),
        widths=(16, 32, 64, 128),
        depths=(1, 2),
        batch_size=16,
        n_max=1_000_000,
        data_ns=(62_500, 125_000, 250_000, 500_000),
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
)


def run_name(params: Mapping) -> str:
    return layout.run_name(NAME, params)


def new_config(preset: ModelPreset, options: Mapping) -> dict:
    from tmcheck.empirics.data.corpora import require_prepared

    corpus = check_corpus(options.get("corpus") or preset.corpus)
    require_prepared(corpus)  # one line naming `tmcheck data prepare sql` (the cpu preset's corpus)
    preset.validate()
    return {"preset": preset.as_dict(), "corpus": corpus}


def plan(ctx: Context, log: Callable[[str], None]) -> list[RunSpec]:
    p, corpus = ctx.preset, ctx.config["corpus"]
    tag = corpus_tag(corpus)
    meta = prepare_dataset(dataset_spec(p, corpus), ctx.sweep.data_dir(tag))
    n = meta["splits"]["train"]["tokens"]
    if any(m >= n for m in p.data_ns):
        raise ValueError(f"{corpus} has {n:,} training tokens; data_ns must be smaller")
    sizes = [(L, w, n) for L, w in p.grid()] + [(p.data_layers, p.data_width, m) for m in p.data_ns]
    if (p.data_layers, p.data_width) not in p.grid():
        sizes.append((p.data_layers, p.data_width, n))
    log(
        f"{corpus}: n = {n:,} training tokens; N = "
        + ", ".join(f"{non_embedding_params(L, w):,}" for L, w in p.grid())
        + (
            f"; data arm (depth {p.data_layers}, width {p.data_width}) at n = "
            + ", ".join(f"{m:,}" for m in [*p.data_ns, n])
            if p.data_ns
            else ""
        )
    )
    specs = []
    for L, w, m in sizes:
        for seed in p.seeds:
            params = {"corpus": corpus, "tag": tag, "n_layer": L, "n_embd": w, "n": m, "seed": seed}
            specs.append(RunSpec("model", run_name(params), params))
    return specs


def run(ctx: Context, spec: RunSpec) -> dict:
    p = spec.params
    sized = ctx.preset.sized(p["n_layer"], p["n_embd"])
    row = train_lm(sized, run_data_dir(ctx, spec), p["n"], p["seed"], ctx.sweep.run_dir(spec.run), ctx.progress)
    capped = row["steps"] >= sized.train.max_steps and not row["stopped_early"]
    return {
        **row,
        "n_layer": p["n_layer"],
        "n_embd": p["n_embd"],
        "n_head": sized.model.n_head,
        "non_embedding_params": non_embedding_params(p["n_layer"], p["n_embd"]),
        "capped": capped,
    }


def describe(row: dict) -> str:
    return (
        f"N = {row['non_embedding_params']:,}, n = {row['n']:,}: test loss {row['test_loss']:.4f} after "
        f"{row['steps']} steps ({row['seconds']:.1f}s, {'step cap' if row['capped'] else 'early stop'})"
    )


KIND = module_kind(globals())
