"""MICRO: the smallest synthetic preset the sweep tests train (one d and β, two n, a 60-step cap, kNN the only
baseline, two model widths): seconds per sweep. Test modules import it by name (their folder is on sys.path)."""

from __future__ import annotations

from tmcheck.empirics.sweep.synthetic_preset import SynthPreset

# keyword settings, as the presets' tables write them: alike in shape, not in value
MICRO = SynthPreset(
    name="micro",
    dims=(1,),
    betas=(1.0,),
    ns=(40, 80),
    seeds=(0,),
    D=4,
    n_test=300,
    min_val=8,
    d_embd=5,
    n_blocks=1,
    n_heads=1,
    ffn_width=8,
    min_steps=60,
    max_steps=60,
    eval_every=20,
    patience=50,
    baselines=("knn",),
    model_dims=(1,),
    model_betas=(1.0,),
    model_widths=(2, 4),
    model_n=80,
)
