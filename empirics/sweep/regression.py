"""The synthetic sweeps' training step: the paper's regression transformer (empirics.synthetic.model) trained
on a split by the shared trainer (empirics.lm.train). It lives here, above both, so that the synthetic
package needs nothing from the language-model one (and the data package can use synthetic's problems)."""

from __future__ import annotations

import torch

from tmcheck.empirics.synthetic.model import RegressionTransformer, mse_loss, predict


def fit_transformer(model: RegressionTransformer, split, train_cfg, batch_size: int, seed: int, run_dir) -> dict:
    """Train by MSE on the shared trainer (tmcheck.empirics.lm.train): AdamW, warmup + cosine, early
    stopping on the validation MSE, a checkpoint at every evaluation (so a killed run resumes).

    Batch `step` is drawn from a generator seeded by (seed, step) alone, as the trainer requires for
    a resumed run to equal an uninterrupted one. Returns the trainer's result and the test MSE
    against f of the best-validation weights, with why training ended ("stop": "patience" or "cap") and
    the cap it ran under ("max_steps").
    """
    import numpy as np

    from tmcheck.empirics.lm.train import load_checkpoint, train

    Xtr = torch.as_tensor(split.X_train, dtype=torch.float32)
    ytr = torch.as_tensor(split.y_train, dtype=torch.float32)
    val = [(torch.as_tensor(split.X_val, dtype=torch.float32), torch.as_tensor(split.y_val, dtype=torch.float32))]
    b = min(batch_size, len(Xtr))

    def batches(step: int, micro: int):
        g = torch.Generator().manual_seed(seed * 1_000_003 + step * 101 + micro)
        idx = torch.randint(len(Xtr), (b,), generator=g)
        return Xtr[idx], ytr[idx]

    result = train(
        model, batches, mse_loss, lambda: val, train_cfg, run_dir, meta={"model_config": model.cfg.as_dict()}
    )
    model.load_state_dict(load_checkpoint(run_dir / "best.pt")["model"])
    pred = predict(model.cpu(), split.X_test)
    return {
        "test_mse": float(np.mean((pred - split.f_test) ** 2)),
        "best_val": result.best_val,
        "best_step": result.best_step,
        "steps": result.steps,
        "max_steps": train_cfg.max_steps,
        "stop": result.stop,
        "seconds": result.seconds,
    }
