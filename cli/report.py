"""`tmcheck report SWEEP_DIR`: predicted vs observed data-scaling exponents (paper Section 3, Figure 2).

Fits alpha_hat_D with intervals and writes report.md, report.json and PNG figures into the sweep.
Library: tmcheck.empirics.report.
"""

from __future__ import annotations

from pathlib import Path

import typer

from tmcheck.cli.common import console, handle_errors, print_json


@handle_errors
def command(
    sweep_dir: Path = typer.Argument(..., help="A sweep directory (tmcheck sweep data or tmcheck synth regress)."),
    bootstrap: int = typer.Option(1000, "--bootstrap", help="Bootstrap resamples for the interval of alpha_hat_D."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Fit alpha_hat_D, compare with the predicted exponents, write the markdown report and figures.

    A pretraining sweep (tmcheck sweep data) is compared with alpha_D = 2/(2+d) per corpus; a
    synthetic sweep (tmcheck synth regress) with 2β/(2β+d) and 2β/d at the known d and β.
    """
    from tmcheck.empirics.synthetic_sweep import is_synthetic_sweep

    if is_synthetic_sweep(sweep_dir):
        from tmcheck.cli.synth import report_cmd

        return report_cmd(sweep_dir, bootstrap, as_json)
    from tmcheck.empirics.report import build_report, markdown_table

    rep = build_report(sweep_dir, bootstrap)
    if as_json:
        print_json({k: v for k, v in rep.items()})
        return
    console.print(markdown_table(rep), highlight=False, soft_wrap=True)
    console.print(f"report: {sweep_dir / 'report.md'}; figures: {sweep_dir / 'fig_scaling.png'}, "
                  f"{sweep_dir / 'fig_curves.png'}")
