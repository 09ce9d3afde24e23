"""MICRO: the smallest synthetic preset the sweep tests train (one d and β, two n, a 60-step cap, kNN the only
baseline, two model widths): seconds per sweep. Test modules import it by name (their folder is on sys.path)."""

from __future__ import annotations

from dataclasses import replace

from tmcheck.empirics.sweep.kinds import get_preset

# the tiny preset (its β, min_val, n_blocks and model sweep's d and β kept) cut down further, without its notes
# why kept: the fields it changes, by keyword as the presets' tables write theirs: alike in shape, not in value
MICRO = replace(
    get_preset("tiny", "synthetic"),
    name="micro",
    notes="",
    dims=(1,),
    ns=(40, 80),
    seeds=(0,),
    D=4,
    n_test=300,
    d_embd=5,
    n_heads=1,
    ffn_width=8,
    min_steps=60,
    max_steps=60,
    eval_every=20,
    patience=50,
    baselines=("knn",),
    model_widths=(2, 4),
    model_n=80,
)
