"""Where two JSON documents differ: numbers to a tolerance, every other value exactly (a rebuilt report
against the committed one: tmcheck.empirics.report.reproduce; an ablation made again: .report.ablation)."""

from __future__ import annotations

import math

TOLERANCE = 1e-9  # numbers of a rebuilt report.json against the committed one (relative above 1)
IGNORED = ("sweep",)  # where the report was made: a path, not a result


def number_differences(committed, rebuilt, path: str = "", tol: float = TOLERANCE) -> list[str]:
    """Every place where two JSON documents differ: a number by more than tol (relative above 1), any
    other value at all, a key or an entry that only one of them has. Keys in IGNORED are skipped."""
    out: list[str] = []
    if isinstance(committed, dict) and isinstance(rebuilt, dict):
        for key in sorted(set(committed) | set(rebuilt), key=str):
            if key in IGNORED:
                continue
            where = f"{path}/{key}"
            if key not in rebuilt or key not in committed:
                out.append(f"{where}: only in the {'committed' if key in committed else 'rebuilt'} report")
            else:
                out += number_differences(committed[key], rebuilt[key], where, tol)
    elif isinstance(committed, list) and isinstance(rebuilt, list):
        if len(committed) != len(rebuilt):
            out.append(f"{path}: {len(committed)} entries committed, {len(rebuilt)} rebuilt")
        else:
            for i, (a, b) in enumerate(zip(committed, rebuilt, strict=True)):
                out += number_differences(a, b, f"{path}[{i}]", tol)
    elif _number(committed) and _number(rebuilt):
        a, b = float(committed), float(rebuilt)
        if not (a == b or (math.isnan(a) and math.isnan(b)) or abs(a - b) <= tol * max(1.0, abs(a))):
            out.append(f"{path}: committed {a!r}, rebuilt {b!r}")
    elif committed != rebuilt:
        out.append(f"{path}: committed {_short(committed)}, rebuilt {_short(rebuilt)}")
    return out


def _number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _short(v) -> str:
    s = repr(v)
    return s if len(s) <= 80 else s[:77] + "..."
