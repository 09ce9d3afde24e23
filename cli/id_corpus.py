"""`tmcheck id corpus SWEEP_DIR`: the ID of each corpus and the predicted alpha_D (paper Section 3).

Embeds the test set with the model trained on the full training split and runs the ID estimator.
Every place where the paper's code departs from its text is an option, recorded in id.json:
--window prefix, --batch-size 3600, --final-ln before, --estimator mle-mean.
Registered into the `tmcheck id` group by cli/id.py. Library: tmcheck.empirics.lm.embed.corpus_id.
"""

from __future__ import annotations

from pathlib import Path

import typer
from rich.table import Table

from tmcheck.cli.common import console, handle_errors, print_json
from tmcheck.cli.options import BootstrapOpt, DeviceOpt, JsonOpt, SeedOpt, parse_list, positive_finite, positive_int


@handle_errors
def corpus(
    sweep_dir: Path = typer.Argument(..., help="A sweep directory (tmcheck sweep data)."),
    corpus_name: list[str] | None = typer.Option(
        None, "--corpus", help="Corpora, comma-separated or repeated (default: all)."
    ),
    layer: int | None = typer.Option(None, "--layer", help="Block, 1-based; 0 = input embeddings (default: last)."),
    window: str = typer.Option("random", "--window", help="random (paper text) or prefix (paper code)."),
    final_ln: str = typer.Option(
        "after", "--final-ln", help="after or before the final LayerNorm (paper code: before for nanoGPT checkpoints)."
    ),
    context: int | None = typer.Option(None, "--context", help="Tokens per document (default: the preset's)."),
    tokens_per_doc: int | None = typer.Option(
        None, "--tokens-per-doc", help="Embedded tokens per document (default: the preset's; paper: 32)."
    ),
    estimator: str = typer.Option(
        "mle",
        "--estimator",
        help="mle (inverse mean) or mle-mean (mean of per-point estimates), or any estimator of `tmcheck id estimate`.",
    ),
    k: int = typer.Option(20, "--k", callback=positive_int, help="Neighbours (paper: K=20)."),
    protocol: str = typer.Option("paper", "--protocol", help="paper (batches, mean of batch estimates) or full."),
    batch_size: int = typer.Option(
        4096, "--batch-size", callback=positive_int, help="Batch size (paper text 4096, paper code 3600)."
    ),
    bootstrap: BootstrapOpt = 200,
    beta: float = typer.Option(
        1.0,
        "--beta",
        callback=positive_finite,
        help="Smoothness β for an extra alpha_D = 2β/(2β+d) (the paper's class: β ≤ 1).",
    ),
    seed: SeedOpt = 0,
    device: DeviceOpt = "auto",
    json_: JsonOpt = False,
) -> None:
    """Estimate the ID of each corpus's test-set embeddings and the predicted alpha_D (written to id.json)."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from tmcheck.empirics.lm.embed import EmbedOptions, IDOptions, corpus_id
    from tmcheck.empirics.report.common import format_interval
    from tmcheck.empirics.sweep import SweepDir

    sweep = SweepDir(sweep_dir)
    config, preset = sweep.read_config(), sweep.preset()
    if config["kind"] != "pretrain":
        raise ValueError(
            f"{sweep_dir} is a {config['kind']} sweep; `id corpus` embeds the corpora of a pretraining sweep"
        )
    names = [c for item in corpus_name for c in parse_list(item, "--corpus")] if corpus_name else config["corpora"]
    eo = EmbedOptions(
        context=context or preset.id_context,
        tokens_per_doc=tokens_per_doc or preset.id_tokens_per_doc,
        window=window,
        final_ln=final_ln,
        layer=layer,
        seed=seed,
    )
    io = IDOptions(estimator=estimator, k=k, protocol=protocol, batch_size=batch_size, bootstrap=bootstrap, beta=beta)
    res = {}
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=True,
        disable=json_,
    ) as bar:
        task = bar.add_task("embedding and estimating the ID", total=len(names))
        for name in names:  # one corpus at a time: corpus_id merges each into id.json
            bar.update(task, description=f"ID of {name}")
            res[name] = corpus_id(sweep_dir, [name], eo, io, device)[name]
            bar.advance(task)
    if json_:
        print_json(res)
        return
    table = Table(title=f"ID of test-set embeddings ({estimator}, K={k}, protocol {protocol}); alpha_D = 2b/(2b+d)")
    for col in ("corpus", "points", "d", "95% CI", "alpha_D (b=1)", f"alpha_D (b={beta:g})"):
        table.add_column(col, justify="left" if col == "corpus" else "right")
    for c, e in res.items():
        table.add_row(
            c,
            str(e["points"]),
            f"{e['d']:.2f}",
            format_interval(e["d_ci"], 2),
            f"{e['alpha_D']:.3f}",
            f"{e['alpha_D_beta']:.3f}",
        )
    console.print(table)


def register(app: typer.Typer) -> None:
    app.command("corpus")(corpus)
