"""The submitter of a sweep: `run_sweep` creates or resumes a sweep directory, plans it, hands the
runs not done yet to an executor and merges the rows (the experiments of paper Section 3, eq. 3-4).

It holds the sweep's lock for its whole run (tmcheck.empirics.sweep.core.SweepDir.lock) and refuses,
before anything is read or trained:
- a config that names corpora to read from files (`text:PATH`, `dir:PATH`) that the caller did not
  give itself: a sweep directory may come from someone else, and resuming it must not read (and store
  tokens of) whatever files its config.json names;
- a directory whose results.jsonl records runs it holds no directory of (committed results without
  their runs): rebuilding results.jsonl from the runs would drop those rows.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path

from tmcheck.empirics.sweep.core import Executor, SweepDir, reuse_runs
from tmcheck.empirics.sweep.kinds import preset_class
from tmcheck.util.progress import bar


def allowed_corpora(preset_class: type, preset, options: Mapping | None) -> set[str]:
    """The corpora a caller names itself: the built-in ones, those of its options (the command line)
    and those of a preset object it passes (a preset *name* names only built-in corpora)."""
    from tmcheck.empirics.data import CORPORA

    allowed = set(CORPORA) | set(preset_class.config_corpora(dict(options or {})))
    if preset is not None and not isinstance(preset, str):
        allowed |= set(preset_class.config_corpora(preset.as_dict()))
    return allowed


def check_corpora(sweep: SweepDir, config: dict, preset_class: type, allowed: set[str]) -> None:
    """ValueError (one line) for a corpus of the stored config that the caller did not name."""
    for corpus in preset_class.config_corpora(config):
        if corpus not in allowed:
            raise ValueError(
                f"{sweep.config_path} names the corpus {corpus!r}, which is not a built-in one: a sweep's "
                f"config never chooses files to read; pass it yourself (--corpus {corpus}) to use it"
            )


def run_sweep(
    sweep_dir: Path | str,
    kind: str,
    preset=None,
    options: Mapping | None = None,
    progress: bool = True,
    log: Callable[[str], None] = print,
    executor: Executor | None = None,
    reuse: Path | str | None = None,
) -> list[dict]:
    """Create or resume the sweep in sweep_dir (the submitter: holds the sweep's lock throughout).

    A new directory takes `preset` (a name or a preset object; default tiny) and `options`; an
    existing one keeps its config and refuses a different preset or option. Plans, writes plan.json,
    hands the specs not done yet to `executor`, rebuilds results.jsonl after each finished run, and
    returns every row of the plan in plan order. `progress`: the sweep's progress bar on stderr
    (tmcheck.util.progress decides when it draws; stdout stays free for --json). `executor`: default
    executors.serial (here, one run after another); failed runs are recorded and raise
    executors.SweepFailed at the end. `reuse`: another sweep directory of the same kind whose finished
    runs compute the same rows as specs not started here (core.reuse_runs); those are taken, not run."""
    from tmcheck.empirics.sweep.executors import serial

    executor = executor if executor is not None else serial(log=log)
    sweep = SweepDir(sweep_dir)
    with sweep.lock():
        config = sweep.open(kind, preset, options)
        cls = preset_class(config["kind"])
        check_corpora(sweep, config, cls, allowed_corpora(cls, preset, options))
        ctx = sweep.context()  # no bar per run: the sweep's bar is the one display
        specs = ctx.kind.plan(ctx, log)
        recorded = sweep.recorded_only(specs)
        if recorded:
            raise ValueError(
                f"{sweep.results_path} records {len(recorded)} run(s) that {sweep.path} holds no directory of "
                f"({recorded[0]}, ...): committed results without their runs; resume a copy that holds "
                f"runs/, or move results.jsonl away to train them again"
            )
        sweep.write_plan(specs)
        if reuse is not None:
            taken = reuse_runs(sweep, ctx, specs, reuse)
            log(f"reused {len(taken)} finished run(s) of {reuse} that compute the same rows")
        todo = [s for s in specs if sweep.read_row(s.run) is None]
        log(
            f"{ctx.kind.name} sweep {ctx.preset.name}: {len(specs) - len(todo)} of {len(specs)} runs done, "
            f"{len(todo)} to run"
        )
        with bar(len(todo), f"{ctx.kind.name} sweep", show=progress and bool(todo), last="-") as advance:
            for row in executor(ctx, todo):
                sweep.merge(specs)
                log(f"  {row['run']}: {ctx.kind.describe(row)}")
                advance(last=row["run"])
        return sweep.merge(specs)
