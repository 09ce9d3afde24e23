"""train_lm evaluates the best checkpoint on the device it trained on.

The checkpoint loads on the CPU; on the H200 (benchmarks/gpu_check.sh, 2026-12-04) every run of the
sweep failed in the test-loss pass ("index is on cuda:0, different from other tensors on cpu") until
the loaded model was moved. A CPU machine cannot show the mismatch, so the test watches the move.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from tmcheck.empirics.data import DatasetSpec, prepare_dataset
from tmcheck.empirics.lm import checkpoint, train
from tmcheck.empirics.lm.pretrain import train_lm
from tmcheck.empirics.sweep.kinds import get_preset


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("ds")
    spec = DatasetSpec(
        corpus="stories", vocab_size=300, max_train_tokens=20_000, max_eval_tokens=2_000, tokenizer_bytes=100_000
    )
    prepare_dataset(spec, out)
    return out


def test_the_best_checkpoint_is_moved_to_the_evaluation_device(data_dir, tmp_path, monkeypatch):
    moved, evaluated = [], []
    load = checkpoint.load_gpt

    def load_watched(path, *a, **kw):
        model = load(path, *a, **kw)
        to = model.to

        def to_watched(*args, **kwargs):
            moved.append(args[0] if args else kwargs.get("device"))
            return to(*args, **kwargs)

        model.to = to_watched
        return model

    real_evaluate = train.evaluate

    def evaluate_watched(model, loss_fn, batches, device):
        evaluated.append((model, device))
        return real_evaluate(model, loss_fn, batches, device)

    monkeypatch.setattr(checkpoint, "load_gpt", load_watched)
    monkeypatch.setattr(train, "evaluate", evaluate_watched)
    preset = get_preset("tiny")
    preset = preset.with_overrides(train=replace(preset.train, max_steps=4, eval_every=2))
    row = train_lm(preset, data_dir, 2000, 0, tmp_path / "run", progress=False)
    assert row["test_loss"] > 0
    best, device = evaluated[-1]  # the test-loss pass, after the training loop's validation passes
    assert moved == [device], (moved, device)
    assert next(best.parameters()).device.type == device.type
