"""Generators of the reliability and pretraining pages (docs/guide/reliability.md, pretraining.md):
the test counts behind each guarantee (collected by pytest from the test modules, never typed), the
preset tables (read from each sweep kind's record) and the resource limits (read from the modules
that enforce them). Nothing here holds a number of its own.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path

PAGES = ("docs/guide/reliability.md", "docs/guide/pretraining.md")
ROOT = Path(__file__).resolve().parents[2]

# the hostile cases docs/guide/reliability.md lists, each with its mutation, by subject: every test module of
# tests/fuzz but the generated fuzzers (test_fuzz_*) and the CLI's refusals (test_cli_refusals, its own row)
HOSTILE_CASES = sorted(
    f"tests/fuzz/{p.name}"
    for p in (ROOT / "tests" / "fuzz").glob("test_*.py")
    if not p.stem.startswith(("test_fuzz_", "test_cli_refusals"))
)
# guarantee -> the test modules that hold it (docs/guide/reliability.md lists what each one checks)
GUARANTEES = [
    ("One line and exit 2 for bad input, library errors included", ["tests/cli/test_cli_library_errors.py"]),
    (
        "Hostile files and options (links, locks, overwrite, shared configs, checkpoints, sizes)",
        [*HOSTILE_CASES, "tests/fuzz/test_cli_refusals.py"],
    ),
    (
        "Mutated arguments and files, generated (hypothesis)",
        ["tests/fuzz/test_fuzz_cli.py", "tests/fuzz/test_fuzz_files.py", "tests/fuzz/test_fuzz_subprocess.py"],
    ),
    ("Names read from files never lead outside a sweep", ["tests/empirics/test_sweep_hostile.py"]),
    ("One typed, versioned schema (configs, checkpoints, results)", ["tests/empirics/test_schema.py"]),
    (
        "Workers die with their submitter; a dead worker's cause",
        ["tests/empirics/test_sweep_orphans.py", "tests/empirics/test_sweep_executors.py"],
    ),
    (
        "SIGKILL at any point: resume equals an uninterrupted run",
        ["tests/empirics/test_checkpoint.py", "tests/empirics/test_sweep_resume.py"],
    ),
    ("No import circle, no private import across modules", ["tests/infra/test_imports.py"]),
]
ITEM = re.compile(r"^(tests/[^:]+\.py)::")


def collect(modules: list[str]) -> Counter:
    """Test items per module, as `pytest --collect-only` counts them (one per parameter set)."""
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", *modules],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=600,
    )
    counts = Counter(m.group(1) for line in out.stdout.splitlines() if (m := ITEM.match(line)))
    missing = [m for m in modules if not counts[m]]
    if out.returncode not in (0, 5) or missing:
        raise RuntimeError(f"pytest collected nothing from {missing or modules}: {out.stderr.strip()[-300:]}")
    return counts


def guarantee_table() -> str:
    counts = collect(sorted({m for _, mods in GUARANTEES for m in mods}))
    lines = ["| guarantee | test modules | test items |", "|---|---|---|"]
    for what, mods in GUARANTEES:
        names = ", ".join(f"`{m}` ({counts[m]})" for m in mods)
        lines.append(f"| {what} | {names} | {sum(counts[m] for m in mods)} |")
    total = sum(counts.values())
    lines.append(f"| **all of the above** | {len(counts)} modules | **{total}** |")
    return "\n".join(lines) + "\n"


def hostile_count() -> str:
    """A sentence with the number of hostile cases the page lists (the test items of HOSTILE_CASES), by module."""
    counts = collect(HOSTILE_CASES)
    names = ", ".join(f"`{m}` ({counts[m]})" for m in HOSTILE_CASES)
    return f"The hostile cases listed below are the {sum(counts.values())} test items of {names}.\n"


def limits_table() -> str:
    from tmcheck.empirics import schema
    from tmcheck.empirics.sweep.slurm import CONTROLLER_TIMEOUT_S
    from tmcheck.util import locks

    rows = [
        ("BPE vocabulary (`data stats --vocab`, presets' `vocab_size`)", f"258 to {schema.MAX_VOCAB:,}", "(fixed)"),
        (
            "a model built from a checkpoint or a GPT-2 directory (`export hf`, `train --init-from`)",
            f"{schema.MAX_PARAMS:,} parameters, estimated from its model_config; and equal to the weights the file "
            "holds",
            "`--max-params` (export hf)",
        ),
        ("layers, heads, width, context of a checkpoint's model_config", _shape_bounds(schema), "(fixed)"),
        ("the SLURM controller's answer to squeue", f"{CONTROLLER_TIMEOUT_S} s", "(fixed)"),
        ("a lock file", f"a regular file of one link and at most {locks.PID_WIDTH} bytes", "(fixed)"),
    ]
    lines = ["| input | limit, checked before any work | raise it with |", "|---|---|---|"]
    lines += [f"| {a} | {b} | {c} |" for a, b, c in rows]
    return "\n".join(lines) + "\n"


def _shape_bounds(schema) -> str:
    return (
        f"n_layer ≤ {schema.MAX_LAYERS:,}, n_head ≤ {schema.MAX_HEADS:,}, n_embd ≤ {schema.MAX_WIDTH:,}, "
        f"block_size ≤ {schema.MAX_CONTEXT:,}, every size ≥ 1, n_head dividing n_embd"
    )


def preset_table() -> str:
    from tmcheck.empirics.sweep.kinds import get_kind

    lines = ["| kind | preset | what it trains | notes |", "|---|---|---|---|"]
    for kind, named in ((k, get_kind(k).presets) for k in ("pretrain", "model", "synthetic")):
        for name, p in named.items():
            lines.append(f"| {kind} | `{name}` | {_what(kind, p)} | {' '.join(p.notes.split())} |")
    return "\n".join(lines) + "\n"


def _what(kind: str, p) -> str:
    if kind == "pretrain":
        m = p.model
        return (
            f"{', '.join(p.corpora)}; GPT {m.n_layer} × {m.n_embd} (context {m.block_size}); {p.n_sizes} sizes "
            f"from n = {p.n_min:,}; seeds {list(p.seeds)}; at most {p.train.max_steps:,} steps"
        )
    if kind == "model":
        return (
            f"{p.corpus}; widths {list(p.widths)} × depths {list(p.depths)}; data arm {list(p.data_ns)}; "
            f"at most {p.train.max_steps:,} steps"
        )
    return (
        f"d {list(p.dims)}, β {list(p.betas)}, n {list(p.ns)}, seeds {list(p.seeds)}; "
        f"{p.min_steps:,}-{p.max_steps:,} steps; model sweep d {list(p.model_dims) or 'none'}"
    )


GENERATORS: dict[str, Callable[[], str]] = {
    "robust.guarantees": guarantee_table,
    "robust.hostile_count": hostile_count,
    "robust.limits": limits_table,
    "robust.presets": preset_table,
}
