"""The pretraining data-scaling sweep (kind "pretrain"; Section 3, Figure 2 of the paper).

One run per (corpus, n, seed): a GPT trained on the first n training tokens of the corpus
(tmcheck.empirics.lm.pretrain.train_lm), test loss measured on the fixed test split at the best-validation
checkpoint. The plan prepares each corpus once under data/<tag>/ (tokenizer and token shards,
tmcheck.empirics.data; `corpus_tag` names one's own text:/dir: corpora) and grids n geometrically
up to the full training split (PretrainPreset.grid).

The presets (PretrainPreset, PRESETS): the training-set sizes n (in tokens) form a geometric grid
from `n_min` up to the full training split, whose size is the corpus's training tokens capped at
`n_max`; the largest run therefore trains on the full split, and it is the model whose embeddings
give the intrinsic dimension.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from tmcheck.empirics.data import CORPORA, check_corpus, prepare_dataset
from tmcheck.empirics.lm.checkpoint import BEST
from tmcheck.empirics.lm.gpt import GPTConfig
from tmcheck.empirics.lm.pretrain import dataset_spec, train_lm
from tmcheck.empirics.lm.train import TrainConfig, stop_reason
from tmcheck.empirics.schema import Count, NonNegative, SchemaError
from tmcheck.empirics.sweep import layout
from tmcheck.empirics.sweep.core import Context, RunSpec, SweepDir
from tmcheck.empirics.sweep.kinds import module_kind
from tmcheck.empirics.sweep.preset import Corpus, Preset, Vocabulary, check_model, check_train, named

DESCRIPTION = "pretraining data scaling: test loss against training tokens n (Figure 2)"


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
            raise SchemaError(f"{where}: corpora and seeds: expected at least one of each")
        if self.n_max < self.n_min:
            raise SchemaError(f"{where}: n_max: expected >= n_min={self.n_min:,}, got {self.n_max:,}")
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


PRESET = PretrainPreset
THREE = ("code", "prose", "stories")  # the built-in corpora every preset but tiny sweeps
# why kept: a preset spells out its settings as keyword data: alike in shape to the other presets, not in value
PRESETS: dict[str, PretrainPreset] = named(
    PretrainPreset(
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
        max_eval_tokens=4_096,
        id_docs=96,
        id_context=64,
        id_tokens_per_doc=8,
        notes="one corpus, the whole pipeline in well under 3 minutes on 2 cores; used by the tests. A smoke "
        "test, not a measurement: its runs may stop on the 150-step cap, and the report then withholds "
        "their verdicts",
    ),
    PretrainPreset(
        name="cpu-demo",
        corpora=THREE,
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
        vocab_size=512,
        tokenizer_bytes=2_000_000,
        n_min=2_000,
        n_max=32_000,
        max_eval_tokens=8_192,
        id_docs=200,
        id_context=256,
        notes=(
            "three corpora, 5 sizes over 1.2 decades (n 2,000-32,000 tokens), 2 seeds; every run trains at a "
            "constant rate until its validation loss stops improving (3 evaluations, 75 steps), then cools down "
            "over 150 steps and stops (cap 2,000 steps, not reached by design); `make demo` re-runs a sample. "
            "Sized down from n up to 128,000 with a 400-step cap, where the larger runs stopped on the cap; one "
            "thread per run"
        ),
    ),
    PretrainPreset(
        name="cpu-small",
        corpora=THREE,
        model=GPTConfig(block_size=128, n_layer=4, n_head=4, n_embd=128),
        train=TrainConfig(max_steps=1500, lr=1e-3, min_lr=1e-4, warmup_steps=100, eval_every=100, patience=3),
        vocab_size=2048,
        n_min=32_000,
        n_max=2_000_000,
        n_sizes=6,
        max_eval_tokens=65_536,
        id_docs=512,
        id_context=512,
        notes="about 2 hours on 2 cores: 6 sizes over 1.8 decades",
    ),
    PretrainPreset(
        name="gpu-quick",
        corpora=THREE,
        model=GPTConfig(block_size=256, n_layer=6, n_head=6, n_embd=384),
        train=TrainConfig(max_steps=600, lr=1e-3, min_lr=1e-4, warmup_steps=50, eval_every=50, patience=3),
        batch_size=64,
        vocab_size=4096,
        n_min=8_000,
        n_max=8_000_000,
        n_sizes=6,
        max_eval_tokens=131_072,
        id_docs=2048,
        notes="sized for about 8 minutes on one H200 (bf16), 3 decades of n; not measured in this repository",
    ),
    PretrainPreset(
        name="gpu-paper",
        corpora=THREE,
        model=GPTConfig(block_size=1024, n_layer=12, n_head=12, n_embd=768),
        train=TrainConfig(
            max_steps=200_000, lr=6e-4, min_lr=6e-5, warmup_steps=2000, eval_every=1000, patience=5, grad_accum=60
        ),
        vocab_size=50_257,
        tokenizer_bytes=50_000_000,
        n_min=1_000_000,
        n_max=10**10,
        n_sizes=7,
        max_eval_tokens=1_048_576,
        id_docs=10**9,
        notes="Table 2: 12 layers, 12 heads, width 768, context 1024, AdamW 6e-4 -> 6e-5, 2000 warmup, "
        "200k steps, global batch 1920 sequences (32 x 60 accumulation; Table 2 does not say "
        "sequences or tokens); the n grid spans 3 decades where the corpus allows",
    ),
)

NAME = "{tag}-n{n}-s{seed}"
DATASET = "dataset.json"  # written by prepare_dataset in each data/<tag>/


def corpus_tag(corpus: str) -> str:
    """The corpus as it appears in run and data directory names: a built-in name as it is; one's own
    (text:PATH, dir:PATH) as its kind, a slug of the file name and 8 hex digits of the path's digest."""
    if corpus in CORPORA:
        return corpus
    kind, _, path = corpus.partition(":")
    slug = re.sub(r"[^a-z0-9]+", "-", Path(path).name.lower())[:40].strip("-") or "corpus"  # cut, then trimmed
    return f"{kind}-{slug}-{hashlib.sha256(path.encode()).hexdigest()[:8]}"


def run_data_dir(ctx: Context, spec: RunSpec) -> Path:
    """The prepared data directory a language-model run spec (pretrain or model kind) trains on, once its tag
    is checked to be its corpus's: a spec whose tag names another corpus's data is refused."""
    p = spec.params
    if p["tag"] != corpus_tag(p["corpus"]):
        raise ValueError(f"run spec {spec.run}: tag {p['tag']!r} is not that of corpus {p['corpus']!r}")
    return ctx.sweep.data_dir(p["tag"])


def run_name(params: Mapping) -> str:
    return layout.run_name(NAME, params)


def new_config(preset: PretrainPreset, options: Mapping) -> dict:
    corpora = [check_corpus(c) for c in options.get("corpora") or preset.corpora]
    preset.validate()
    return {"preset": preset.as_dict(), "corpora": corpora}


def _prepare(ctx: Context, corpus: str) -> dict:
    """Tokenizer and shards of a corpus under data/<tag>/ (prepare_dataset is idempotent)."""
    key = ("dataset", corpus)
    if key not in ctx.cache:
        ctx.cache[key] = prepare_dataset(dataset_spec(ctx.preset, corpus), ctx.sweep.data_dir(corpus_tag(corpus)))
    return ctx.cache[key]


def plan(ctx: Context, log: Callable[[str], None]) -> list[RunSpec]:
    from tmcheck.empirics.lm.pretrain import check_model_memory

    # before any data is prepared: a model over the machine's memory is one line naming the preset's fields
    check_model_memory(ctx.preset.model, ctx.preset.batch_size, ctx.preset.train.device, "preset model/batch_size")
    specs = []
    for corpus in ctx.config["corpora"]:
        meta = _prepare(ctx, corpus)
        tokens = meta["splits"]["train"]["tokens"]
        grid = ctx.preset.grid(tokens)
        log(f"{corpus}: {tokens:,} training tokens; n = {', '.join(f'{n:,}' for n in grid)}")
        for n in grid:
            for seed in ctx.preset.seeds:
                params = {"corpus": corpus, "tag": corpus_tag(corpus), "n": n, "seed": seed}
                specs.append(RunSpec("pretrain", run_name(params), params))
    return specs


def run(ctx: Context, spec: RunSpec) -> dict:
    p = spec.params
    row = train_lm(ctx.preset, run_data_dir(ctx, spec), p["n"], p["seed"], ctx.sweep.run_dir(spec.run), ctx.progress)
    return {**row, "stop": stop_reason(row["stopped_early"]), "max_steps": ctx.preset.train.max_steps}


def describe(row: dict) -> str:
    return (
        f"test loss {row['test_loss']:.4f} after {row['steps']} steps ({row['seconds']:.1f}s, stopped on {row['stop']})"
    )


KIND = module_kind(globals())


def full_split_run(sweep_dir: Path, corpus: str) -> Path:
    """The run directory of the model trained on the full training split (first seed)."""
    sweep = SweepDir(sweep_dir)
    p = sweep.preset()
    from tmcheck.empirics.data.tokens import read_dataset

    meta = read_dataset(sweep.data_dir(corpus_tag(corpus)))
    n = p.grid(meta["splits"]["train"]["tokens"])[-1]
    path = sweep.run_dir(run_name({"tag": corpus_tag(corpus), "n": n, "seed": p.seeds[0]}))
    if not (path / BEST).exists():
        raise FileNotFoundError(2, "full-split model not trained yet; run the sweep first", str(path / BEST))
    return path
