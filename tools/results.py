"""The committed experiments under results/: checked, and made complete.

    python tools/results.py check [NAME ...]   # `make results`: every committed report and figure rebuilt
                                               # from the committed inputs in a temporary copy, compared
    python tools/results.py complete DIR       # plan.json and runs/<run>/{spec,row}.json from config + rows

`check` rebuilds each experiment (tmcheck.empirics.report.reproduce.rebuild: each runs/<run>/row.json equal
to its line of results.jsonl field by field, every number of report.json equal to the committed one to
1e-9, every figure equal pixel for pixel; an ID ablation that keeps its models beside it, in models/, is
run again from them and every number of ablate.json compared to 1e-4, tmcheck.empirics.report.ablation.rerun,
one without is only drawn again) and asks `tmcheck sweep status`
of each sweep that all its runs are done (a sweep that holds an IN_PROGRESS file may have runs left: they
are said, not failed); it exits 1 on any difference. `complete` derives what a sweep
made before plan.json and row.json existed lacks, from its config and rows alone (no training): the
specs are the rows' own parameters, checked against the kind's run-name rule and, where the kind can
plan without data (synthetic), against its plan.
Bad input is one line on stderr and exit 2.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "results"

# The parameters of each kind's run specs, as its rows carry them (tmcheck.empirics.sweep.<kind>.plan).
SPEC_KEYS = {
    "pretrain": ("corpus", "tag", "n", "seed"),
    "synthetic": ("sweep", "method", "d", "beta", "n", "seed"),
}


def derive_specs(sweep) -> list:
    """The run specs of a sweep, in results.jsonl order, from its config and rows."""
    from tmcheck.empirics.sweep import RunSpec, get_kind
    from tmcheck.empirics.sweep.pretrain import corpus_tag

    config = sweep.read_config()
    kind = get_kind(config["kind"])
    if kind.name not in SPEC_KEYS:
        raise ValueError(f"{sweep.path}: cannot derive the specs of a {kind.name} sweep from its rows")
    specs = []
    for row in sweep.rows():
        full = {**row, "tag": corpus_tag(row["corpus"])} if kind.name == "pretrain" else dict(row)
        params = {k: full[k] for k in SPEC_KEYS[kind.name] if k in full}
        if kind.name == "synthetic" and row.get("sweep") == "model":
            params["width"] = row["width"]
            if "blocks" in row:
                params["blocks"] = row["blocks"]
        spec = RunSpec(kind.name, kind.run_name(params), params)
        if spec.run != row["run"]:
            raise ValueError(f"{sweep.path}: row {row['run']!r} gives the run name {spec.run!r}")
        specs.append(spec)
    if kind.name == "synthetic":
        from tmcheck.empirics.sweep.synthetic import plan_specs

        planned = [s.as_dict() for s in plan_specs(sweep.preset())]
        if planned != [s.as_dict() for s in specs]:
            raise ValueError(f"{sweep.path}: the rows are not the plan of the committed preset")
    return specs


def complete(path: Path) -> list[str]:
    """Write what the sweep lacks: plan.json, and each run's spec.json and row.json (the committed row)."""
    from tmcheck.empirics.sweep import SweepDir, layout
    from tmcheck.util import atomic

    sweep = SweepDir(path)
    wrote = []
    if not (sweep.path / layout.PLAN).exists():
        sweep.write_plan(derive_specs(sweep))
        wrote.append(layout.PLAN)
    rows = {r["run"]: r for r in sweep.rows()}
    for spec in sweep.read_plan():
        d = sweep.run_dir(spec.run)
        if spec.run not in rows:
            continue
        if not (d / layout.SPEC).exists():
            atomic.write_json(d / layout.SPEC, spec.as_dict())
            wrote.append(f"{layout.RUNS}/{spec.run}/{layout.SPEC}")
        if not (d / layout.ROW).exists():
            atomic.write_json(d / layout.ROW, rows[spec.run])
            wrote.append(f"{layout.RUNS}/{spec.run}/{layout.ROW}")
    if sweep.merge() != list(rows.values()):
        raise ValueError(f"{path}: results.jsonl rebuilt from the runs differs from the committed one")
    return wrote


# A committed sweep that runs across sittings holds this file (its first line: how to resume it). Its report
# is rebuilt and compared like any other; its unfinished runs are then said, not failed. A marker left
# behind once every run is done fails.
IN_PROGRESS = "IN_PROGRESS"


def status_line(exp) -> tuple[bool, str]:
    from tmcheck.empirics.sweep.status import sweep_status
    from tmcheck.util import safeio

    try:
        counts = sweep_status(exp.path)["counts"]
    except (ValueError, OSError) as exc:
        return False, f"sweep status refuses it: {exc}"
    total = sum(counts.values())
    done = counts["done"] == total and total > 0
    line = f"sweep status: {counts['done']} of {total} runs done"
    marker = exp.path / IN_PROGRESS
    if not marker.exists():
        return done, line
    if done:
        return False, f"{line}, and {IN_PROGRESS} is still there: remove it"
    resume = safeio.read_text(marker, "an in-progress note").strip().splitlines()
    return True, f"{line}, in progress (resume: {resume[0] if resume else 'see ' + IN_PROGRESS})"


def ablation_rerun(exp) -> tuple[list[str], str]:
    """An ID ablation run again from the models it keeps (models/), compared with its ablate.json to
    RERUN_RTOL: the differences and a line saying what was checked."""
    from tmcheck.empirics.report import ablation as ab
    from tmcheck.util import safeio

    rebuilt = ab.rerun(exp.path)
    if rebuilt is None:
        return [], "no models kept beside it: its figure drawn again only"
    committed = safeio.read_json(exp.path / "ablate.json", "an ablation record")
    differences = ab.differences(committed, rebuilt)
    n = len(rebuilt["models"])
    if differences:
        return differences, f"{len(differences)} numbers of ablate.json differ when run again from the kept models"
    return [], f"ablate.json numbers equal to {ab.RERUN_RTOL:g} when run again from the {n} kept models"


def check(names: list[str], root: Path = RESULTS, log=print) -> int:
    from tmcheck.empirics.report.reproduce import experiments, rebuild

    exps = experiments(root)
    if names:
        unknown = sorted(set(names) - {e.name for e in exps})
        if unknown:
            raise ValueError(f"no committed experiment {unknown[0]!r}; experiments: {', '.join(e.name for e in exps)}")
        exps = [e for e in exps if e.name in names]
    failed = 0
    with tempfile.TemporaryDirectory(prefix="tmcheck-results-") as work:
        for exp in exps:
            t0 = time.perf_counter()
            res = rebuild(exp, Path(work))
            ok, parts = res["equal"], []
            n_fig = len(res["figures"])
            bad_fig = {f: why for f, why in res["figures"].items() if why}
            if exp.kind != "ablate":
                parts.append(
                    "row.json equal to results.jsonl, report.json numbers equal to 1e-9"
                    if not res["differences"]
                    else f"{len(res['differences'])} differences in row.json/results.jsonl/report.json/report.md"
                )
            parts.append(f"{n_fig - len(bad_fig)} of {n_fig} figures identical")
            if exp.kind != "ablate":
                s_ok, s_line = status_line(exp)
                ok = ok and s_ok
                parts.append(s_line)
            else:
                differences, line = ablation_rerun(exp)
                ok = ok and not differences
                res["differences"] += differences
                parts.append(line)
            mark = "ok  " if ok else "FAIL"
            log(f"{mark} {exp.name} ({exp.kind}): {'; '.join(parts)} ({time.perf_counter() - t0:.1f} s)")
            for d in res["differences"][:10]:
                log(f"       {d}")
            for f, why in bad_fig.items():
                log(f"       {f}: {why}")
            failed += not ok
    log(f"{len(exps) - failed} of {len(exps)} committed experiments reproduced")
    return 1 if failed else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tools/results.py", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("check", help="rebuild every committed report and figure in a temporary copy and compare")
    c.add_argument("names", nargs="*", help="experiments to check (default: all)")
    c.add_argument("--root", type=Path, default=RESULTS, help="the results folder (default: results/)")
    m = sub.add_parser("complete", help="derive plan.json and the runs' spec.json/row.json from config + rows")
    m.add_argument("path", type=Path)
    args = parser.parse_args(argv)
    try:
        if args.cmd == "check":
            return check(args.names, args.root)
        wrote = complete(args.path)
        print(json.dumps({"wrote": len(wrote), "files": wrote[:5] + (["..."] if len(wrote) > 5 else [])}))
        return 0
    except (ValueError, OSError, KeyError) as exc:
        print(f"tools/results.py: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
