"""The equivalence rule's error rates at the committed studies' own designs: results/rule-size.json.

    python tools/rule_size.py [--reps 2000]   # write results/rule-size.json
    python tools/rule_size.py --check         # `make results`: recompute and compare with the committed file

For every converged fit of a committed report (the pretraining corpora and the synthetic studies' (d, β,
method) cells, each form), the design (sizes and seeds), the fitted law and the noise its seeds show are
simulated by tmcheck.empirics.fit.coverage.rule_error_rates: how often the rule says "equivalent" and
"differs" when the true difference sits exactly on the margin's edge (both must stay at or below the
nominal 5%), and how often it says "equivalent" when the prediction is exact (the power the design
has). At the default margin 0.05 and at the paper's 0.02. The docs' fitting guide renders the file.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "results" / "rule-size.json"
STUDIES = ("pretrain", "synth", "synth-decide", "synth-decide2", "synth-theory", "synth-theory-d4")


def cells(name: str) -> list[tuple[str, dict]]:
    """(label, converged fit entry) of every exponent a committed report fitted."""
    rep = json.loads((ROOT / "results" / name / "report.json").read_text())
    if rep["kind"] == "pretrain":
        fits = [(corpus, t["exponent"]) for corpus, t in rep["table"].items()]
    else:
        fits = [(f"{e['method']} d={e['d']} β={e['beta']:g}", e["exponent"]) for e in rep["data_scaling"]]
    out = []
    for label, exp in fits:
        for form, f in ((exp or {}).get("fits") or {}).items():
            if f["status"] == "converged" and f["noise"]["sigma_log"] > 0:
                out.append((f"{label} {form}", f))
    return out


def main(argv: list[str] | None = None) -> int:
    from tmcheck.empirics.fit.coverage import Design, rule_error_rates
    from tmcheck.empirics.fit.prediction import MARGIN, PAPER_MARGIN, SIZE
    from tmcheck.util import atomic

    parser = argparse.ArgumentParser(prog="tools/rule_size.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=2000)
    parser.add_argument("--check", action="store_true", help="compare with the committed file; exit 1 on a difference")
    args = parser.parse_args(argv)
    t0 = time.process_time()
    studies = {}
    for name in STUDIES:
        rows = []
        for label, f in cells(name):
            design = Design(tuple(f["design"]["sizes"]), tuple(f["design"]["seeds_per_size"]))
            law = {"form": f["form"], **f["params"]}
            row = {"cell": label, "noise": f["noise"]["sigma_log"]}
            for margin in (MARGIN, PAPER_MARGIN):
                row[f"{margin:g}"] = rule_error_rates(design, law, f["noise"]["sigma_log"], margin, args.reps)
            rows.append(row)
        studies[name] = rows
        print(f"{name}: {len(rows)} fits", file=sys.stderr)
    doc = {
        "nominal": SIZE,
        "margins": [MARGIN, PAPER_MARGIN],
        "reps": args.reps,
        "cpu_seconds": round(time.process_time() - t0, 1),
        "studies": studies,
    }
    if args.check:
        from tmcheck.util.jsondiff import number_differences

        committed = json.loads(OUT.read_text())
        diff = number_differences({**committed, "cpu_seconds": 0}, {**doc, "cpu_seconds": 0})
        for line in diff[:20]:
            print(f"rule-size: {line}", file=sys.stderr)
        print(f"{'ok  ' if not diff else 'FAIL'} rule-size: {len(diff)} differences from the committed file")
        return 1 if diff else 0
    atomic.write_json(OUT, doc)
    print(f"wrote {OUT.relative_to(ROOT)} ({doc['cpu_seconds']} CPU s)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
