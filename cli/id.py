"""`tmcheck id`: intrinsic-dimension estimation (paper Section 5, "Estimating the ID of text").

`estimate` runs one estimator under a named protocol on points from .npy, .pt or .safetensors;
`synth` writes a point cloud of known dimension from the validation set; `ablate` the ID against the
embedding model (Figure 4); `corpus` the ID of each corpus of a pretraining sweep and the predicted
alpha_D (Section 3), with every place where the paper's code departs from its text an option recorded
in id.json (--window prefix, --batch-points 3600, --final-ln before, --estimator mle-mean).
Library: tmcheck.empirics.id, tmcheck.empirics.report.pretrain.corpus_id.
"""

from __future__ import annotations

import io
import warnings
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from tmcheck.cli.common import console, err_console, handle_errors, print_json
from tmcheck.cli.options import (
    BootstrapOpt,
    DeviceOpt,
    JsonOpt,
    RegistryHelp,
    SeedOpt,
    WindowOpt,
    beta_value,
    nonneg_finite,
    parse_list,
    positive_int,
)
from tmcheck.empirics.id.protocol import ESTIMATORS, MAX_FULL_POINTS
from tmcheck.empirics.id.registry import help_text
from tmcheck.util.jsonable import plain

app = typer.Typer(no_args_is_help=True, help="Intrinsic dimension of point clouds (paper Sec. 5).")


def _estimator_name(name: str) -> str:
    if name not in ESTIMATORS:
        raise typer.BadParameter(f"unknown estimator {name!r}; choose from {', '.join(ESTIMATORS)}")
    return name


def _notes(caught) -> None:
    for w in caught:
        err_console.print(f"[yellow]note:[/] {w.message}", highlight=False, soft_wrap=True)


PROGRESS_MIN_POINTS = 20000  # below this an estimate takes about a second: no progress display


# why kept: one Annotated alias per option, as in embed and fit: alike in shape, each its own flag and help
EstimateFileOpt = Annotated[Path, typer.Argument(help="Points, one per row: .npy, .pt or .safetensors.")]
EstimateEstimatorOpt = Annotated[
    str, typer.Option("--estimator", "-e", help=help_text(ESTIMATORS.values()), callback=_estimator_name)
]
EstimateKOpt = Annotated[
    int, typer.Option("--k", "--n-neighbors", callback=positive_int, help="Neighbours per point (the paper's K = 20).")
]
EstimateProtocolOpt = Annotated[
    str,
    typer.Option(
        "--protocol", help="full: all points at once; paper: random disjoint batches, mean of batch estimates."
    ),
]
EstimateBatchPointsOpt = Annotated[
    int, typer.Option("--batch-points", callback=positive_int, help="Points per batch of the paper protocol.")
]
EstimateMaxPointsOpt = Annotated[
    int,
    typer.Option(
        "--max-points",
        callback=positive_int,
        help="Refuse the full protocol on more points than this (its exact search costs N^2 D).",
    ),
]
EstimateDuplicatesOpt = Annotated[
    str, typer.Option("--duplicates", help="Duplicate rows: remove (warn, count), keep, error.")
]
EstimateRtolOpt = Annotated[
    float | None,
    typer.Option(
        "--rtol",
        callback=nonneg_finite,
        help="Near-duplicate tolerance relative to the points' norms (default: 16 eps of their dtype).",
    ),
]
EstimateKeyOpt = Annotated[
    str | None, typer.Option("--key", help="Tensor name inside a .pt dict or .safetensors file.")
]
EstimateOutputOpt = Annotated[Path | None, typer.Option("--output", help="Also write the result as JSON to this file.")]


@app.command()
@handle_errors
def estimate(
    file: EstimateFileOpt,
    estimator: EstimateEstimatorOpt = "mle",
    k: EstimateKOpt = 20,
    protocol: EstimateProtocolOpt = "full",
    batch_points: EstimateBatchPointsOpt = 4096,
    max_points: EstimateMaxPointsOpt = MAX_FULL_POINTS,
    bootstrap: BootstrapOpt = 200,
    device: DeviceOpt = "auto",
    duplicates: EstimateDuplicatesOpt = "remove",
    rtol: EstimateRtolOpt = None,
    key: EstimateKeyOpt = None,
    seed: SeedOpt = 0,
    output: EstimateOutputOpt = None,
    json_: JsonOpt = False,
) -> None:
    """Estimate the intrinsic dimension of the rows of FILE."""
    from concurrent.futures import ThreadPoolExecutor

    from tmcheck.empirics.id.io import load_points

    # the file is read in a thread while torch imports (1 s; the estimate imports no scikit-learn): numpy's read and the
    # page faults of a new array run outside the GIL, so the load costs no wall time when the file is in
    # the page cache or the disk keeps up (#28)
    with ThreadPoolExecutor(1) as pool:
        pending = pool.submit(load_points, file, key=key)
        import torch  # noqa: F401  (the engine's; imported here, beside the read)

        from tmcheck.empirics.id import estimate_id
        from tmcheck.util import progress

        X = pending.result()
    shape = getattr(X, "shape", ())
    show = len(shape) == 2 and shape[0] >= PROGRESS_MIN_POINTS
    # one task of unknown length: the bar pulses and its clock shows the time taken so far (117 s on
    # 30,000 x 100 once passed under a spinner without one)
    what = f"{estimator} on {shape[0]:,} x {shape[1]} points, {bootstrap} resamples" if show else ""
    status = progress.bar(None, what, show=show)
    with warnings.catch_warnings(record=True) as caught, status:
        warnings.simplefilter("always")
        result = estimate_id(
            X,
            estimator=estimator,
            k=k,
            protocol=protocol,
            batch_size=batch_points,
            bootstrap=bootstrap,
            duplicates=duplicates,
            device=device,
            seed=seed,
            rtol=rtol,
            max_points=max_points,
        )
    _notes(caught)
    payload = {"file": str(file), "shape": list(X.shape), **result.as_dict()}
    if output is not None:
        import json

        from tmcheck.util.atomic import write_text

        write_text(output, json.dumps(plain(payload), indent=2) + "\n")
    if json_:
        print_json(payload)
        return
    _table(file, X.shape, estimator, result)


def _table(file: Path, shape, estimator: str, result) -> None:
    p = result.protocol
    table = Table(title=f"intrinsic dimension of {file.name} ({shape[0]} x {shape[1]})")
    table.add_column("quantity")
    table.add_column("value")
    table.add_row("estimator", f"{estimator}, k={result.k}" if result.k else estimator)
    table.add_row("protocol", p["name"])
    table.add_row("dimension", f"{result.dimension:.3f}")
    level = p.get("ci_level", 0.95)
    table.add_row(
        f"{level:.0%} interval",
        "-" if result.ci is None else f"[{result.ci[0]:.3f}, {result.ci[1]:.3f}] ({p.get('interval', '')})",
    )
    table.add_row("points used", str(result.n_used))
    table.add_row(
        "duplicates removed",
        f"{result.n_duplicates} (rule: distance <= {p['duplicate_rtol']:.3g} x norm)"
        if "duplicate_rtol" in p
        else str(result.n_duplicates),
    )
    if p["name"] == "paper":
        table.add_row("batches", f"{p['n_batches']} x {p['batch_size']} (dropped {p['n_dropped_remainder']})")
    if "curve" in p:
        by = "n" if "n" in p["curve"][0] else "k"
        table.add_row(f"MLE vs {by.upper()}", ", ".join(f"{c[by]}: {c['dimension']:.2f}" for c in p["curve"]))
    if "scales" in p:
        table.add_row("GRIDE vs scale", ", ".join(f"n1={c['n1']}: {c['dimension']:.2f}" for c in p["scales"]))
    console.print(table)


@app.command(cls=RegistryHelp)
@handle_errors
def synth(
    manifold: str = typer.Option("sphere", "--manifold", help="{manifolds:validation}."),
    d: int | None = typer.Option(None, "--d", help="Intrinsic dimension (default: the manifold's)."),
    ambient: int = typer.Option(
        768, "--D", callback=positive_int, help="Ambient dimension D (random isometric embedding)."
    ),
    n: int = typer.Option(4096, "--n", callback=positive_int, help="Number of points."),
    noise: float = typer.Option(
        0.0, "--noise", callback=nonneg_finite, help="Gaussian noise s.d. per ambient coordinate."
    ),
    seed: int = typer.Option(0, "--seed", help="Random seed."),
    output: Path = typer.Option(Path("points.npy"), "--output", help="Output .npy file (written atomically)."),
    json_: JsonOpt = False,
) -> None:
    """Write N points of a manifold with known intrinsic dimension (the validation set) to a .npy file."""
    import numpy as np

    from tmcheck.empirics.id import VALIDATION_SETS, validation_points
    from tmcheck.theory.manifolds import MAX_SAMPLE_BYTES
    from tmcheck.util.atomic import write_bytes

    if output.suffix != ".npy":
        raise ValueError(f"--output must end in .npy, got {output}")
    if 8 * n * ambient > MAX_SAMPLE_BYTES:  # the float64 sample before the float32 copy
        raise ValueError(
            f"--n {n} x --D {ambient} points need {8 * n * ambient / 1e9:.3g} GB "
            f"(limit {MAX_SAMPLE_BYTES / 1e9:.3g} GB); lower --n or --D"
        )
    X = validation_points(manifold, n, d=d, D=ambient, noise=noise, seed=seed, dtype=np.float32)
    buf = io.BytesIO()
    np.save(buf, X)
    write_bytes(output, buf.getvalue())
    info = {
        "output": str(output),
        "manifold": manifold,
        "d": d if d is not None else VALIDATION_SETS[manifold][0],
        "D": ambient,
        "n": n,
        "noise": noise,
        "seed": seed,
    }
    if json_:
        print_json(info)
    else:
        console.print(f"wrote {n} points of {manifold} (d={info['d']}) in R^{ambient} to {output}")


@app.command()
@handle_errors
def ablate(
    source: list[Path] = typer.Argument(
        ...,
        help="A model-scaling sweep directory (tmcheck sweep model), a model suite (a directory with "
        "suite.json, as --keep-models writes), or one or more local models (transformers directories) to "
        "compare on the same text.",
    ),
    corpus: str = typer.Option(
        "stories", "--corpus", help="Local models: embed the test split of this tmcheck corpus."
    ),
    text: Path | None = typer.Option(None, "--text", help="Local models: embed this UTF-8 file's paragraphs instead."),
    estimator: list[str] | None = typer.Option(
        None, "--estimator", "-e", help="Estimators, comma-separated or repeated (default: mle, twonn, gride)."
    ),
    k: int = typer.Option(20, "--k", callback=positive_int, help="Neighbours of the MLE (the paper's K = 20)."),
    docs: int = typer.Option(256, "--docs", callback=positive_int, help="Test documents embedded."),
    context: int = typer.Option(256, "--context", callback=positive_int, help="Window length fed to the model."),
    # why kept: options declared in the signature, like theorem 2's: alike in shape, each its own flag
    tokens_per_doc: int = typer.Option(
        32,
        "--tokens-per-doc",
        callback=positive_int,
        help="Tokens kept per document for the params, width and layer curves.",
    ),
    max_points: int = typer.Option(
        4096, "--max-points", callback=positive_int, help="Cap on the points of one estimate."
    ),
    bootstrap: BootstrapOpt = 200,
    seed: SeedOpt = 0,
    device: DeviceOpt = "auto",
    out: Path = typer.Option(Path("ablate"), "--out", "-o", help="Output directory: ablate.json and fig_ablate.png."),
    keep_models: bool = typer.Option(
        False,
        "--keep-models",
        help="A sweep: keep its full-n models' weights and test documents in OUT/models (a suite that "
        "`tmcheck id ablate OUT/models` runs again) and ablate from them.",
    ),
    json_: JsonOpt = False,
) -> None:
    """ID against parameters, embedding width, layer and context position (the paper's Figure 4), with each
    panel's trend and whether its sign depends on the estimator."""
    from tmcheck.cli.options import parse_list
    from tmcheck.empirics.report import ablation as ab
    from tmcheck.util.atomic import write_json

    names = (
        [e for item in estimator for e in parse_list(item, "--estimator")]
        if estimator
        else list(ab.AblateOptions().estimators)
    )
    opts = ab.AblateOptions(
        estimators=tuple(names),
        k=k,
        bootstrap=bootstrap,
        docs=docs,
        context=context,
        tokens_per_doc=tokens_per_doc,
        max_points=max_points,
        seed=seed,
        device=device,
    )
    sweep = len(source) == 1 and (source[0] / "config.json").exists() and (source[0] / "plan.json").exists()
    suite = len(source) == 1 and (source[0] / ab.SUITE).exists()
    if keep_models and not sweep:
        raise ValueError("--keep-models keeps the models of a model-scaling sweep; give its directory")
    if (sweep or suite) and text is not None:
        raise ValueError("--text is for local models; a sweep or a suite embeds its own corpus's test documents")
    if sweep and keep_models:
        ab.save_suite(ab.sweep_members(source[0], opts), out / ab.SUITE_DIR, f"the model sweep {source[0].name}")
        members, label = ab.suite_members(out / ab.SUITE_DIR, opts)
    elif sweep:
        members, label = ab.sweep_members(source[0], opts), f"the model sweep {source[0].name}"
    elif suite:
        members, label = ab.suite_members(source[0], opts)
    else:
        texts = ab.read_texts(text, docs) if text is not None else ab.corpus_texts(corpus, docs)
        members = ab.model_members(source, texts, opts)
        label = f"{', '.join(p.name for p in source)} ({text.name if text else corpus + ' test split'})"
    log = (lambda s: None) if json_ else (lambda s: err_console.print(s, highlight=False))
    result = ab.ablate(members, opts, label, log)
    out.mkdir(parents=True, exist_ok=True)
    write_json(out / "ablate.json", result)
    ab.figure(result, out / "fig_ablate.png")
    if json_:
        print_json(result)
        return
    table = Table(title=f"ID ablations on {label} (k={k}; {result['intervals']})")
    for col in ("panel", "x", *names):
        table.add_column(col)
    for panel, data in result["panels"].items():
        for p in data["points"]:
            x = f"positions {p['positions'][0]}-{p['positions'][1] - 1}" if panel == "position" else f"{p['x']:g}"
            table.add_row(panel, x, *(_ablate_cell(p["estimates"][n]) for n in names))
    console.print(table)
    console.print(trend_table(result, names))
    console.print(f"written: {out / 'ablate.json'}, {out / 'fig_ablate.png'}")


def trend_table(result: dict, names) -> Table:
    """Each panel's trend: the slope of d-hat against x per estimator, and whether its sign agrees."""
    from tmcheck.empirics.report import ablation as ab

    trends = Table(title="Trend per panel: least-squares slope of d-hat against x (log10 x: params, width, position)")
    for col in ("panel", *names, "sign"):
        trends.add_column(col)
    for panel, data in result["panels"].items():
        tr = data["trend"]
        trends.add_row(panel, *(_slope_cell(tr["estimators"][n]) for n in names), ab.verdict(tr))
    return trends


def _slope_cell(e: dict) -> str:
    if e["slope"] is None:
        return "too few points"
    return f"{e['slope']:+.2f}" + (f" [{e['ci'][0]:+.2f}, {e['ci'][1]:+.2f}]" if e["ci"] else "")


def _ablate_cell(e: dict) -> str:
    if e["d"] is None:
        return "refused"
    return f"{e['d']:.2f}" + (f" [{e['ci'][0]:.2f}, {e['ci'][1]:.2f}]" if e["ci"] else "")


CorpusSweepDirOpt = Annotated[Path, typer.Argument(help="A sweep directory (tmcheck sweep data).")]
CorpusCorpusNameOpt = Annotated[
    list[str] | None, typer.Option("--corpus", help="Corpora, comma-separated or repeated (default: all).")
]
CorpusLayerOpt = Annotated[
    int | None, typer.Option("--layer", help="Block, 1-based; 0 = input embeddings (default: last).")
]
CorpusFinalLnOpt = Annotated[
    str,
    typer.Option(
        "--final-ln", help="after or before the final LayerNorm (paper code: before for nanoGPT checkpoints)."
    ),
]
CorpusContextOpt = Annotated[
    int | None, typer.Option("--context", callback=positive_int, help="Tokens per document (default: the preset's).")
]
CorpusTokensPerDocOpt = Annotated[
    int | None,
    typer.Option(
        "--tokens-per-doc",
        callback=positive_int,
        help="Embedded tokens per document (default: the preset's; paper: 32).",
    ),
]
CorpusEstimatorOpt = Annotated[
    str,
    typer.Option(
        "--estimator",
        help="mle (inverse mean) or mle-mean (mean of per-point estimates), or any estimator of `tmcheck id estimate`.",
    ),
]
CorpusKOpt = Annotated[int, typer.Option("--k", callback=positive_int, help="Neighbours (paper: K=20).")]
CorpusProtocolOpt = Annotated[str, typer.Option("--protocol", help="paper (batches, mean of batch estimates) or full.")]
CorpusBatchPointsOpt = Annotated[
    int,
    typer.Option(
        "--batch-points", callback=positive_int, help="Points per ID batch (paper text 4096, paper code 3600)."
    ),
]
CorpusBetaOpt = Annotated[
    float,
    typer.Option(
        "--beta", callback=beta_value, help="Smoothness β for an extra alpha_D = 2β/(2β+d) (the paper's class: β ≤ 1)."
    ),
]
CorpusRecomputeOpt = Annotated[
    bool,
    typer.Option(
        "--recompute",
        help="Estimate again even where id.json holds an estimate with the same protocol (after retraining).",
    ),
]


@app.command("corpus")
@handle_errors
def corpus(
    sweep_dir: CorpusSweepDirOpt,
    corpus_name: CorpusCorpusNameOpt = None,
    layer: CorpusLayerOpt = None,
    window: WindowOpt = "random",
    final_ln: CorpusFinalLnOpt = "after",
    context: CorpusContextOpt = None,
    tokens_per_doc: CorpusTokensPerDocOpt = None,
    estimator: CorpusEstimatorOpt = "mle",
    k: CorpusKOpt = 20,
    protocol: CorpusProtocolOpt = "paper",
    batch_points: CorpusBatchPointsOpt = 4096,
    bootstrap: BootstrapOpt = 200,
    beta: CorpusBetaOpt = 1.0,
    seed: SeedOpt = 0,
    device: DeviceOpt = "auto",
    recompute: CorpusRecomputeOpt = False,
    json_: JsonOpt = False,
) -> None:
    """Estimate the ID of each corpus's test-set embeddings and the predicted alpha_D (stored in id.json
    with its protocol; an estimate with the same protocol is reused), with its certificate: the same model,
    layer and protocol probed with inputs planted on tori of known dimension 1, 2, 4 (a report feeds d-hat
    into a prediction only when it is certified)."""
    from tmcheck.empirics.lm.embed import EmbedOptions
    from tmcheck.empirics.report.common import format_interval
    from tmcheck.empirics.report.pretrain import IDOptions, corpus_id
    from tmcheck.empirics.sweep import SweepDir
    from tmcheck.theory.bounds import alpha_D
    from tmcheck.util import progress

    sweep = SweepDir(sweep_dir)
    config, preset = sweep.read_config(), sweep.preset()
    if config["kind"] != "pretrain":
        raise ValueError(
            f"{sweep_dir} is a {config['kind']} sweep; `id corpus` embeds the corpora of a pretraining sweep"
        )
    names = [c for item in corpus_name for c in parse_list(item, "--corpus")] if corpus_name else config["corpora"]
    eo = EmbedOptions(
        context=preset.id_context if context is None else context,
        tokens_per_doc=preset.id_tokens_per_doc if tokens_per_doc is None else tokens_per_doc,
        window=window,
        final_ln=final_ln,
        layer=layer,
        seed=seed,
    )
    io = IDOptions(estimator=estimator, k=k, protocol=protocol, batch_size=batch_points, bootstrap=bootstrap)
    res = {}
    with progress.bar(len(names), "embedding and estimating the ID") as advance:
        for name in names:  # one corpus at a time: corpus_id stores each in id.json
            entry = corpus_id(sweep, [name], eo, io, device, recompute=recompute)[name]
            e = entry["estimate"]
            res[name] = {**e, "beta": beta, "alpha_D_beta": alpha_D(e["d"], beta), "protocol": entry["protocol"]}
            advance()
    if json_:
        print_json(res)
        return
    table = Table(title=f"ID of test-set embeddings ({estimator}, K={k}, protocol {protocol}); alpha_D = 2b/(2b+d)")
    for col in ("corpus", "points", "d", "95% CI", "alpha_D (b=1)", f"alpha_D (b={beta:g})", "certified"):
        table.add_column(col, justify="left" if col == "corpus" else "right")
    for c, e in res.items():
        cert = e["certificate"]
        table.add_row(
            c,
            str(e["points"]),
            f"{e['d']:.2f}",
            format_interval(e["d_ci"], 2),
            f"{e['alpha_D']:.3f}",
            f"{e['alpha_D_beta']:.3f}",
            f"{'yes' if cert['certified'] else 'no'} (layer {cert['layer']})",
        )
    console.print(table)
