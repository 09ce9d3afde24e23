"""The pretraining data-scaling sweep (kind "pretrain"; Section 3, Figure 2 of the paper).

One run per (corpus, n, seed): a GPT trained on the first n training tokens of the corpus
(tmcheck.empirics.lm.pretrain.train_lm), test loss measured on the fixed test split at the best-validation
checkpoint. The plan prepares each corpus once under data/<tag>/ (tokenizer and token shards,
tmcheck.empirics.data; `corpus_tag` names one's own text:/dir: corpora) and grids n geometrically
up to the full training split (PretrainPreset.grid).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Mapping
from pathlib import Path

from tmcheck.empirics.data import CORPORA, check_corpus, prepare_dataset
from tmcheck.empirics.lm.checkpoint import BEST
from tmcheck.empirics.lm.pretrain import dataset_spec, train_lm
from tmcheck.empirics.lm.train import stop_reason
from tmcheck.empirics.presets import PretrainPreset
from tmcheck.empirics.sweep import layout
from tmcheck.empirics.sweep.core import Context, RunSpec, SweepDir, read_json
from tmcheck.empirics.sweep.kinds import Kind

NAME = "{tag}-n{n}-s{seed}"
DATASET = "dataset.json"  # written by prepare_dataset in each data/<tag>/


def corpus_tag(corpus: str) -> str:
    """The corpus as it appears in run and data directory names: a built-in name as it is; one's own
    (text:PATH, dir:PATH) as its kind, a slug of the file name and 8 hex digits of the path's digest."""
    if corpus in CORPORA:
        return corpus
    kind, _, path = corpus.partition(":")
    slug = re.sub(r"[^a-z0-9]+", "-", Path(path).name.lower()).strip("-")[:40] or "corpus"
    return f"{kind}-{slug}-{hashlib.sha256(path.encode()).hexdigest()[:8]}"


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
    if p["tag"] != corpus_tag(p["corpus"]):
        raise ValueError(f"run spec {spec.run}: tag {p['tag']!r} is not that of corpus {p['corpus']!r}")
    row = train_lm(
        ctx.preset, ctx.sweep.data_dir(p["tag"]), p["n"], p["seed"], ctx.sweep.run_dir(spec.run), ctx.progress
    )
    return {**row, "stop": stop_reason(row["stopped_early"]), "max_steps": ctx.preset.train.max_steps}


def describe(row: dict) -> str:
    return (
        f"test loss {row['test_loss']:.4f} after {row['steps']} steps ({row['seconds']:.1f}s, stopped on {row['stop']})"
    )


KIND = Kind(
    name="pretrain",
    description="pretraining data scaling: test loss against training tokens n (Figure 2)",
    new_config=new_config,
    plan=plan,
    run_name=run_name,
    run=run,
    describe=describe,
    report="tmcheck.empirics.report.pretrain",
)


def full_split_run(sweep_dir: Path, corpus: str) -> Path:
    """The run directory of the model trained on the full training split (first seed)."""
    sweep = SweepDir(sweep_dir)
    p = sweep.preset()
    meta = read_json(sweep.data_dir(corpus_tag(corpus)) / DATASET, "a prepared dataset record")
    n = p.grid(meta["splits"]["train"]["tokens"])[-1]
    path = sweep.run_dir(run_name({"tag": corpus_tag(corpus), "n": n, "seed": p.seeds[0]}))
    if not (path / BEST).exists():
        raise FileNotFoundError(2, "full-split model not trained yet; run the sweep first", str(path / BEST))
    return path
