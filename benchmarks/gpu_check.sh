#!/usr/bin/env bash
# The prepared GPU check, one command (see benchmarks/gpu_check.py for the stages):
#   bash benchmarks/gpu_check.sh                 # on a CUDA machine: writes benchmarks/results/gpu.json
#   bash benchmarks/gpu_check.sh --cpu-smoke     # tiny sizes on the CPU, CPU against CPU (tests the script)
# Python: $PYTHON, else .venv/bin/python, else python3 (on the GPU machine: the image's, which holds a
# CUDA torch). When the CLI does not import, the wheels in .whl/ (benchmarks/gpu_wheels.sh) are
# installed into a temporary directory first; tmcheck is made importable from this checkout when it
# is not installed. Exit status:
# 0 done, 1 a correctness check failed or could not run, 2 no CUDA device (or bad arguments).
set -u
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT" || exit 2
PY="${PYTHON:-}"
if [ -z "$PY" ]; then
  if [ -x .venv/bin/python ]; then PY=.venv/bin/python; else PY=python3; fi
fi
WORK="$(mktemp -d "${TMPDIR:-/tmp}/gpu_check_env.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
if ! "$PY" -c "import tmcheck.empirics.id.knn" 2>/dev/null; then
  # not installed here: the package dirs map onto tmcheck.* (pyproject's package-dir) through links
  mkdir -p "$WORK/shim/tmcheck"
  for d in theory proofs_check empirics cli util; do ln -s "$ROOT/$d" "$WORK/shim/tmcheck/$d"; done
  export PYTHONPATH="$WORK/shim${PYTHONPATH:+:$PYTHONPATH}"
fi
if ! "$PY" -c "import pydantic, submitit, tmcheck.cli.main" 2>/dev/null && compgen -G ".whl/*.whl" >/dev/null; then
  "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target "$WORK/site" .whl/*.whl \
    || { echo "error: could not install the wheels in .whl/" >&2; exit 2; }
  export PYTHONPATH="$WORK/site${PYTHONPATH:+:$PYTHONPATH}"
fi
export PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1
"$PY" -m benchmarks.gpu_check "$@"
