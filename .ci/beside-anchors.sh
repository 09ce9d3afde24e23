#!/usr/bin/env bash
# tmcheck installs beside dadapy and scikit-dimension in ONE fresh venv, with
# the ranges of pyproject.toml alone (no constraints.txt), and its ID tests pass there.
# torch==2.13.0 stands for the torch a researcher already has: it is the CPU wheel in /opt/wheels,
# and without it the torch range would pull a multi-GB CUDA build. Usage: .ci/beside-anchors.sh [VENV]
set -euo pipefail
cd "$(dirname "$0")/.."
venv=${1:-$(mktemp -d)/venv}
links=$([ -d /opt/wheels ] && echo --find-links /opt/wheels || true)
t0=$(date +%s)
python3.11 -m venv "$venv"
"$venv/bin/python" -m pip install -q --upgrade pip
# shellcheck disable=SC2086
"$venv/bin/python" -m pip install -q $links ".[dev]" dadapy scikit-dimension torch==2.13.0
"$venv/bin/python" -m pip check
t1=$(date +%s)
"$venv/bin/python" - <<'PY'
from importlib.metadata import version
import numpy, dadapy, skdim, tmcheck.empirics.id  # noqa: F401  all three import in one process
print("beside-anchors:", ", ".join(f"{p} {version(p)}" for p in
      ("tmcheck", "numpy", "scipy", "scikit-learn", "torch", "dadapy", "scikit-dimension")))
assert numpy.__version__ < "2", "dadapy needs numpy<2: the resolver did not honour it"
PY
# `tmcheck` imports from the installed wheel: the checkout has no tmcheck/ folder (package-dir).
HYPOTHESIS_PROFILE=ci "$venv/bin/python" -m pytest -q -p no:cacheprovider \
    --rootdir "$PWD" -c "$PWD/pyproject.toml" tests/empirics/id/
echo "beside-anchors: install $((t1 - t0)) s, tests $(( $(date +%s) - t1 )) s"
