"""`tmcheck report SWEEP_DIR`: predicted against observed scaling exponents of any sweep directory
(pretraining: paper Section 3, Figure 2; synthetic regression: eq. 3-4).

Fits, figures, report.md and report.json are written into the sweep. Library:
tmcheck.empirics.report.build_report, which dispatches on the sweep's kind.
"""

from __future__ import annotations

from pathlib import Path

import typer

from tmcheck.cli.common import console, handle_errors, print_json
from tmcheck.cli.options import BootstrapOpt, JsonOpt


@handle_errors
def command(
    sweep_dir: Path = typer.Argument(..., help="A sweep directory (tmcheck sweep data or tmcheck synth regress)."),
    bootstrap: BootstrapOpt = 1000,
    json_: JsonOpt = False,
) -> None:
    """Fit the exponents, compare them with the predicted ones, write the markdown report and figures.

    A pretraining sweep is compared with alpha_D = 2/(2+d) per corpus; a synthetic sweep with
    2β/(2β+d) and 2β/d at the known d and β.
    """
    from tmcheck.empirics.report import build_report, summary

    rep = build_report(sweep_dir, bootstrap)
    if json_:
        print_json(rep)
        return
    console.print(summary(rep), highlight=False, soft_wrap=True)
