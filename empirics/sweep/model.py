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
from capped runs. The presets are tmcheck.empirics.presets.ModelPreset.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from tmcheck.empirics.data import check_corpus, prepare_dataset
from tmcheck.empirics.lm.pretrain import dataset_spec, train_lm
from tmcheck.empirics.presets import ModelPreset, non_embedding_params
from tmcheck.empirics.sweep import layout
from tmcheck.empirics.sweep.core import Context, RunSpec
from tmcheck.empirics.sweep.kinds import Kind
from tmcheck.empirics.sweep.pretrain import corpus_tag

__all__ = ["KIND", "NAME", "describe", "new_config", "non_embedding_params", "plan", "run", "run_name"]

NAME = "{tag}-l{n_layer}-w{n_embd}-n{n}-s{seed}"


def run_name(params: Mapping) -> str:
    return layout.run_name(NAME, params)


def new_config(preset: ModelPreset, options: Mapping) -> dict:
    from tmcheck.empirics.data.prepare import require_prepared

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
    if p["tag"] != corpus_tag(p["corpus"]):
        raise ValueError(f"run spec {spec.run}: tag {p['tag']!r} is not that of corpus {p['corpus']!r}")
    sized = ctx.preset.sized(p["n_layer"], p["n_embd"])
    row = train_lm(sized, ctx.sweep.data_dir(p["tag"]), p["n"], p["seed"], ctx.sweep.run_dir(spec.run), ctx.progress)
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


KIND = Kind(
    name="model",
    description="model scaling: test loss against non-embedding parameters N (Figure 3)",
    new_config=new_config,
    plan=plan,
    run_name=run_name,
    run=run,
    describe=describe,
    report="tmcheck.empirics.report.model",
)
