#!/usr/bin/env bash
# The HF export across tmcheck's transformers range: an export made by the lock's transformers
# (.venv, `make venv`) is loaded under the floor of the range (transformers 4.46.3, tokenizers 0.20.3)
# in a fresh venv, and the logits of model(**tok(text)), generate(**enc), a right-padded batch and a
# left-padded generate must equal tmcheck's own GPT to 1e-4 (tests/infra/hf_export_check.py `check`);
# it also loads, truncates and generates from a prompt longer than the context with no warning. Then
# the same check on a mutant export whose tokenizer returns token_type_ids must fail (`mutant`): the
# check can fail in this very venv. The default suite runs all three under the lock.
# torch comes from /opt/wheels (the CPU wheel). Usage: .ci/transformers-floor.sh [VENV]
set -euo pipefail
cd "$(dirname "$0")/.."
t0=$(date +%s)
venv=${1:-$(mktemp -d)/venv}
work=$(mktemp -d)
links=$([ -d /opt/wheels ] && echo --find-links /opt/wheels || true)
test -x .venv/bin/python || make venv
.venv/bin/python tests/infra/hf_export_check.py make "$work"
t1=$(date +%s)
test -x "$venv/bin/python" || python3.11 -m venv "$venv"
"$venv/bin/python" -m pip install -q --upgrade pip
# shellcheck disable=SC2086
"$venv/bin/python" -m pip install -q $links torch==2.13.0 transformers==4.46.3 tokenizers==0.20.3
t2=$(date +%s)
"$venv/bin/python" tests/infra/hf_export_check.py check "$work"
"$venv/bin/python" tests/infra/hf_export_check.py mutant "$work"
echo "transformers-floor: export $((t1 - t0)) s, floor venv $((t2 - t1)) s, check $(( $(date +%s) - t2 )) s"
