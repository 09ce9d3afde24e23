"""Shared by the page generators (no generators here): paths, markdown cells and tables, JSON reading,
number formatting, the quiet rule of a benchmark figure, and the recorded timings and GPU check."""

from __future__ import annotations

import json
import math
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

RESULTS = ROOT / "results"

BENCH = ROOT / "benchmarks" / "results"

DOCS = ROOT / "docs"


def cell(text: object) -> str:
    """Text for a markdown table cell: one line, pipes escaped."""
    return " ".join(str(text).split()).replace("|", "\\|")


def read(path: Path) -> dict | list | None:
    return json.loads(path.read_text()) if path.is_file() else None


def table(header: list[str], rows: list[list]) -> str:
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(cell(c) for c in r) + " |" for r in rows]
    return "\n".join(out)


def fmt(v) -> str:
    if isinstance(v, bool) or v is None:
        return str(v)
    if isinstance(v, float):
        return f"{v:.4g}" if math.isfinite(v) else str(v)
    if isinstance(v, int):
        return f"{v:,}"
    return str(v)


def flatten(obj, prefix: str = "") -> list[tuple[str, object]]:
    """(path, value) of the scalar leaves of a benchmark document, lists of up to 12 records as rows."""
    out: list[tuple[str, object]] = []
    if isinstance(obj, dict):
        for k, v in obj.items():
            if k in ("quiet", "machine"):
                continue
            out += flatten(v, f"{prefix} › {k}" if prefix else str(k))
    elif isinstance(obj, list):
        if all(not isinstance(v, (dict, list)) for v in obj) and len(obj) <= 8:
            out.append((prefix, ", ".join(fmt(v) for v in obj)))
        elif len(obj) <= 12:
            for i, v in enumerate(obj):
                out += flatten(v, f"{prefix}[{i}]")
        else:
            out.append((prefix, f"{len(obj)} entries"))
    else:
        out.append((prefix, obj))
    return out


def get(doc, *keys):
    for k in keys:
        if not isinstance(doc, dict) or k not in doc:
            return None
        doc = doc[k]
    return doc


QUIET_SHARE = 0.10  # ../shared/tools/quiet: other processes above this share of the machine -> DISTURBED


def quiet_ok(q) -> bool:
    """A recorded quiet verdict that allows quoting a figure: "quiet", not DISTURBED, other processes'
    share and (where recorded) the host's steal share <= 10%."""
    if not isinstance(q, dict):
        return False
    v = str(q.get("verdict", ""))
    share, steal = q.get("other_cpu_share"), q.get("host_steal_share")
    return (
        v.lower().startswith("quiet")
        and "disturbed" not in v.lower()
        and (share is None or share <= QUIET_SHARE)
        and (steal is None or steal <= QUIET_SHARE)
    )


def timing(name: str) -> dict | None:
    doc = read(RESULTS / "timings.json") or {}
    return doc.get(name)


def timing_words(name: str, what: str) -> str:
    t = timing(name)
    if t is None:
        return f"{what}: not measured yet."
    q = t.get("quiet", {})
    where = f"{t['cores']} cores, other processes {q.get('other_cpu_share', float('nan')):.0%} of the machine"
    when = f"{q.get('date', '?')[:10]}, commit {t.get('commit') or '?'}"
    if not quiet_ok(q):
        return f"{what}: last timed while the machine was busy ({where}; {when}); not quoted."
    return f"{what}: {t['seconds'] / 60:.1f} minutes, exit {t['exit']} ({where}; {when})."


def full_demo_estimate() -> str:
    """What `tmcheck demo --full` re-runs: the committed experiments' training time, from their rows."""
    total, parts = 0.0, []
    for name in ("pretrain", "synth", "model"):
        path = RESULTS / name / "results.jsonl"
        if not path.is_file():
            continue
        rows = [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
        secs = sum(float(r.get("wall_s", r.get("seconds", 0.0))) for r in rows)
        total += secs
        parts.append(f"{name} {secs / 60:.0f} min")
    return f"{total / 60:.0f} minutes of training in the committed rows ({', '.join(parts)}), one run at a time"


def timings() -> str:
    test = read(RESULTS / "test-run.json")
    if test is None:
        tline = "`make test`: no test run recorded yet."
    else:
        tline = (
            f"`make test`: {test['passed']:,} passed, {test['failed']} failed, {test['skipped']} skipped, "
            f"{test['errors']} errors in {test['seconds'] / 60:.1f} minutes of suite time "
            f"({test['cores']} cores, load {test['load_average'][0]:.1f} at the end; "
            f"commit {test.get('commit') or '?'})."
        )
    lines = [
        f"- {tline}",
        f"- {timing_words('demo', '`make demo`')}",
        f"- {timing_words('demo-full', '`tmcheck demo --full`')} It re-runs {full_demo_estimate()}.",
    ]
    return "\n".join(lines)


def gpu_doc() -> dict | None:
    """benchmarks/results/gpu.json when it holds a real CUDA run (a smoke run's file is never quoted)."""
    doc = read(BENCH / "gpu.json")
    return doc if isinstance(doc, dict) and doc.get("mode") == "cuda" else None


def gpu_checks_words(doc: dict) -> str:
    st = get(doc, "stages", "parity")
    checks = get(st, "result", "checks") or {}
    if not checks:
        return "the parity stage did not run" if st is None else f"the parity stage ended {st.get('status')}"
    passed = sum(bool(c.get("passed")) for c in checks.values())
    failed = [n for n, c in checks.items() if not c.get("passed")]
    return f"{passed} of {len(checks)} parity checks pass" + (f" (failed: {', '.join(failed)})" if failed else "")


def load_bench(name: str) -> dict:
    """benchmarks/results/<name>.json, or {} when it is not there."""
    return read(BENCH / f"{name}.json") or {}
