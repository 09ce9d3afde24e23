"""dadapy 0.3.4 (numpy < 2, so in its own venv) on saved points, through a subprocess: the anchor
of tests/empirics/id/test_parity.py and test_minilm.py.

Its interpreter: $TMCHECK_DADAPY_PYTHON, else benchmarks/.venv-anchors/bin/python (made by
benchmarks/bench_id.py); callers are skipped with the reason when neither imports dadapy.
"""

import json
import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

DADAPY_SCRIPT = """
import json, sys, warnings
import numpy as np
warnings.simplefilter("ignore")
from dadapy import Data
out = {}
for path in sys.argv[1:]:
    X = np.load(path)
    try:
        # TwoNN first, on distances from compute_distances; Gride on a fresh object (its own search
        # takes square roots of Gram-trick squared distances, less accurate at the smallest ones)
        data = Data(coordinates=X, maxk=64, verbose=False)
        twonn, twonn_ml = float(data.compute_id_2NN()[0]), float(data.compute_id_2NN(algorithm="ml")[0])
        # dadapy's 'base' fit is scipy's curve_fit, converged to its default tolerance (~1e-9 in d here);
        # the same least-squares line in closed form, on dadapy's own ratios and discard rule:
        mus = data.distances[:, 2] / data.distances[:, 1]
        n_eff = int(len(mus) * 0.9)
        x = np.sort(np.log(mus))[:n_eff]
        y = -np.log(1 - np.arange(1, n_eff + 1) / len(mus))
        ids, errs, rs = Data(coordinates=X, maxk=64, verbose=False).return_id_scaling_gride(range_max=64)
        out[path] = {
            "twonn": twonn,
            "twonn_closed": float(x @ y / (x @ x)),
            "twonn_ml": twonn_ml,
            "gride": ids.tolist(),
            "gride_err": errs.tolist(),
            "gride_r": rs.tolist(),
        }
    except Exception as exc:
        out[path] = {"error": type(exc).__name__ + ": " + str(exc).splitlines()[0]}
print(json.dumps(out))
"""


def dadapy_python() -> str | None:
    for cand in (
        os.environ.get("TMCHECK_DADAPY_PYTHON"),
        str(ROOT / "benchmarks" / ".venv-anchors" / "bin" / "python"),
    ):
        if cand and Path(cand).is_file():
            ok = subprocess.run([cand, "-c", "import dadapy"], capture_output=True).returncode == 0
            if ok:
                return cand
    return None


def run_dadapy(paths) -> dict:
    py = dadapy_python()
    if py is None:
        pytest.skip(
            "dadapy is not importable: set TMCHECK_DADAPY_PYTHON to a python with dadapy==0.3.4 "
            "(numpy < 2), or run benchmarks/bench_id.py once to make benchmarks/.venv-anchors"
        )
    res = subprocess.run([py, "-c", DADAPY_SCRIPT, *map(str, paths)], capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr[-2000:]
    return json.loads(res.stdout)
