#!/usr/bin/env bash
# Wheels for the GPU machine, whose image lacks some packages or holds other versions and which has no
# network: typer 0.29 (cli/main.py imports its vendored click) needs pydantic, which the image does not
# list; submitit for the SLURM executor; transformers and its tokenizers, safetensors and hub at the
# lock's pins (the first check ran the image's transformers 5.17). The lock's torch (a CUDA build is
# over a GiB with its nvidia libraries) does not fit the 64 MiB a device run carries: the image's torch
# runs, and gpu.json records both versions. Run here, in the repo root; pins from constraints.txt; cp312
# for the image's python3. Then name .whl in the device run's carry (gpu_check.sh installs them).
set -eu
cd "$(dirname "${BASH_SOURCE[0]}")/.."
grep -qx '/.whl/' .git/info/exclude 2>/dev/null || echo /.whl/ >> .git/info/exclude
grep -qx '/benchmarks/.gpu_carry/' .git/info/exclude 2>/dev/null || echo /benchmarks/.gpu_carry/ >> .git/info/exclude
pins() { for n in "$@"; do grep -i -E "^${n}==" constraints.txt; done; }
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 -d .whl \
  $(pins typer pydantic pydantic_core annotated-types typing-inspection annotated-doc typing_extensions rich \
    shellingham submitit transformers tokenizers safetensors huggingface_hub hf-xet)
du -sh .whl
ls -la .whl
