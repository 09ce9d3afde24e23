#!/usr/bin/env bash
# The prepared GPU check, one command that fits a 9-minute lease (see benchmarks/gpu_check.py):
#   bash benchmarks/gpu_check.sh                 # on a CUDA machine: writes benchmarks/results/gpu.json
#   bash benchmarks/gpu_check.sh --cpu-smoke     # toy sizes on the CPU, CPU against CPU (tests the script)
# Before a lease, here: `bash benchmarks/gpu_wheels.sh` (wheels into .whl/) and
# `.venv/bin/python -m benchmarks.gpu_check --prepare-carry` (corpora into benchmarks/.gpu_carry/); the
# device run carries .whl and benchmarks/.gpu_carry (it has no network).
# Python: $PYTHON, else .venv/bin/python, else python3 (on the GPU machine: the image's, which holds a
# CUDA torch). The wheels in .whl/ are installed into a temporary directory first, within INSTALL_S
# seconds (gpu_check.py's INSTALL_S): the lock's torch when .whl holds a wheel of it for this python,
# else the image's torch runs; what ran is recorded in gpu.json ("install"). tmcheck is made
# importable from this checkout when it is not installed. Exit status:
# 0 done, 1 a correctness check failed or could not run, 2 no CUDA device (or bad arguments).
set -u
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT" || exit 2
PY="${PYTHON:-}"
if [ -z "$PY" ]; then
  if [ -x .venv/bin/python ]; then PY=.venv/bin/python; else PY=python3; fi
fi
INSTALL_S=$(sed -n 's/^INSTALL_S = \([0-9]*\).*/\1/p' benchmarks/gpu_check.py)
WORK="$(mktemp -d "${TMPDIR:-/tmp}/gpu_check_env.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
if ! "$PY" -c "import tmcheck.empirics.id.knn" 2>/dev/null; then
  # not installed here: the package dirs map onto tmcheck.* (pyproject's package-dir) through links
  mkdir -p "$WORK/shim/tmcheck"
  for d in theory proofs_check empirics cli util; do ln -s "$ROOT/$d" "$WORK/shim/tmcheck/$d"; done
  export PYTHONPATH="$WORK/shim${PYTHONPATH:+:$PYTHONPATH}"
fi
export GPU_CHECK_INSTALL="$WORK/install.json"
wheels=()
if compgen -G ".whl/*.whl" >/dev/null && ! "$PY" -c "import pydantic, submitit, tmcheck.cli.main" 2>/dev/null; then
  wheels=(.whl/*.whl)
fi
if [ ${#wheels[@]} -gt 0 ]; then
  t0=$(date +%s.%N)
  timeout "$INSTALL_S" "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir \
    --target "$WORK/site" "${wheels[@]}"
  rc=$?
  t1=$(date +%s.%N)
  status=ok; [ $rc -eq 124 ] && status=timeout; [ $rc -ne 0 ] && [ $rc -ne 124 ] && status="error (exit $rc)"
  names=$(printf '"%s",' "${wheels[@]##*/}")
  printf '{"status": "%s", "seconds": %s, "box_s": %s, "wheels": [%s]}\n' \
    "$status" "$("$PY" -c "print(round($t1 - $t0, 2))")" "$INSTALL_S" "${names%,}" > "$GPU_CHECK_INSTALL"
  [ $rc -eq 0 ] && export PYTHONPATH="$WORK/site${PYTHONPATH:+:$PYTHONPATH}"
  [ $rc -ne 0 ] && echo "[gpu_check] the wheels in .whl/ were not installed ($status): the image's packages run" >&2
else
  printf '{"status": "skipped", "seconds": 0, "box_s": %s, "wheels": []}\n' "$INSTALL_S" > "$GPU_CHECK_INSTALL"
fi
export PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1
"$PY" -m benchmarks.gpu_check "$@"
