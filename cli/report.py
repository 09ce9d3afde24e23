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
    sweep_dir: Path = typer.Argument(
        ..., help="A sweep directory (tmcheck sweep data, sweep model or sweep synthetic)."
    ),
    bootstrap: BootstrapOpt = 1000,
    second_id: bool = typer.Option(
        False,
        "--second-id",
        help="Pretraining sweeps: also estimate each corpus's ID with the pretrained encoder all-MiniLM-L6-v2 "
        "(the models extra), same documents and protocol, and test alpha-hat against 2/(2+d-hat) of it too.",
    ),
    json_: JsonOpt = False,
) -> None:
    """Fit the exponents, test them against the predicted ones, write the markdown report and figures.

    Each curve gets the paper's log-log line and the offset law E + B n^-alpha, with intervals whose
    coverage is measured at the sweep's own design, the fit-range sensitivity and a curvature test;
    sizes whose runs hit the step cap are left out. A pretraining sweep is tested against
    alpha_D = 2/(2+d-hat) per corpus (d-hat's interval carried); a synthetic sweep against 2β/(2β+d)
    and 2β/d at the known d and at d-hat. --bootstrap sets the resamples of E's interval and the bands.
    A second ID stored in id.json (by --second-id) is always carried into a second test.
    """
    from tmcheck.empirics.report import build_report, summary

    rep = build_report(sweep_dir, bootstrap, **({"second_ids": True} if second_id else {}))
    if json_:
        print_json(rep)
        return
    console.print(summary(rep), highlight=False, soft_wrap=True)
