"""Options every command shares, defined once, and the validators of values at the CLI boundary.

Use the `Annotated` aliases as parameter types, e.g. `json_: JsonOpt = False`. A validator raises
`typer.BadParameter`, which Typer prints as one line (with the option's name) and exit code 2.
Library code validates again where it matters; the CLI refuses early with the option named.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Annotated, TypeVar
from collections.abc import Callable

import typer

T = TypeVar("T")

DEVICE_PATTERN = re.compile(r"^(auto|cpu|cuda(:\d{1,3})?)$")


# ----------------------------------------------------------------------------------------- validators
def beta_value(value: float | None) -> float | None:
    """Hölder smoothness β ∈ (0, 1] (the paper's class)."""
    if value is not None and not (math.isfinite(value) and 0 < value <= 1):
        raise typer.BadParameter(f"β must lie in (0, 1], got {value}")
    return value


def positive_int(value: int | None) -> int | None:
    if value is not None and value < 1:
        raise typer.BadParameter(f"must be a count ≥ 1, got {value}")
    return value


def nonneg_int(value: int | None) -> int | None:
    if value is not None and value < 0:
        raise typer.BadParameter(f"must be ≥ 0, got {value}")
    return value


def nonneg_finite(value: float | None) -> float | None:
    if value is not None and not (math.isfinite(value) and value >= 0):
        raise typer.BadParameter(f"must be a finite number ≥ 0, got {value}")
    return value


def positive_finite(value: float | None) -> float | None:
    if value is not None and not (math.isfinite(value) and value > 0):
        raise typer.BadParameter(f"must be a finite number > 0, got {value}")
    return value


def device_name(value: str | None) -> str | None:
    """auto, cpu, cuda or cuda:N; cuda when CUDA is absent is refused here, not deep in torch."""
    if value is None:
        return value
    v = value.strip().lower()
    if not DEVICE_PATTERN.match(v):
        raise typer.BadParameter(f"unknown device {value!r}: use auto, cpu, cuda or cuda:N")
    if v.startswith("cuda"):
        import torch

        if not torch.cuda.is_available():
            raise typer.BadParameter(f"device {value!r} asked for, but CUDA is not available here")
        idx = int(v.split(":")[1]) if ":" in v else 0
        if idx >= torch.cuda.device_count():
            raise typer.BadParameter(f"device {value!r}: only {torch.cuda.device_count()} CUDA device(s)")
    return v


def parse_list(
    text: str | None,
    name: str,
    conv: Callable[[str], T] = str,  # type: ignore[assignment]
    check: Callable[[T], T | None] | None = None,
    allow_empty: bool = False,
) -> tuple[T, ...] | None:
    """'1,2,4' -> (1, 2, 4). None stays None (the preset's value); '' is refused unless allow_empty."""
    if text is None:
        return None
    parts = [p.strip() for p in text.split(",")]
    if parts == [""]:
        if allow_empty:
            return ()
        raise typer.BadParameter(f"{name}: empty list")
    out = []
    for p in parts:
        if not p:
            raise typer.BadParameter(f"{name}: empty item in {text!r}")
        try:
            v = conv(p)
        except (ValueError, ArithmeticError):
            raise typer.BadParameter(f"{name}: cannot read {p!r} as {getattr(conv, '__name__', 'a value')}") from None
        if isinstance(v, float) and not math.isfinite(v):
            raise typer.BadParameter(f"{name}: {p!r} is not finite")
        if check is not None:
            try:
                check(v)
            except typer.BadParameter as exc:
                raise typer.BadParameter(f"{name}: {exc.message}") from None
        out.append(v)
    return tuple(out)


# -------------------------------------------------------------------------------------------- aliases
JsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON document on stdout instead of rich output.")]
VerboseOpt = Annotated[bool, typer.Option("--verbose", "-v", help="Print the full tables, not only the summary.")]
ExactOpt = Annotated[
    bool, typer.Option("--exact/--float", help="Verify in exact rational arithmetic (default) or float64.")
]
TrialsOpt = Annotated[int, typer.Option("--trials", min=1, help="Random inputs the verification checks.")]
ExportOpt = Annotated[
    Path | None, typer.Option("--export", help="Write the network to this file (tmcheck-network v1 JSON).")
]
OutOpt = Annotated[Path, typer.Option("--out", "-o", help="Output directory (created, or resumed).")]
SeedOpt = Annotated[int, typer.Option("--seed", help="Random seed.")]
BetaOpt = Annotated[float, typer.Option("--beta", callback=beta_value, help="Hölder smoothness β in (0, 1].")]
OptionalBetaOpt = Annotated[
    float | None, typer.Option("--beta", callback=beta_value, help="Hölder smoothness β in (0, 1].")
]
DeviceOpt = Annotated[
    str, typer.Option("--device", callback=device_name, help="auto (CUDA when present), cpu, cuda or cuda:N.")
]
BootstrapOpt = Annotated[int, typer.Option("--bootstrap", min=0, help="Bootstrap resamples (0: none).")]
MaxParamsOpt = Annotated[
    int | None,
    typer.Option(
        "--max-params",
        callback=positive_int,
        help="Refuse a model of more parameters than this, before building it (default 2,000,000,000).",
    ),
]
