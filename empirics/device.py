"""The one device resolver of tmcheck: every torch computation (training, embedding, kNN) asks here.

'auto' is CUDA when torch sees a GPU, else the CPU; 'cpu'; 'cuda' or 'cuda:N' only when that CUDA
device exists. Anything else is refused with a ValueError naming the accepted forms, so a bad
``--device`` fails at the start of a run, not deep inside torch.
"""

from __future__ import annotations

import re

DEVICE_PATTERN = re.compile(r"^(auto|cpu|cuda(:\d+)?)$")


def resolve_device(device: str = "auto"):
    """The torch.device for 'auto', 'cpu', 'cuda' or 'cuda:N' (case and surrounding spaces ignored)."""
    import torch

    if isinstance(device, torch.device):
        device = str(device)
    v = str(device).strip().lower()
    if not DEVICE_PATTERN.match(v):
        raise ValueError(f"unknown device {device!r}: use auto, cpu, cuda or cuda:N")
    if v == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if v == "cpu":
        return torch.device("cpu")
    if not torch.cuda.is_available():
        raise ValueError(f"device {device!r} asked for, but torch sees no CUDA device here")
    idx = int(v.split(":")[1]) if ":" in v else 0
    count = torch.cuda.device_count()
    if idx >= count:
        raise ValueError(f"device {device!r}: only {count} CUDA device(s) here (cuda:0 .. cuda:{count - 1})")
    return torch.device("cuda", idx)
