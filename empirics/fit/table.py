"""A scaling-law fit of a CSV table (paper Sec. 5, Figs. 2-3; Hoffmann et al. 2022): the library behind
`tmcheck fit`.

Reading is strict, because a CSV that parses in two ways gives two fits: a duplicate or blank column
name, a row with more or fewer fields than the header (an unquoted thousands separator, say), a field
over csv's limit (128 KiB) and a file over the row limit are refused with the row named. Python's csv module is
enough for that (pandas would add a dependency and guess types); the checks are ours.
"""

from __future__ import annotations

import csv
import os
from collections import Counter
from pathlib import Path

import numpy as np

from tmcheck.empirics.fit import columns as fit_columns
from tmcheck.empirics.fit.exponent import FitSettings, exponent_report
from tmcheck.empirics.fit.law import FORMS, choose_form, fit_law
from tmcheck.empirics.fit.prediction import MARGIN
from tmcheck.util import safeio

MAX_ROWS = 100_000  # the coverage simulation grows with the rows; a scaling table has hundreds


def count_rows(path: Path) -> int:
    """Data rows (lines after the header, blank ones not counted), read in 1 MB chunks."""
    lines = blank = 0
    last = b"\n"
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            lines += chunk.count(b"\n")
            blank += chunk.count(b"\n\n")
            last = chunk[-1:]
    lines += last != b"\n"
    return max(lines - blank - 1, 0)


def read_table(path: Path, max_rows: int = MAX_ROWS) -> tuple[dict[str, list[str]], list[str]]:
    """Every column of the CSV at `path` as a list of strings, and the header (ValueError on ambiguity)."""
    path = Path(path)
    if not path.exists():
        raise ValueError(f"{path}: no such file")
    safeio.check_regular(path, "a CSV table", limit=None)  # a FIFO, device or directory: one line, never a hang
    n_rows = count_rows(path)
    if n_rows > max_rows:
        raise ValueError(f"{path}: {n_rows:,} data rows; the limit is {max_rows:,} (raise it with --max-rows)")
    try:
        with open(path, newline="", encoding="utf-8-sig") as f:
            reader = csv.reader(f, strict=True)
            header = next(reader, None)
            if not header:
                raise ValueError(f"{path}: no header row")
            header = [h.strip() for h in header]
            blank = [i + 1 for i, h in enumerate(header) if not h]
            if blank:
                raise ValueError(f"{path}: column {blank[0]} of the header has no name")
            dupes = sorted(h for h, k in Counter(header).items() if k > 1)  # linear: a 10^6-column header is fine
            if dupes:
                raise ValueError(f"{path}: the header names {', '.join(map(repr, dupes))} more than once")
            rows = []
            for row in reader:
                if not row or all(not v.strip() for v in row):
                    continue
                if len(row) != len(header):
                    raise ValueError(
                        f"{path}: line {reader.line_num} has {len(row)} fields, the header {len(header)} "
                        "(an unquoted comma, such as a thousands separator?)"
                    )
                rows.append(row)
    except csv.Error as exc:
        raise ValueError(f"{path}: not a readable CSV ({exc})") from None
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    if not rows:
        raise ValueError(f"{path}: no data rows")
    return {h: [r[i] for r in rows] for i, h in enumerate(header)}, header


def _finite(values: np.ndarray, name: str) -> np.ndarray:
    bad = np.flatnonzero(~np.isfinite(values))
    if len(bad):
        raise ValueError(f"column {name!r} has {len(bad)} NaN or infinite value(s) (first at data row {bad[0] + 1})")
    return values


def _is_number(v) -> bool:
    try:
        float(v)
    except (TypeError, ValueError):
        return False
    return True


def prepare(
    path: Path,
    xs: list[str],
    y: str,
    group: str | None,
    derive: list[str],
    where: str | None,
    drop_top: int,
    max_rows: int = MAX_ROWS,
) -> dict:
    """Columns read, derived (in order), filtered and trimmed: {"x": {name: array}, "y", "group", "steps"}.
    Empty, non-numeric, NaN or infinite values in a column the fit uses are bad input (ValueError)."""
    raw, header = read_table(path, max_rows)
    cols = {}
    for h in header:
        try:
            cols[h] = np.array([float(v) for v in raw[h]])
        except (TypeError, ValueError):  # a text column: usable as --group only
            continue
    steps: list[str] = []

    def aliases(used):
        steps.extend(f"{n} := column {c!r}" for n, c in used.items() if n != c and f"{n} := column {c!r}" not in steps)

    for spec in derive:
        name, values, used = fit_columns.derive(spec, cols)
        aliases(used)
        cols[name] = values
        steps.append(f"derived {spec}")
    keep = np.ones(len(raw[header[0]]), bool)
    if where:
        keep, used = fit_columns.where(where, cols)
        aliases(used)
        steps.append(f"kept {int(keep.sum())} of {len(keep)} rows where {where}")
    if not keep.any():
        raise ValueError(f"no rows satisfy --where {where!r}")
    data = {}
    for n in xs + [y]:
        c = fit_columns.resolve(n, {**dict.fromkeys(header), **cols})
        if c not in cols:
            bad = next(i for i, v in enumerate(raw[c]) if not _is_number(v))
            raise ValueError(f"column {c!r} row {bad + 1}: {raw[c][bad]!r} is not a number")
        aliases({n: c})
        data[n] = _finite(cols[c][keep], c)
    labels = None
    if group is not None:
        if group not in raw:
            raise ValueError(f"{path}: no column {group!r}; columns are {', '.join(header)}")
        labels = np.array([str(v or "").strip() for v in raw[group]], dtype=object)[keep]
        blank = np.array([v == "" or v.lower() == "nan" for v in labels], dtype=bool)
        if blank.all():
            raise ValueError(f"group column {group!r} is empty or NaN in every row")
        if blank.any():
            raise ValueError(f"group column {group!r} is empty or NaN in {int(blank.sum())} row(s)")
    if drop_top:
        if drop_top >= len(data[y]):
            raise ValueError(f"--drop-top {drop_top} leaves no rows ({len(data[y])} rows)")
        drop = np.zeros(len(data[y]), bool)
        drop[np.argsort(data[y], kind="stable")[len(drop) - drop_top :]] = True
        data = {k: v[~drop] for k, v in data.items()}
        labels = None if labels is None else labels[~drop]
        steps.append(f"dropped the {drop_top} highest-{y} rows")
    return {"x": {n: data[n] for n in xs}, "y": data[y], "group": labels, "steps": steps}


def one_dimensional(n, y, form, prediction, margin, beta, s: FitSettings) -> dict:
    """The 1-D law fitted to (n, y): the estimate, its interval of measured coverage, the range
    sensitivity, the curvature test and, with a prediction, its test."""
    from tmcheck.theory.bounds import id_from_alpha_D

    rep = exponent_report(n, y, forms=(form,), prediction=prediction, margin=margin, settings=s)
    e = rep["fits"][form]
    a = e["alpha"]
    implied = id_from_alpha_D(a, beta) if 0 < a < 1 else float("nan")
    return {
        "n_points": len(y),
        "params": e["params"],
        "alpha": a,
        "interval": e["interval"],
        "status": e["status"],
        "flags": e["flags"],
        "implied_d": implied,
        "fit": e,
        "range": rep["range"],
        "curvature": rep["curvature"],
        "prediction": (rep["prediction"] or {}).get(form),
        "words": rep["words"],
    }


def prediction_spec(d: float | None, d_ci, kind: str, beta: float) -> dict | None:
    """The prediction test of `tmcheck fit --d` (None without d): alpha_D (kind 'D', eq. 3) or alpha_N
    (kind 'N', eq. 4) at a known d, or at an estimate d_hat with its interval d_ci = (lo, hi)."""
    if d is None:
        if d_ci is not None:
            raise ValueError("--d-ci needs --d (the estimate it surrounds)")
        return None
    if kind not in ("D", "N"):
        raise ValueError(f"--kind must be D (data exponent) or N (model exponent), got {kind!r}")
    if d_ci is None:
        return {"kind": kind, "beta": beta, "d": d}
    if len(d_ci) != 2 or not d_ci[0] <= d <= d_ci[1]:
        raise ValueError("--d-ci: give LO,HI around --d, e.g. 2.8,3.4")
    return {"kind": kind, "beta": beta, "d_hat": d, "d_ci": list(d_ci)}


def _check_request(xs: list[str], form: str, loss, huber_delta, level: float) -> None:
    if not (np.isfinite(level) and 0 < level < 1):
        raise ValueError(f"--level must lie in (0, 1), got {level}")
    if form not in FORMS:
        raise ValueError(f"unknown form {form!r}; choose from {', '.join(FORMS)}")
    if form == "joint" and len(xs) != 2:
        raise ValueError("--form joint needs two --x columns, e.g. --x N,D")
    if form != "joint" and len(xs) != 1:
        raise ValueError(f"--form {form} needs one --x column")
    if form != "joint" and (loss is not None or huber_delta is not None):
        raise ValueError(
            "--loss/--huber-delta apply to --form joint; the 1-D forms use the squared loss, "
            "for which their intervals' coverage is measured"
        )


def fit_table(
    path: Path,
    xs: list[str],
    y: str = "loss",
    form: str = "offset",
    *,
    group: str | None = None,
    derive: list[str] | None = None,
    where: str | None = None,
    drop_top: int = 0,
    loss: str | None = None,
    huber_delta: float | None = None,
    prediction: dict | None = None,
    margin: float = MARGIN,
    beta: float = 1.0,
    compare: bool = False,
    max_rows: int = MAX_ROWS,
    plot: Path | None = None,
    settings: FitSettings | None = None,
    **overrides,
) -> dict:
    """Everything `tmcheck fit` prints: {"file", "x", "y", "form", "preprocessing", and the joint law's
    fields, or the 1-D law's (or "groups": {label: those}), "model_choice" with compare}. With `plot`,
    the figure is written there. settings: a FitSettings (level, bootstrap, coverage_reps, seed, ...),
    its fields replaced by keyword overrides. ValueError on bad input."""
    s = FitSettings.of(settings, **overrides)
    _check_request(xs, form, loss, huber_delta, s.level)
    data = prepare(path, xs, y, group, derive or [], where, drop_top, max_rows)
    payload = {"file": os.fspath(path), "x": xs, "y": y, "form": form, "preprocessing": data["steps"]}
    if form == "joint":
        payload.update(_fit_joint(data, xs, y, beta, loss, huber_delta, plot, s))
    else:
        payload.update(_fit_1d(data, xs, y, form, prediction, margin, beta, compare, plot, s))
    return payload


def _fit_joint(data: dict, xs, y, beta, loss, huber_delta, plot, s: FitSettings) -> dict:
    """The joint law's fields of `fit_table`'s payload (grouped by configuration), with its figure."""
    Y = data["y"]
    X = np.stack([data["x"][c] for c in xs], axis=1)
    groups = np.unique(X, axis=0, return_inverse=True)[1].ravel()
    result = fit_law(
        X,
        Y,
        form="joint",
        groups=groups,
        bootstrap=s.bootstrap,
        seed=s.seed,
        ci_level=s.level,
        beta=beta,
        loss=loss,
        huber_delta=huber_delta,
    )
    payload = result.as_dict()
    payload["ci_method"] = "percentile bootstrap over configurations (coverage not measured for the joint law)"
    if plot is not None:
        from tmcheck.empirics.fit.plot import plot_joint

        plot_joint(result, X, Y, plot, s.level, labels=tuple(xs), ylabel=fit_columns.axis_label(y))
    return payload


def _fit_1d(data: dict, xs, y, form, prediction, margin, beta, compare, plot, s: FitSettings) -> dict:
    """The 1-D law's fields of `fit_table`'s payload (or "groups": {label: those}), with its figure."""
    Y = data["y"]
    payload = {}
    n = data["x"][xs[0]]
    labels = data["group"]
    names = [None] if labels is None else list(dict.fromkeys(labels))
    rows = {g: np.ones(len(Y), bool) if g is None else labels == g for g in names}
    results = {g: one_dimensional(n[sel], Y[sel], form, prediction, margin, beta, s) for g, sel in rows.items()}
    if labels is None:
        payload.update(results[None])
    else:
        payload["groups"] = results
    if compare:
        payload["model_choice"] = {str(g): choose_form(n[sel], Y[sel]) for g, sel in rows.items()}
    if plot is not None:
        from tmcheck.empirics.fit.plot import plot_1d

        curves = [
            {"label": "all runs" if g is None else str(g), "n": n[sel], "y": Y[sel], "entry": results[g]["fit"]}
            for g, sel in rows.items()
        ]
        plot_1d(
            curves,
            plot,
            form,
            s.level,
            xlabel=fit_columns.axis_label(xs[0]),
            ylabel=fit_columns.axis_label(y),
            bootstrap=s.bootstrap,
            seed=s.seed,
        )
    return payload


def fits_of(payload: dict) -> dict:
    """{group label or None: 1-D result} of a 1-D payload (empty for the joint law)."""
    if payload["form"] == "joint":
        return {}
    return payload["groups"] if "groups" in payload else {None: payload}


def outcomes(payload: dict) -> list[str]:
    """The prediction tests' outcomes (equivalent, differs, undecided) of a payload, one per group (empty
    without a prediction)."""
    return [r["prediction"]["outcome"] for r in fits_of(payload).values() if r.get("prediction")]
