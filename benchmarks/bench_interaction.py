"""Interaction Lemma (Appendix G, Lemma 3): exact verification speed, its growth in l, and float64 range.

1. One head, l = 256, 100 random structured inputs (||H||∞ <= 2, the critical input first): build
   it with the exact minimal C, run the exact backend, compare with the claim by ==. Target < 10 s.
2. The same for l = 16 .. 512: seconds for the threshold and for verification, and the log-log slope.
3. float64 with the paper's sinusoidal vectors: the largest l at which the head holds to 1e-9,
   with the vectors' own minimal C and with the proof's C.

Results go to benchmarks/results/interaction.json.
"""

from __future__ import annotations

import json
import platform
import time
from pathlib import Path

import numpy as np

from tmcheck.theory.backends import run_blocks
from tmcheck.theory.lemmas.interaction import interaction, largest_float_l

RESULTS = Path(__file__).resolve().parent / "results" / "interaction.json"
Q = [[1, 0, 0, 0, 0], [0, 1, 0, 0, 1]]
K = [[0, 1, 0, 0, 0], [1, 0, 0, 0, 0]]
M = 2


def verify(l: int, n: int, seed: int = 0) -> dict:
    t0 = time.perf_counter()
    c = interaction(l, l // 3, (2 * l) // 3, 1, Q, K, M)
    t1 = time.perf_counter()
    H = c.sample_inputs(np.random.default_rng(seed), n)
    t2 = time.perf_counter()
    ok = bool((run_blocks(c.blocks, H, "exact") == c.expected(H)).all())
    t3 = time.perf_counter()
    return {
        "l": l,
        "inputs": n,
        "exact": ok,
        "C_min": float(c.constants["C_min"]),
        "C_paper": float(c.constants["C_paper"]),
        "threshold_s": t1 - t0,
        "verify_s": t3 - t2,
        "total_s": t3 - t0,
    }


def main() -> dict:
    head = verify(256, 100)
    print(
        f"l = 256, 100 inputs: exact = {head['exact']}, threshold {head['threshold_s']:.2f}s + verification "
        f"{head['verify_s']:.2f}s = {head['total_s']:.2f}s (target < 10 s)",
        flush=True,
    )
    growth = []
    for l in (16, 32, 64, 128, 256, 512):
        r = verify(l, 100 if l <= 256 else 25)
        r["verify_s_per_input"] = r["verify_s"] / r["inputs"]
        growth.append(r)
        print(
            f"l = {l:4d}: threshold {r['threshold_s']:.3f}s, {r['verify_s_per_input'] * 1e3:.2f} ms per input",
            flush=True,
        )
    ls = np.log([r["l"] for r in growth[2:]])
    slope_verify = float(np.polyfit(ls, np.log([r["verify_s_per_input"] for r in growth[2:]]), 1)[0])
    slope_threshold = float(np.polyfit(ls, np.log([r["threshold_s"] for r in growth[2:]]), 1)[0])
    print(f"log-log slopes (l >= 64): verification {slope_verify:.2f}, threshold {slope_threshold:.2f}", flush=True)
    floats = {which: largest_float_l(Q, K, M, which=which) for which in ("minimal", "paper")}
    for which, r in floats.items():
        print(
            f"float64, sinusoidal vectors, C = {which}: holds to 1e-9 up to l = {r['l']} (first failure at "
            f"{r['first_bad']})",
            flush=True,
        )
    out = {
        "machine": {"python": platform.python_version(), "processor": platform.processor() or platform.machine()},
        "kernels": {"Q_data": Q, "K_data": K, "M": M, "t1": "l // 3", "t2": "2l // 3", "row": 1},
        "l256_100_inputs": head,
        "growth": growth,
        "slopes": {"verify_per_input": slope_verify, "threshold": slope_threshold},
        "float64_largest_l": {
            k: {"l": v["l"], "first_bad": v["first_bad"], "errors": {str(a): b for a, b in v["errors"].items()}}
            for k, v in floats.items()
        },
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(out, indent=2) + "\n")
    print(f"wrote {RESULTS}")
    return out


if __name__ == "__main__":
    main()
