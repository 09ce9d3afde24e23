#!/usr/bin/env bash
# Wheels the GPU machine's image may lack or hold at older versions (it has no network): typer 0.29
# (cli/main.py imports its vendored click) needs pydantic, which the image does not list; submitit for
# the SLURM executor. Run here, in the repo root; pins from constraints.txt; cp312 for its python3.
# Then name .whl in the device run's carry (benchmarks/gpu_check.sh installs them).
set -eu
cd "$(dirname "${BASH_SOURCE[0]}")/.."
grep -qx '/.whl/' .git/info/exclude 2>/dev/null || echo /.whl/ >> .git/info/exclude
pins() { for n in "$@"; do grep -i -E "^${n}==" constraints.txt; done; }
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 -d .whl \
  $(pins typer pydantic pydantic_core annotated-types typing-inspection annotated-doc typing_extensions rich shellingham submitit)
ls -la .whl
