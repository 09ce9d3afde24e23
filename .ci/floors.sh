#!/usr/bin/env bash
# The oldest supported versions: a fresh venv with every floor of pyproject.toml pinned
# (.ci/floors.txt), then the default test suite. Not part of .ci/run (about 9 min on 2 cores, idle
# machine ~3 min); run it after changing a floor. Usage: .ci/floors.sh [VENV]
# The suite holds the export's logits check (tests/empirics/test_lm_own_data_hf.py: model(**tok(text)),
# generate(**enc) and padded batches against tmcheck's GPT to 1e-4, and the token_type_ids mutant that
# must fail), so here it runs under every floor at once, transformers 4.46.3 among them.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=${1:-$(mktemp -d)/venv}
links=$([ -d /opt/wheels ] && echo --find-links /opt/wheels || true)
python3.11 -m venv "$venv"
"$venv/bin/python" -m pip install -q --upgrade pip
# shellcheck disable=SC2086
"$venv/bin/python" -m pip install -q $links -c .ci/floors.txt ".[dev]"
"$venv/bin/python" -m pip check
HYPOTHESIS_PROFILE=ci "$venv/bin/python" -m pytest -n 2 -m "not slow and not gpu" -q -p no:cacheprovider
