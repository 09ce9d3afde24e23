"""Options every command shares, defined once, and the validators of values at the CLI boundary.

Use the `Annotated` aliases as parameter types, e.g. `json_: JsonOpt = False`. A validator raises
`typer.BadParameter`, which Typer prints as one line (with the option's name) and exit code 2.
Library code validates again where it matters; the CLI refuses early with the option named.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, TypeVar

import typer
from typer.core import TyperCommand, TyperOption

from tmcheck.cli.common import fail

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


# ------------------------------------------------------------------------------ help from the registries
# A help text may name what a registry holds through a placeholder, filled in when the help is read
# (so that `tmcheck --help` imports no preset module): {presets:KIND} lists a sweep kind's presets with the
# first clause of their notes, {fields:KIND} the fields `--set FIELD=VALUE` can change on its presets
# (from the schema), {manifolds} the manifolds of tmcheck.theory.manifolds, {manifolds:atlas} those Theorem 2
# builds an atlas for, {manifolds:validation} the ID validation sets. A command whose options use them is
# declared with `@app.command(cls=RegistryHelp)`.
_PLACEHOLDER = re.compile(r"\{(presets|fields):([\w-]+)\}|\{(manifolds)(?::(atlas|validation))?\}")


@functools.cache
def preset_words(kind: str) -> str:
    """'tiny (the first clause of its notes), cpu (...)': every preset of a sweep kind, from the registry."""
    from tmcheck.empirics.sweep.kinds import get_preset, preset_names

    def clause(notes: str) -> str:
        return re.split(r"; |\. ", notes, maxsplit=1)[0].rstrip(".")

    return ", ".join(f"{n} ({clause(get_preset(n, kind).notes)})" for n in preset_names(kind))


@functools.cache
def field_words(kind: str) -> str:
    """'dims (list of int), noise (float), ...': the fields `--set` changes on a kind's presets."""
    from tmcheck.empirics.sweep import overrides
    from tmcheck.empirics.sweep.kinds import preset_class

    return ", ".join(f"{k} ({overrides.type_words(t)})" for k, t in overrides.settable(preset_class(kind)).items())


def manifold_words(which: str | None = None) -> str:
    """The manifolds of a registry: all of tmcheck.theory.manifolds, the atlas ones, or the ID validation sets."""
    if which == "validation":
        from tmcheck.empirics.id.validation import VALIDATION_SETS as names
    elif which == "atlas":
        from tmcheck.theory.manifolds import ATLAS_MANIFOLDS as names
    else:
        from tmcheck.theory.manifolds import MANIFOLDS as names
    return ", ".join(names)


def fill_help(text: str | None) -> str | None:
    """`text` with its registry placeholders replaced by what the registries hold."""
    if not text:
        return text

    def one(m: re.Match) -> str:
        if m[3]:
            return manifold_words(m[4])
        return preset_words(m[2]) if m[1] == "presets" else field_words(m[2])

    return _PLACEHOLDER.sub(one, text)


class _RegistryHelpOption(TyperOption):
    """A TyperOption whose help is filled from the registries when read (RegistryHelp)."""

    @property
    def help(self):  # type: ignore[override]
        return fill_help(self.__dict__.get("_help"))

    @help.setter
    def help(self, value):
        self.__dict__["_help"] = value


class RegistryHelp(TyperCommand):
    """A command whose options' help texts hold registry placeholders ({presets:KIND}, {fields:KIND},
    {manifolds}), filled in only when a help text is read."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        for p in self.params:
            raw = p.__dict__.get("help")
            if type(p) is TyperOption and isinstance(raw, str) and _PLACEHOLDER.search(raw):
                del p.__dict__["help"]
                p.__class__ = _RegistryHelpOption
                p.help = raw


# ------------------------------------------------------------------------------------------------ flags
# A flag takes no value (`--json`, not `--json true`), but typer >= 0.29 shows its type, `<bool>`, in
# every help, which invites `--json true` (refused: exit 2). Every command's help goes through this
# class, so the one rule is set here: a flag shows no type. (tests/cli/test_cli_flag_help.py walks
# every command.)
_TYPE_COLUMN = getattr(TyperOption, "display_type_rich", None)


def _flag_shows_no_type(self: TyperOption, ctx) -> str | None:
    if self.is_flag and not self.count:
        return None
    return _TYPE_COLUMN(self, ctx)


if _TYPE_COLUMN is not None:
    TyperOption.display_type_rich = _flag_shows_no_type


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
DeviceOpt = Annotated[
    str, typer.Option("--device", callback=device_name, help="auto (CUDA when present), cpu, cuda or cuda:N.")
]
BootstrapOpt = Annotated[int, typer.Option("--bootstrap", min=0, help="Bootstrap resamples (0: none).")]
WindowOpt = Annotated[str, typer.Option("--window", help="random (paper text) or prefix (paper code).")]
SizeLimitOpt = Annotated[
    int,
    typer.Option(
        "--size-limit",
        callback=positive_int,
        help="Refuse networks with more tokens or heads than this (checked before building).",
    ),
]
MaxParamsOpt = Annotated[
    int | None,
    typer.Option(
        "--max-params",
        callback=positive_int,
        help="Refuse a model of more parameters than this, before building it (default 2,000,000,000).",
    ),
]


# ------------------------------------------------------------- sweep executors
# The executor options every sweep command takes (`sweep data`, `sweep model`, `sweep synthetic`), declared
# once: a command that takes a parameter `executor: ExecutorSpec` and is decorated with @executor_options gets
# the nine options below in its place (after the command name: `tmcheck sweep synthetic DIR --executor slurm`),
# parsed into one ExecutorSpec, whose `make(log)` is the executor:
#
#     @app.command()
#     @handle_errors
#     @executor_options
#     def cmd(..., executor: ExecutorSpec = LOCAL, json_: JsonOpt = False):
#         run_sweep(..., executor=executor.make(log))   # inside a run_failures() block: failed runs exit 1
#
# Library: tmcheck.empirics.sweep.executors (local pool, serial) and tmcheck.empirics.sweep.slurm.

EXECUTORS = ("local", "slurm")


def sweep_directory(positional: Path | None, out: Path | None, default: Path) -> Path:
    """`sweep KIND DIR` and `sweep KIND --out DIR` name the same directory; both at once must agree."""
    if positional is not None and out is not None and positional != out:
        raise typer.BadParameter(f"two sweep directories given ({positional} and --out {out}); give one")
    return positional or out or default


def _executor_name(value: str) -> str:
    if value not in EXECUTORS:
        raise typer.BadParameter(f"unknown executor {value!r}; use local or slurm")
    return value


@dataclass(frozen=True)
class ExecutorSpec:
    """The executor options of a sweep command, parsed; `make(log)` builds the executor they name."""

    # why kept: the parsed options as fields, one a line, as a preset schema's: declarations alike in shape only
    executor: str = "local"
    workers: int | None = None
    max_failures: int | None = None
    slurm_partition: str | None = None
    slurm_gpus_per_task: int | None = None
    slurm_time: str | None = None
    slurm_array_parallelism: int | None = None
    slurm_cpus_per_task: int | None = None
    sbatch: tuple[str, ...] | None = None

    def make(self, log):
        """The executor the options name; options of the other executor are refused (one line, exit 2)."""
        slurm_given = [
            name
            for name, v in (
                ("--slurm-partition", self.slurm_partition),
                ("--slurm-gpus-per-task", self.slurm_gpus_per_task),
                ("--slurm-time", self.slurm_time),
                ("--slurm-array-parallelism", self.slurm_array_parallelism),
                ("--slurm-cpus-per-task", self.slurm_cpus_per_task),
                ("--sbatch", self.sbatch),
            )
            if v
        ]
        if self.executor == "local":
            if slurm_given:
                raise typer.BadParameter(f"{slurm_given[0]} needs --executor slurm")
            from tmcheck.empirics.sweep.executors import local

            return local(self.workers, self.max_failures, log)
        if self.workers is not None:
            raise typer.BadParameter("--workers is for --executor local (SLURM runs one task per run)")
        from tmcheck.empirics.sweep.slurm import minutes, sbatch_options, slurm

        try:
            limit = minutes(self.slurm_time) if self.slurm_time is not None else None
            extra = sbatch_options(list(self.sbatch) if self.sbatch else None)
        except ValueError as exc:
            raise typer.BadParameter(str(exc)) from None
        return slurm(
            self.slurm_partition,
            self.slurm_gpus_per_task,
            self.slurm_cpus_per_task,
            limit,
            self.slurm_array_parallelism,
            extra,
            max_failures=self.max_failures,
            log=log,
        )


LOCAL = ExecutorSpec()

# ExecutorSpec's fields as the options of a command: (field, type, default, typer.Option)
_EXECUTOR_OPTIONS = [
    (
        "executor",
        str,
        "local",
        typer.Option(
            "--executor",
            callback=_executor_name,
            help="local (a process pool here) or slurm (one array task per run).",
        ),
    ),
    (
        "workers",
        int | None,
        None,
        typer.Option(
            "--workers",
            callback=positive_int,
            help="local: worker processes (default: one per GPU, else one per core; 1 runs in this process).",
        ),
    ),
    (
        "max_failures",
        int | None,
        None,
        typer.Option(
            "--max-failures",
            callback=positive_int,
            help="Stop handing out runs after this many failures (default: never).",
        ),
    ),
    ("slurm_partition", str | None, None, typer.Option("--slurm-partition", help="slurm: partition.")),
    (
        "slurm_gpus_per_task",
        int | None,
        None,
        typer.Option("--slurm-gpus-per-task", min=0, help="slurm: GPUs per run (default: 1 for gpu* presets, else 0)."),
    ),
    (
        "slurm_time",
        str | None,
        None,
        typer.Option(
            "--slurm-time",
            help="slurm: time limit per run, minutes or H:MM:SS (a run that hits it is requeued and resumes).",
        ),
    ),
    (
        "slurm_array_parallelism",
        int | None,
        None,
        typer.Option("--slurm-array-parallelism", callback=positive_int, help="slurm: at most this many runs at once."),
    ),
    (
        "slurm_cpus_per_task",
        int | None,
        None,
        typer.Option(
            "--slurm-cpus-per-task",
            callback=positive_int,
            help="slurm: cores per run (default: 8 for gpu* presets, else 1).",
        ),
    ),
    (
        "sbatch",
        list[str] | None,
        None,
        typer.Option(
            "--sbatch",
            help="slurm: other sbatch options as KEY=VALUE, repeated (e.g. --sbatch qos=high --sbatch account=lab).",
        ),
    ),
]
_EXECUTOR_PARAMS = [
    inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=default, annotation=Annotated[tp, option])
    for name, tp, default, option in _EXECUTOR_OPTIONS
]


def option_group(name: str, params: list[inspect.Parameter], build: Callable) -> Callable:
    """A decorator: the command's parameter `name` replaced, for Typer, by the options `params`; the command
    receives them as one object, `build(**given)` (the options Typer was given, by name)."""

    def decorate(func: Callable) -> Callable:
        sig = inspect.signature(func, eval_str=True)
        fields = list(sig.parameters.values())
        at = [p.name for p in fields].index(name)
        fields[at : at + 1] = params

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            given = {p.name: kwargs.pop(p.name) for p in params if p.name in kwargs}
            return func(*args, **{name: build(**given)}, **kwargs)

        wrapper.__signature__ = sig.replace(parameters=fields)  # type: ignore[attr-defined]
        wrapper.__annotations__ = {p.name: p.annotation for p in fields}
        return wrapper

    return decorate


def _executor(**given) -> ExecutorSpec:
    if given.get("sbatch") is not None:
        given["sbatch"] = tuple(given["sbatch"])
    return ExecutorSpec(**given)


# `func`'s parameter `executor` (an ExecutorSpec) replaced, for Typer, by the nine executor options
executor_options = option_group("executor", _EXECUTOR_PARAMS, _executor)


@contextlib.contextmanager
def run_failures():
    """Failed runs of a sweep: one line on stderr and exit 1 (the finished rows are merged already)."""
    from tmcheck.empirics.sweep.executors import SweepFailed

    try:
        yield
    except SweepFailed as exc:
        fail(str(exc), 1)
