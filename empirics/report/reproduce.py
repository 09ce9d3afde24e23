"""The committed experiments, reproduced (the paper's Section 3, Figures 2-4, and the synthetic study of
eq. 3-4).

`results/<name>/` holds one experiment: a complete sweep directory (config.json, plan.json,
runs/<run>/spec.json and row.json with whatever else its report reads, results.jsonl, id.json) with
the report `tmcheck report` made of it (report.md, report.json, fig_*.png), or an ID-ablation directory
(ablate.json, fig_ablate.png). Two checks hold a committed experiment to its files:

- `rebuild`: each run's own record (runs/<run>/row.json, the source of truth) equal to its line of
  results.jsonl field by field, both ways (`row_differences`); then the report made again from the
  committed inputs, in a scratch copy: every number of report.json equal to the committed one to
  1e-9, every figure equal pixel for pixel;
- `replay`: chosen runs trained again from scratch, in a new sweep directory with the committed config
  (whose plan must be the committed plan.json), with the same seeds and one thread; their losses must
  equal the committed rows' to a relative 1e-6 (the float32 rounding of an evaluation sum; the step at
  which each run stopped must be the same).
"""

from __future__ import annotations

import json
import math
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from tmcheck.empirics.sweep import layout
from tmcheck.util import safeio
from tmcheck.util.jsondiff import IGNORED, TOLERANCE, number_differences  # noqa: F401  (re-exported)

REPLAY_RTOL = 1e-6  # a re-run's loss against the committed row's
LOSS = {"pretrain": "test_loss", "model": "test_loss", "synthetic": "test_mse", "controls": "test_mse"}
ABLATION = "ablate.json"
ABLATION_FIGURE = "fig_ablate.png"
ENV = "TMCHECK_RESULTS"


@dataclass(frozen=True)
class Experiment:
    """A committed experiment: its directory, name (relative to the results folder) and kind (a sweep
    kind, or "ablate" for an ID-ablation directory)."""

    name: str
    path: Path
    kind: str


def find_results(explicit: Path | None = None) -> Path | None:
    """The committed results folder: `explicit`, else $TMCHECK_RESULTS, else the checkout's results/
    (beside the package's source tree), else ./results; None when there is none."""
    if explicit is not None:
        return Path(explicit)
    if os.environ.get(ENV):
        return Path(os.environ[ENV])
    here = Path(__file__).resolve().parents[2] / "results"
    for cand in (here, Path.cwd() / "results"):
        if cand.is_dir():
            return cand
    return None


def experiments(root: Path) -> list[Experiment]:
    """Every experiment under `root`: directories with a config.json (sweeps) or an ablate.json."""
    root = Path(root)
    if not root.is_dir():
        raise FileNotFoundError(2, "no results folder", str(root))
    out = []
    for cfg in sorted(root.rglob(layout.CONFIG)):
        d = cfg.parent
        config = safeio.read_json(cfg, "a sweep config")
        kind = config.get("kind", "pretrain") if isinstance(config, dict) else None
        if not isinstance(kind, str):
            raise ValueError(f"{cfg} is not a sweep config (a JSON object with a kind)")
        out.append(Experiment(d.relative_to(root).as_posix(), d, kind))
    for ab in sorted(root.rglob(ABLATION)):
        out.append(Experiment(ab.parent.relative_to(root).as_posix(), ab.parent, "ablate"))
    return sorted(out, key=lambda e: e.name)


# ------------------------------------------------------------------------------------ comparison
PIXEL_TOLERANCE = 2 / 255  # per channel: the anti-aliasing of a coordinate that differs in its last bits


def figure_difference(committed: Path, rebuilt: Path) -> str | None:
    """None when the two PNG files show the same pixels, else a sentence saying how they differ.

    Two pixels are the same when no channel differs by more than PIXEL_TOLERANCE (2 of 255 levels).
    The plotted coordinates come from float computations (least squares, bootstrap bands) whose last
    bits depend on the CPU's BLAS kernels: the same commit on an AMD and on an Intel machine draws the
    pretraining figure with 85 of 912,384 pixels one level apart (at most 1/255, at anti-aliased
    edges), while a moved point, line or label changes pixels by far more than 2 levels.
    """
    import matplotlib.image as mpimg
    import numpy as np

    if not rebuilt.is_file():
        return "not drawn by the rebuild"
    if not committed.is_file():
        return "drawn by the rebuild but not committed"
    if committed.read_bytes() == rebuilt.read_bytes():
        return None
    try:
        a, b = mpimg.imread(committed), mpimg.imread(rebuilt)
    except (OSError, SyntaxError, ValueError) as exc:  # PIL raises SyntaxError for a file that is not a PNG
        return f"cannot be read as an image ({exc})"
    if a.shape != b.shape:
        return f"size {a.shape[1]}x{a.shape[0]} committed, {b.shape[1]}x{b.shape[0]} rebuilt"
    far = np.abs(a.astype(np.float64) - b.astype(np.float64)) > PIXEL_TOLERANCE + 1e-6
    n = int(np.any(far, axis=-1).sum()) if a.ndim == 3 else int(far.sum())
    return f"{n} of {a.shape[0] * a.shape[1]} pixels differ" if n else None


# ------------------------------------------------------------------------------------ rebuild
def outputs(exp: Experiment) -> list[str]:
    """The files the report writes (the committed report.json lists them), never read as inputs."""
    if exp.kind == "ablate":
        return [ABLATION_FIGURE]
    rep = exp.path / layout.REPORT_JSON
    doc = safeio.read_json_optional(rep, "a report", {})
    files = doc.get("files") if isinstance(doc, dict) else None
    if not isinstance(files, list) or not all(isinstance(f, str) and "/" not in f for f in files):
        files = None
    return list(files or [layout.REPORT_MD, layout.REPORT_JSON])


def _copy_inputs(exp: Experiment, dest: Path) -> None:
    out, top = set(outputs(exp)), exp.path.resolve()
    shutil.copytree(exp.path, dest, ignore=lambda d, names: [n for n in names if Path(d).resolve() == top and n in out])


def rebuild(exp: Experiment, work: Path, bootstrap: int = 1000) -> dict:
    """The experiment's report made again in `work` from its committed inputs, compared with the committed one.

    Returns {"name", "kind", "differences": [...], "figures": {name: None or how it differs},
    "equal": bool, "report": the rebuilt report (None for an ablation)}."""
    from tmcheck.empirics.report.common import LAYOUT_PROBLEMS

    dest = Path(work) / exp.name
    if dest.exists():
        shutil.rmtree(dest)
    _copy_inputs(exp, dest)
    report = None
    LAYOUT_PROBLEMS.clear()
    if exp.kind == "ablate":
        from tmcheck.empirics.report.ablation import figure

        figure(safeio.read_json(dest / ABLATION, "an ablation record"), dest / ABLATION_FIGURE)
        differences: list[str] = []
    else:
        from tmcheck.empirics.report import build_report

        differences = row_differences(exp)
        report = build_report(dest, bootstrap)
        committed = safeio.read_json(exp.path / layout.REPORT_JSON, "a report")
        differences += number_differences(committed, safeio.read_json(dest / layout.REPORT_JSON, "a report"))
        md_a, md_b = (p / layout.REPORT_MD for p in (exp.path, dest))
        if md_a.is_file() and md_a.read_text() != md_b.read_text():
            differences.append(f"{layout.REPORT_MD}: the rebuilt text differs from the committed one")
    differences += [f"a legend covers data: {p}" for p in LAYOUT_PROBLEMS]
    figures = {f: figure_difference(exp.path / f, dest / f) for f in outputs(exp) if f.endswith(".png")}
    return {
        "name": exp.name,
        "kind": exp.kind,
        "differences": differences,
        "figures": figures,
        "equal": not differences and not any(figures.values()),
        "report": report,
    }


def row_differences(exp: Experiment) -> list[str]:
    """Each run's row.json against its line of results.jsonl, field by field, both ways: a row.json with
    no line, a line whose run directory holds no row.json, a run listed twice, and every field whose
    values differ (compared as JSON, exactly: both files are written from the same row). A line whose
    run has no directory at all is a result committed without its run (`SweepDir.recorded_only`)."""
    from tmcheck.empirics.sweep import SweepDir

    sweep, out = SweepDir(exp.path), []
    lines: dict[str, dict] = {}
    for r in _rows(exp.path):
        run = r.get("run")
        if not isinstance(run, str):
            out.append(f"{layout.RESULTS}: a line without a run name")
        elif run in lines:
            out.append(f"{layout.RESULTS}: run {run} listed twice")
        lines[run] = r
    runs_dir = exp.path / layout.RUNS
    own = sorted(p.name for p in runs_dir.iterdir()) if runs_dir.is_dir() else []
    for run in own:
        row = sweep.read_row(run)
        if row is None:
            if run in lines:
                out.append(f"{layout.RUNS}/{run}: in {layout.RESULTS}, but the run holds no {layout.ROW}")
            continue
        if run not in lines:
            out.append(f"{layout.RUNS}/{run}/{layout.ROW}: not in {layout.RESULTS}")
            continue
        line = lines[run]
        for key in sorted(set(row) | set(line)):
            a, b = row.get(key, "(absent)"), line.get(key, "(absent)")
            if json.dumps(a, sort_keys=True) != json.dumps(b, sort_keys=True):
                out.append(f"{layout.RUNS}/{run}/{layout.ROW}: {key} is {a!r}, {layout.RESULTS} says {b!r}")
    return out


# ------------------------------------------------------------------------------------ replay
def committed_rows(exp: Experiment) -> dict[str, dict]:
    return {r["run"]: r for r in _rows(exp.path)}


def _rows(path: Path) -> list[dict]:
    from tmcheck.util import atomic

    return atomic.read_jsonl(path / layout.RESULTS)


def sample(exp: Experiment) -> list[str]:
    """The runs a short replay re-trains: the cheapest committed run (by its recorded seconds) of each
    corpus (pretraining) or each method (synthetic: transformer, kNN, kernel ridge)."""
    group = {"pretrain": "corpus", "synthetic": "method", "model": "n_embd", "controls": "method"}[exp.kind]
    best: dict = {}
    for r in _rows(exp.path):
        key = r.get(group)
        cost = r.get("seconds", r.get("wall_s", math.inf))
        if key not in best or cost < best[key][0]:
            best[key] = (cost, r["run"])
    return [run for _, run in best.values()]


def replay(exp: Experiment, runs: list[str], work: Path, log=lambda s: None, progress: bool = False) -> dict:
    """Train `runs` of the experiment again in the new sweep directory `work`, with its committed config.

    The kind's plan for that config must be the committed plan.json (same runs, same parameters, same
    order); each run's loss must equal the committed row's to REPLAY_RTOL and its step count exactly.
    Returns {"name", "kind", "runs": [{"run", "committed", "replayed", "difference", "equal"}], "equal",
    "seconds"}."""
    from tmcheck.empirics.sweep import SweepDir, run_spec

    if exp.kind not in LOSS:
        raise ValueError(f"{exp.name} is not a sweep; nothing to re-run")
    work = Path(work)
    if work.exists() and any(work.iterdir()):
        raise ValueError(f"{work} is not empty; a replay needs a new directory")
    work.mkdir(parents=True, exist_ok=True)
    shutil.copy(exp.path / layout.CONFIG, work / layout.CONFIG)
    sweep, committed = SweepDir(work), SweepDir(exp.path)
    ctx = sweep.context(progress)
    specs = ctx.kind.plan(ctx, log)
    if [s.as_dict() for s in specs] != [s.as_dict() for s in committed.read_plan()]:
        raise ValueError(f"the committed config of {exp.name} now plans other runs than its plan.json")
    sweep.write_plan(specs)
    rows, by_run = committed_rows(exp), {s.run: s for s in specs}
    unknown = [r for r in runs if r not in by_run or r not in rows]
    if unknown:
        raise ValueError(f"{exp.name} has no committed run {unknown[0]!r}")
    loss, out, seconds = LOSS[exp.kind], [], 0.0
    for run in runs:
        row = run_spec(sweep, by_run[run], ctx)
        want, got = float(rows[run][loss]), float(row[loss])
        same_steps = rows[run].get("steps") == row.get("steps")
        equal = abs(got - want) <= REPLAY_RTOL * abs(want) and same_steps
        seconds += float(row.get("seconds", row.get("wall_s", 0.0)))
        out.append(
            {
                "run": run,
                "committed": want,
                "replayed": got,
                "difference": got - want,
                "steps_equal": same_steps,
                "equal": equal,
            }
        )
        word = "equal" if equal else "DIFFERS"
        log(f"  {run}: {loss} {got:.9g} (committed {want:.9g}, difference {got - want:+.1e}): {word}")
    sweep.merge(specs)
    return {
        "name": exp.name,
        "kind": exp.kind,
        "loss": loss,
        "runs": out,
        "equal": all(r["equal"] for r in out),
        "seconds": seconds,
    }
