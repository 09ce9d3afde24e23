"""Measurement: intrinsic dimension, pretraining, sweeps, scaling-law fits and reports (DESIGN.md)."""
