"""The sweep core: a directory, its config, its plan of run specs, and the runs (paper Section 3).

Every experiment of tmcheck that trains many models (the data-scaling sweep of Figure 2, the
synthetic regression of eq. 3-4) is a *sweep*: a config with a mandatory `kind`, a plan of
run specs (plain JSON data), and one directory per run. The directory is the only source of truth
(layout in tmcheck.empirics.sweep.layout):

- a run is idempotent and resumes from its own directory; it ends by writing runs/<run>/row.json
  atomically, and a run whose row.json exists is never redone;
- results.jsonl is rebuilt from the row.json files (plan order), so it needs no lock held across
  runs and can be rebuilt by anyone at any time;
- the submitter (`run_sweep`, tmcheck.empirics.sweep.runner) holds the sweep's .lock, so two
  submitters on one directory are refused; a worker (`run_spec`) holds only its run's lock, so many
  workers, in other processes or on other machines sharing the directory, can run different specs of
  one sweep at once;
- config.json is read through the one versioned schema (tmcheck.empirics.schema): an older file is
  migrated, a wrong type or value is one line naming the field, and nothing runs from a config that
  does not validate. Locks never write through a link (tmcheck.util.locks).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tmcheck.empirics.sweep import layout
from tmcheck.empirics.sweep.kinds import Kind, get_kind, get_preset, preset_class
from tmcheck.util import atomic, locks, safeio, safepath

SweepBusy = locks.Busy  # another process holds the lock (of the sweep, or of one run)


def plain(obj: Any) -> Any:
    """obj as JSON would give it back (tuples become lists): what configs are compared as."""
    return json.loads(json.dumps(obj))


def read_json(path: Path, what: str) -> Any:
    """The JSON document in `path`, read by the one rule for files (tmcheck.util.safeio: a regular
    file, size and nesting bounded); anything else is one line (ValueError) naming it."""
    return safeio.read_json(path, what)


@dataclass(frozen=True)
class RunSpec:
    """One run of a sweep, as plain data: its kind, its parameters, and its name (derived by the kind
    from the parameters through layout.run_name; `from_dict` checks the derivation)."""

    kind: str
    run: str
    params: Mapping[str, Any]

    def as_dict(self) -> dict:
        return {"kind": self.kind, "run": self.run, "params": plain(dict(self.params))}

    @classmethod
    def from_dict(cls, d: Mapping) -> RunSpec:
        if not isinstance(d, Mapping) or set(d) != {"kind", "run", "params"} or not isinstance(d["params"], Mapping):
            raise ValueError("a run spec is a JSON object with exactly the keys kind, run and params")
        return cls(d["kind"], layout.check_run_name(d["run"]), dict(d["params"]))


@dataclass
class Context:
    """What running specs of one sweep needs, built once per process: the directory, its config (every
    default filled in by the schema), the preset as an object, and a cache that a kind may use
    between specs of one process."""

    sweep: SweepDir
    config: dict
    kind: Kind
    preset: Any
    progress: bool = False
    cache: dict = field(default_factory=dict)


def without_notes(config: Mapping) -> dict:
    """A config as sweeps compare it: the preset's notes are documentation, not a setting."""
    out = plain(dict(config))
    if isinstance(out.get("preset"), dict):
        out["preset"].pop("notes", None)
    return out


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
        """self.path/parts, refused (ValueError) when any part of it below the sweep is a symlink
        (tmcheck.util.safepath, the one rule for output paths): names read from files never lead elsewhere."""
        return safepath.below(self.path, *parts)

    # ---------------------------------------------------------------------------------- lock
    def lock(self):
        """The submitter's lock: held by `run_sweep` (and executors that submit) for their whole run."""
        return locks.hold(self.path / layout.LOCK, f"sweep directory {self.path}")

    def locked(self) -> bool:
        return locks.is_held(self.path / layout.LOCK)

    # ---------------------------------------------------------------------------------- config
    def exists(self) -> bool:
        return self.config_path.exists()

    def load(self):
        """The config.json through the versioned schema (tmcheck.empirics.schema.load_config), its
        preset validated: SchemaError (one line naming the field) for anything else."""
        from tmcheck.empirics import schema

        if not self.config_path.exists():
            raise FileNotFoundError(2, "not a sweep directory (no config.json)", str(self.path))
        where = str(self.config_path)
        model = schema.load_config(read_json(self.config_path, "a sweep config"), where, preset_class)
        try:
            model.preset.validate()
        except ValueError as exc:
            raise schema.SchemaError(f"{where}: {exc}") from None
        return model

    def read_config(self) -> dict:
        """The config as plain data, migrated to the current schema version with every default filled."""
        return self.load().model_dump(mode="json")

    @property
    def kind(self) -> str:
        return self.read_config()["kind"]

    def preset(self):
        return self.load().preset

    def new_config(self, kind: str, preset, options: Mapping) -> dict:
        """The config a new sweep of (kind, preset, options) stores, validated by the schema."""
        from tmcheck.empirics import schema

        made = {"schema_version": schema.CONFIG_VERSION, "kind": kind, **get_kind(kind).new_config(preset, options)}
        return schema.load_config(plain(made), f"the {kind} sweep config", preset_class).model_dump(mode="json")

    def open(self, kind: str, preset=None, options: Mapping | None = None) -> dict:
        """The config of this directory: created from (preset, options) for a new sweep (refused in a
        directory that holds other files), else the stored one, refused (ValueError) when the preset or
        an option given differs from it. Call it holding the lock."""
        options = dict(options or {})
        if isinstance(preset, str):
            preset = get_preset(preset, kind)
        if self.exists():
            stored = self.read_config()
            if stored["kind"] != kind:
                raise ValueError(f"{self.path} holds a {stored['kind']} sweep, not a {kind} sweep; use a new directory")
            given = {key: v for key, v in options.items() if v is not None}
            if preset is not None or given:
                p = preset if preset is not None else self.preset()
                kept = {key: v for key, v in stored.items() if key not in ("schema_version", "kind", "preset")}
                want, have = without_notes(self.new_config(kind, p, {**kept, **given})), without_notes(stored)
                differ = [key for key in want if want[key] != have.get(key)]
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
        config = self.new_config(kind, preset if preset is not None else get_preset("tiny", kind), options)
        atomic.write_json(self.config_path, config)
        return config

    def context(self, progress: bool = False) -> Context:
        """What running this sweep's specs needs, from the stored config checked by the schema."""
        model = self.load()
        config = model.model_dump(mode="json")
        return Context(self, config, get_kind(config["kind"]), model.preset, progress)

    # ---------------------------------------------------------------------------------- plan and rows
    def write_plan(self, specs: list[RunSpec]) -> None:
        atomic.write_json(self.path / layout.PLAN, [s.as_dict() for s in specs])

    def read_plan(self) -> list[RunSpec]:
        path = self.path / layout.PLAN
        if not path.exists():
            raise FileNotFoundError(2, "the sweep has no plan yet (run the sweep command first)", str(path))
        plan = read_json(path, "a sweep plan")
        if not isinstance(plan, list):
            raise ValueError(f"{path} is not a sweep plan (a JSON list of run specs)")
        return [RunSpec.from_dict(d) for d in plan]

    def read_row(self, run: str) -> dict | None:
        """The row.json of a finished run (None if not finished); a row naming another run is refused."""
        path = self.run_dir(run) / layout.ROW
        if not path.exists():
            return None
        row = read_json(path, f"the row of run {run}")
        if not isinstance(row, dict) or row.get("run") != run:
            raise ValueError(f"{path} is not the row of run {run}")
        return row

    def rows(self) -> list[dict]:
        """The merged results (results.jsonl) as they stand."""
        rows = atomic.read_jsonl(self.results_path)
        if not all(isinstance(r, dict) for r in rows):
            raise ValueError(f"{self.results_path} holds a line that is not a JSON object")
        return rows

    def merge(self, specs: list[RunSpec] | None = None) -> list[dict]:
        """Rebuild results.jsonl from the row.json of every finished run of the plan, in plan order.

        Atomic and lock-free: the rows are the run directories' own records, so concurrent merges
        write the same content, and a crash mid-merge leaves the old file."""
        specs = self.read_plan() if specs is None else specs
        rows = [r for r in (self.read_row(s.run) for s in specs) if r is not None]
        atomic.write_jsonl(self.results_path, rows)
        return rows

    def recorded_only(self, specs: list[RunSpec]) -> list[str]:
        """Runs of the plan whose row is in results.jsonl while the sweep holds no directory for them
        (results committed without their runs): rebuilding results.jsonl would drop those rows."""
        names = {s.run for s in specs}
        return [
            r["run"]
            for r in self.rows()
            if r.get("run") in names and not (self.path / layout.RUNS / str(r["run"])).exists()
        ]

    def status(self, specs: list[RunSpec] | None = None) -> dict[str, str]:
        """run -> 'done' (row.json written, or the row recorded in results.jsonl for a run the sweep
        holds no directory of), 'running' (its lock held now), 'started' (a directory, no row:
        interrupted, or failed) or 'pending'."""
        specs = self.read_plan() if specs is None else specs
        recorded = set(self.recorded_only(specs))
        out = {}
        for s in specs:
            d = self.run_dir(s.run)
            if (d / layout.ROW).exists() or s.run in recorded:
                out[s.run] = "done"
            elif locks.is_held(d / layout.LOCK):
                out[s.run] = "running"
            else:
                out[s.run] = "started" if d.exists() else "pending"
        return out


def reuse_runs(sweep: SweepDir, ctx: Context, specs: list[RunSpec], source: SweepDir | Path | str) -> list[str]:
    """Take into `sweep` the finished runs of another sweep `source` that compute the same rows: the
    spec not started here, its row.json and spec.json in `source`, and the kind's `run_identity` of
    it equal under both sweeps' stored presets. Each taken run gets its spec, a reused.json naming
    `source`, then its row (written last: an interrupted take leaves a started run, which trains).
    Checkpoints and logs stay behind. Returns the runs taken, in plan order."""
    source = source if isinstance(source, SweepDir) else SweepDir(source)
    identity = ctx.kind.run_identity
    if identity is None:
        raise ValueError(f"runs of a {ctx.kind.name} sweep cannot be reused (the kind defines no run identity)")
    if source.path.resolve() == sweep.path.resolve():
        raise ValueError(f"{source.path} is the sweep itself; reuse takes runs from another sweep")
    theirs = source.context()  # their config through the schema: a broken or foreign one is refused
    if theirs.kind.name != ctx.kind.name:
        raise ValueError(
            f"{source.path} is a {theirs.kind.name} sweep; runs are reused only between {ctx.kind.name} sweeps"
        )
    taken = []
    for spec in specs:
        here = sweep.run_dir(spec.run)
        if here.exists():
            continue  # done or started here: never replaced
        row = source.read_row(spec.run)
        held = source.run_dir(spec.run) / layout.SPEC
        if row is None or not held.exists() or read_json(held, "a run spec") != spec.as_dict():
            continue
        if plain(identity(ctx.preset, spec.params)) != plain(identity(theirs.preset, spec.params)):
            continue
        here.mkdir(parents=True)
        atomic.write_json(here / layout.SPEC, spec.as_dict())
        atomic.write_json(here / layout.REUSED, {"from": str(source.path), "run": spec.run})
        atomic.write_json(here / layout.ROW, row)
        taken.append(spec.run)
    return taken


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
    with locks.hold(run_dir / layout.LOCK, f"run {spec.run} of {sweep.path}"):
        done = sweep.read_row(spec.run)
        if done is not None:
            return done
        held = run_dir / layout.SPEC
        if held.exists() and read_json(held, "a run spec") != spec.as_dict():
            raise ValueError(f"{run_dir} holds a different run spec; use another sweep directory")
        atomic.write_json(held, spec.as_dict())
        row = {"run": spec.run, **{k: v for k, v in ctx.kind.run(ctx, spec).items() if k != "run"}}
        atomic.write_json(run_dir / layout.ROW, row)
    return row


# An executor runs specs and yields each finished row, in any order (tmcheck.empirics.sweep.executors:
# serial, a local process pool; tmcheck.empirics.sweep.slurm: a SLURM array). Workers call `run_spec`.
Executor = Callable[[Context, list[RunSpec]], Iterable[dict]]
