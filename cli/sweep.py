"""`tmcheck sweep data`: the data-scaling sweep of the paper's Section 3 (Figure 2).

A sweep is a directory (config, one folder per run, results.jsonl); rerunning resumes it.
Library: tmcheck.empirics.sweep.
"""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from tmcheck.cli.common import console, handle_errors, print_json

app = typer.Typer(no_args_is_help=True, help="Sweeps over training-set size (paper Sec. 3, Figure 2).")


@app.command()
@handle_errors
def data(
    sweep_dir: Path = typer.Argument(Path("runs/sweep"), help="Sweep directory (created, or resumed)."),
    preset: Optional[str] = typer.Option(None, "--preset", help="tiny, cpu-demo, cpu-small, gpu-quick, gpu-paper "
                                         "(default: the sweep's own, or tiny for a new one)."),
    corpus: Optional[List[str]] = typer.Option(None, "--corpus", help="Corpus (repeatable; default: the preset's)."),
    as_json: bool = typer.Option(False, "--json", help="Print the result rows as JSON."),
) -> None:
    """Train at a geometric grid of training-set sizes n and seeds; test loss at the best-val checkpoint."""
    from tmcheck.empirics.sweep import run_sweep

    log = (lambda s: None) if as_json else (lambda s: console.print(s, highlight=False))
    rows = run_sweep(sweep_dir, preset, corpus, progress=not as_json, log=log)
    if as_json:
        print_json(rows)
    else:
        console.print(f"{len(rows)} runs finished; results in {sweep_dir / 'results.jsonl'}")
