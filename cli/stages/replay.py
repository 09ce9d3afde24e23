"""What the demo's experiment stages share: find a committed experiment, train a sample of its runs
again and show each loss beside the committed one, or re-run the whole experiment from scratch and
set its fits beside the committed ones (tmcheck.empirics.report.reproduce; the paper's Section 3)."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

from rich.table import Table

from tmcheck.cli.common import console


def committed(results: Path | None, name: str):
    """The committed experiment `name` under the results folder, or None when there is none here."""
    from tmcheck.empirics.report.reproduce import experiments, find_results

    root = find_results(results)
    if root is None or not (root / name).is_dir():
        return None
    return next((e for e in experiments(root) if e.name == name), None)


def committed_stage(
    name: str, out: Path, quick: bool, full: bool, results: Path | None, tiny_sweep, full_run
) -> str | tuple[str, bool]:
    """A demo stage backed by the committed experiment `name`: without one, `tiny_sweep(out)`; with --full,
    `full_run(exp, out)`; else the demo's sample of it trained again, and whether it equals the committed rows."""
    exp = committed(results, name)
    if exp is None:
        return tiny_sweep(out)
    if full:
        return full_run(exp, out)
    res = replay_sample(exp, out, quick)
    return f"results/{name}: " + replay_words(res), res["equal"]


def replay_sample(exp, out: Path, quick: bool) -> dict:
    """Train the demo's sample of `exp` again under out/<name>-replay (made anew) and print the table."""
    from tmcheck.empirics.report.reproduce import REPLAY_RTOL, committed_rows, replay, sample

    runs = sample(exp)
    if quick:  # the one cheapest run
        rows = committed_rows(exp)
        runs = [min(runs, key=lambda r: rows[r].get("seconds", rows[r].get("wall_s", 0.0)))]
    work = Path(out) / f"{exp.name}-replay"
    if work.exists():
        shutil.rmtree(work)  # the demo's own scratch directory: a replay starts from nothing
    console.print(
        f"training again {len(runs)} committed run(s) of {exp.path} from scratch (same seeds, one thread) in {work}"
    )
    res = replay(exp, runs, work, log=lambda s: None)
    table = Table(title=f"{exp.name}: re-run against the committed rows ({res['loss']}, equal within {REPLAY_RTOL:g})")
    for c in ("run", "committed", "re-run", "difference", "steps", "equal"):
        table.add_column(c)
    for r in res["runs"]:
        table.add_row(
            r["run"],
            f"{r['committed']:.9g}",
            f"{r['replayed']:.9g}",
            f"{r['difference']:+.1e}",
            "same" if r["steps_equal"] else "differ",
            "yes" if r["equal"] else "NO",
        )
    console.print(table)
    return res


def replay_words(res: dict) -> str:
    n, k = len(res["runs"]), sum(r["equal"] for r in res["runs"])
    worst = max(abs(r["difference"]) / abs(r["committed"]) for r in res["runs"])
    return f"{k} of {n} re-run runs equal the committed rows (largest relative difference {worst:.1e})"


def run_full(exp, out: Path, sweep_kind: str, preset, log) -> tuple[Path, float]:
    """The whole experiment again, from scratch, in out/<name>-full with the committed preset."""
    from tmcheck.empirics.sweep import local, run_sweep

    sweep_dir = Path(out) / f"{exp.name}-full"
    t0 = time.perf_counter()
    run_sweep(sweep_dir, sweep_kind, preset, log=log, executor=local(None, log=log))
    return sweep_dir, time.perf_counter() - t0


def fits_side_by_side(committed_report: dict, new_report: dict, entries) -> None:
    """Print each curve's loglog α̂ of the committed report beside the re-run's."""
    table = Table(title="the re-run's fits beside the committed ones (loglog α̂, 95% interval)")
    for c in ("curve", "committed", "re-run"):
        table.add_column(c)
    for label, old, new in entries(committed_report, new_report):
        table.add_row(label, old, new)
    console.print(table)
