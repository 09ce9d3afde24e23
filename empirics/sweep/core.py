"""The sweep core: a directory, its config, its plan of run specs, and the runs (paper Section 3).

Every experiment of tmcheck that trains many models (the data-scaling sweep of Figure 2, the
synthetic regression of eq. 3-4) is a *sweep*: a config with a mandatory `kind`, a plan of
run specs (plain JSON data), and one directory per run. The directory is the only source of truth
(layout in tmcheck.empirics.sweep.layout):

- a run is idempotent and resumes from its own directory; it ends by writing runs/<run>/row.json
  atomically, and a run whose row.json exists is never redone;
- results.jsonl is rebuilt from the row.json files (plan order), so it needs no lock held across
  runs and can be rebuilt by anyone at any time;
- the submitter (`run_sweep`) holds the sweep's .lock, so two submitters on one directory are
  refused; a worker (`run_spec`) holds only its run's lock, so many workers, in other processes or on
  other machines sharing the directory, can run different specs of one sweep at once.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from collections.abc import Callable, Iterable, Mapping

from tmcheck.util import atomic
from tmcheck.empirics.sweep import layout
from tmcheck.empirics.sweep.kinds import Kind, get_kind


LOCK_TRIES, LOCK_WAIT_S = 10, 0.05


class SweepBusy(ValueError):
    """Another process holds the lock (of the sweep, or of one run)."""


@contextlib.contextmanager
def _flock(path: Path, what: str):
    """An exclusive, non-blocking flock on `path` (released by the OS even on SIGKILL)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    f = open(path, "a+")
    for attempt in range(LOCK_TRIES):  # `status` probes locks for an instant: retry briefly before refusing
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
            break
        except BlockingIOError:
            if attempt == LOCK_TRIES - 1:
                f.seek(0)
                holder = f.read().strip() or "unknown"
                f.close()
                raise SweepBusy(f"{what} is in use by another process (pid {holder}); wait for it to finish") from None
            time.sleep(LOCK_WAIT_S)
    try:
        f.seek(0)
        f.truncate()
        f.write(str(os.getpid()))
        f.flush()
        yield
    finally:
        f.close()


def _is_locked(path: Path) -> bool:
    if not path.exists():
        return False
    with open(path, "a+") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        fcntl.flock(f, fcntl.LOCK_UN)
    return False


def _plain(obj: Any) -> Any:
    """obj as JSON would give it back (tuples become lists): what configs are compared as."""
    return json.loads(json.dumps(obj))


@dataclass(frozen=True)
class RunSpec:
    """One run of a sweep, as plain data: its kind, its parameters, and its name (derived by the kind
    from the parameters through layout.run_name; `from_dict` checks the derivation)."""

    kind: str
    run: str
    params: Mapping[str, Any]

    def as_dict(self) -> dict:
        return {"kind": self.kind, "run": self.run, "params": _plain(dict(self.params))}

    @classmethod
    def from_dict(cls, d: Mapping) -> RunSpec:
        if not isinstance(d, Mapping) or set(d) != {"kind", "run", "params"} or not isinstance(d["params"], Mapping):
            raise ValueError("a run spec is a JSON object with exactly the keys kind, run and params")
        return cls(d["kind"], layout.check_run_name(d["run"]), dict(d["params"]))


@dataclass
class Context:
    """What running specs of one sweep needs, built once per process: the directory, its config, the
    preset as an object, and a cache that a kind may use between specs of one process."""

    sweep: SweepDir
    config: dict
    kind: Kind
    preset: Any
    progress: bool = False
    cache: dict = field(default_factory=dict)


class SweepDir:
    """A sweep directory: paths, the submitter's lock, the config, the plan, the rows."""

    def __init__(self, path: Path | str):
        self.path = Path(path)

    def __repr__(self) -> str:
        return f"SweepDir({str(self.path)!r})"

    # ---------------------------------------------------------------------------------- paths
    @property
    def config_path(self) -> Path:
        return self.path / layout.CONFIG

    @property
    def results_path(self) -> Path:
        return self.path / layout.RESULTS

    @property
    def id_path(self) -> Path:
        return self.path / layout.ID

    def data_dir(self, name: str) -> Path:
        return self._inside(layout.DATA, layout.check_run_name(name))

    def run_dir(self, run: str) -> Path:
        return self._inside(layout.RUNS, layout.check_run_name(run))

    def _inside(self, *parts: str) -> Path:
        """self.path/parts, refused (ValueError) when any part of it below the sweep is a symlink or
        it resolves outside the sweep: names read from files never lead elsewhere (issue 13, S2)."""
        path = self.path
        for part in parts:
            path = path / part
            if path.is_symlink():
                raise ValueError(f"{path} is a symbolic link; a sweep's directories must be its own")
        if not path.resolve().is_relative_to(self.path.resolve()):
            raise ValueError(f"{path} lies outside the sweep directory {self.path}")
        return path

    # ---------------------------------------------------------------------------------- lock
    def lock(self):
        """The submitter's lock: held by `run_sweep` (and executors that submit) for their whole run."""
        return _flock(self.path / layout.LOCK, f"sweep directory {self.path}")

    def locked(self) -> bool:
        return _is_locked(self.path / layout.LOCK)

    # ---------------------------------------------------------------------------------- config
    def exists(self) -> bool:
        return self.config_path.exists()

    def read_config(self) -> dict:
        if not self.config_path.exists():
            raise FileNotFoundError(2, "not a sweep directory (no config.json)", str(self.path))
        config = json.loads(self.config_path.read_text())
        if not isinstance(config, dict) or not isinstance(config.get("preset"), dict):
            raise ValueError(f"{self.config_path} is not a sweep config (no preset)")
        if "kind" not in config and "corpora" in config:
            config["kind"] = "pretrain"  # written before kinds existed: only pretraining sweeps lacked one
        if "kind" not in config:
            raise ValueError(f"{self.config_path} names no sweep kind")
        return config

    @property
    def kind(self) -> str:
        return self.read_config()["kind"]

    def preset(self):
        from tmcheck.empirics.presets import preset_from_dict

        config = self.read_config()
        get_kind(config["kind"])  # imports the kind's module, which registers its preset class
        return preset_from_dict(config["kind"], config["preset"])

    def open(self, kind: str, preset=None, options: Mapping | None = None) -> dict:
        """The config of this directory: created from (preset, options) for a new sweep (refused in a
        directory that holds other files), else the stored one, refused (ValueError) when the preset or
        an option given differs from it. Call it holding the lock."""
        from tmcheck.empirics.presets import get_preset, preset_from_dict

        k = get_kind(kind)
        options = dict(options or {})
        if isinstance(preset, str):
            preset = get_preset(preset, kind)
        if self.exists():
            stored = self.read_config()
            if stored["kind"] != kind:
                raise ValueError(f"{self.path} holds a {stored['kind']} sweep, not a {kind} sweep; use a new directory")
            given = {key: v for key, v in options.items() if v is not None}
            if preset is not None or given:
                p = preset if preset is not None else preset_from_dict(kind, stored["preset"])
                kept = {key: v for key, v in stored.items() if key not in ("kind", "preset")}
                want = _plain({"kind": kind, **k.new_config(p, {**kept, **given})})
                differ = [key for key in want if want[key] != stored.get(key)]
                if differ:
                    raise ValueError(
                        f"{self.path} holds a {kind} sweep of preset {stored['preset'].get('name')!r} "
                        f"with other settings ({', '.join(differ)}); use a new directory"
                    )
            return stored
        # a typo must not start hours of work among other files: a new sweep needs an empty or new
        # directory (the submitter's own .lock, taken just before, does not count)
        if self.path.is_dir() and any(p.name != layout.LOCK for p in self.path.iterdir()):
            raise ValueError(
                f"{self.path} exists and is not a tmcheck sweep (no {layout.CONFIG}); use an empty or new directory"
            )
        if preset is None:
            preset = get_preset("tiny", kind)
        config = _plain({"kind": kind, **k.new_config(preset, options)})
        atomic.write_json(self.config_path, config)
        return config

    def context(self, progress: bool = False) -> Context:
        """What running this sweep's specs needs; the stored config is checked first: it must be what
        its kind makes of its own preset and options (a corpus, a name read from config.json is then
        one the kind accepts)."""
        from tmcheck.empirics.presets import preset_from_dict

        config = self.read_config()
        kind = get_kind(config["kind"])
        kept = {key: v for key, v in config.items() if key not in ("kind", "preset")}
        try:
            preset = preset_from_dict(config["kind"], config["preset"])
            want = _plain(kind.new_config(preset, kept))
        except (TypeError, AttributeError) as exc:  # values of the wrong JSON type
            raise ValueError(f"{self.config_path} is not a valid {kind.name} config: {exc}") from None
        differ = [key for key in want if want[key] != config.get(key)]
        if differ:
            raise ValueError(f"{self.config_path} is not a valid {kind.name} config ({', '.join(differ)})")
        return Context(self, config, kind, preset, progress)

    # ---------------------------------------------------------------------------------- plan and rows
    def write_plan(self, specs: list[RunSpec]) -> None:
        atomic.write_json(self.path / layout.PLAN, [s.as_dict() for s in specs])

    def read_plan(self) -> list[RunSpec]:
        path = self.path / layout.PLAN
        if not path.exists():
            raise FileNotFoundError(2, "the sweep has no plan yet (run the sweep command first)", str(path))
        return [RunSpec.from_dict(d) for d in json.loads(path.read_text())]

    def read_row(self, run: str) -> dict | None:
        """The row.json of a finished run (None if not finished); a row naming another run is refused."""
        path = self.run_dir(run) / layout.ROW
        if not path.exists():
            return None
        row = json.loads(path.read_text())
        if not isinstance(row, dict) or row.get("run") != run:
            raise ValueError(f"{path} is not the row of run {run}")
        return row

    def rows(self) -> list[dict]:
        """The merged results (results.jsonl) as they stand."""
        return atomic.read_jsonl(self.results_path)

    def merge(self, specs: list[RunSpec] | None = None) -> list[dict]:
        """Rebuild results.jsonl from the row.json of every finished run of the plan, in plan order.

        Atomic and lock-free: the rows are the run directories' own records, so concurrent merges
        write the same content, and a crash mid-merge leaves the old file."""
        specs = self.read_plan() if specs is None else specs
        rows = [r for r in (self.read_row(s.run) for s in specs) if r is not None]
        atomic.write_jsonl(self.results_path, rows)
        return rows

    def status(self, specs: list[RunSpec] | None = None) -> dict[str, str]:
        """run -> 'done' (row.json written), 'running' (its lock held now), 'started' (a directory, no
        row: interrupted, or failed) or 'pending'."""
        specs = self.read_plan() if specs is None else specs
        out = {}
        for s in specs:
            d = self.run_dir(s.run)
            if (d / layout.ROW).exists():
                out[s.run] = "done"
            elif _is_locked(d / layout.LOCK):
                out[s.run] = "running"
            else:
                out[s.run] = "started" if d.exists() else "pending"
        return out

    def adopt_legacy_rows(self, specs: list[RunSpec]) -> None:
        """Sweeps made before row.json existed (they have no plan.json) kept their rows only in
        results.jsonl: give each such run its row.json, so that the directory resumes without redoing
        finished runs. A directory with a plan is never adopted from: its row.json files are the truth."""
        if (self.path / layout.PLAN).exists():
            return
        names = {s.run for s in specs}
        for row in self.rows():
            run = row.get("run")
            if run in names and self.read_row(run) is None and self.run_dir(run).exists():
                atomic.write_json(self.run_dir(run) / layout.ROW, row)


def run_spec(
    sweep: SweepDir | Path | str, spec: RunSpec | Mapping, ctx: Context | None = None, progress: bool = False
) -> dict:
    """Run one spec of the sweep (in this process), or return its row if it is already done.

    Safe to call from any process that sees the sweep directory: it holds the run's own lock (a
    second worker on the same spec gets SweepBusy), checks that the run directory holds this spec,
    resumes what the directory holds, and writes row.json atomically at the end."""
    sweep = sweep if isinstance(sweep, SweepDir) else SweepDir(sweep)
    spec = spec if isinstance(spec, RunSpec) else RunSpec.from_dict(spec)
    ctx = ctx or sweep.context(progress)
    if spec.kind != ctx.kind.name:
        raise ValueError(f"a {spec.kind} run spec cannot run in the {ctx.kind.name} sweep {sweep.path}")
    derived = ctx.kind.run_name(spec.params)
    if derived != spec.run:
        raise ValueError(f"run spec named {spec.run!r}, but its parameters give {derived!r}")
    done = sweep.read_row(spec.run)
    if done is not None:
        return done
    run_dir = sweep.run_dir(spec.run)
    with _flock(run_dir / layout.LOCK, f"run {spec.run} of {sweep.path}"):
        done = sweep.read_row(spec.run)
        if done is not None:
            return done
        held = run_dir / layout.SPEC
        if held.exists() and json.loads(held.read_text()) != spec.as_dict():
            raise ValueError(f"{run_dir} holds a different run spec; use another sweep directory")
        atomic.write_json(held, spec.as_dict())
        row = {"run": spec.run, **{k: v for k, v in ctx.kind.run(ctx, spec).items() if k != "run"}}
        atomic.write_json(run_dir / layout.ROW, row)
    return row


# An executor runs specs and yields each finished row, in any order (tmcheck.empirics.sweep.executors:
# serial, a local process pool; tmcheck.empirics.sweep.slurm: a SLURM array). Workers call `run_spec`.
Executor = Callable[[Context, list[RunSpec]], Iterable[dict]]


def run_sweep(
    sweep_dir: Path | str,
    kind: str,
    preset=None,
    options: Mapping | None = None,
    progress: bool = True,
    log: Callable[[str], None] = print,
    executor: Executor | None = None,
) -> list[dict]:
    """Create or resume the sweep in sweep_dir (the submitter: holds the sweep's lock throughout).

    A new directory takes `preset` (a name or a preset object; default tiny) and `options`; an
    existing one keeps its config and refuses a different preset or option. Plans, writes plan.json,
    hands the specs not done yet to `executor`, rebuilds results.jsonl after each finished run, and
    returns every row of the plan in plan order. `progress`: a rich progress bar (terminals only).
    `executor`: default executors.serial (here, one run after another); failed runs are recorded and
    raise executors.SweepFailed at the end."""
    if executor is None:
        from tmcheck.empirics.sweep.executors import serial

        executor = serial(log=log)
    sweep = SweepDir(sweep_dir)
    with sweep.lock():
        sweep.open(kind, preset, options)
        ctx = sweep.context(progress)
        specs = ctx.kind.plan(ctx, log)
        sweep.adopt_legacy_rows(specs)
        sweep.write_plan(specs)
        todo = [s for s in specs if sweep.read_row(s.run) is None]
        log(
            f"{ctx.kind.name} sweep {ctx.preset.name}: {len(specs) - len(todo)} of {len(specs)} runs done, "
            f"{len(todo)} to run"
        )
        with _bar(progress, len(todo), f"{ctx.kind.name} sweep") as advance:
            for row in executor(ctx, todo):
                sweep.merge(specs)
                log(f"  {row['run']}: {ctx.kind.describe(row)}")
                advance()
        return sweep.merge(specs)


@contextlib.contextmanager
def _bar(enabled: bool, total: int, title: str):
    """A rich progress bar over the runs of a sweep (nothing when disabled or not on a terminal)."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        disable=not enabled or total == 0,
    ) as bar:
        task = bar.add_task(title, total=total)
        yield lambda: bar.advance(task)
