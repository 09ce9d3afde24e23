"""Dense bf16 tensor-core peaks per GPU, read from the device's name (the denominator of MFU).

Vendor datasheet figures WITHOUT structured sparsity (the datasheets print the sparse figure, twice
these, first). Matched in order, most specific first, on `torch.cuda.get_device_name()`; a name that
matches nothing gets None, and MFU is then reported as null with the name recorded, never against
another card's peak. The sustained rate is lower: an 8192^3 bf16 product reached 769-798 TFLOP/s
on the H200s of this workplace (/work/.library/device/KINDS.md), 78-81% of the 989 below, so
gpu_check also measures its own GEMM ceiling.
"""

from __future__ import annotations

import re

# (pattern on the device name, dense bf16 FLOP/s per GPU, what the figure is)
PEAKS: tuple[tuple[str, float, str], ...] = (
    (r"GH200", 989e12, "GH200 (H100 SXM tensor cores)"),
    (r"H200 NVL", 835e12, "H200 NVL"),
    (r"H200", 989e12, "H200 SXM"),
    (r"H100 PCIe", 756e12, "H100 PCIe"),
    (r"H100 NVL", 835e12, "H100 NVL"),
    (r"H100|H800", 989e12, "H100/H800 SXM"),
    (r"B200", 2250e12, "B200 (HGX)"),
    (r"A100|A800", 312e12, "A100/A800"),
    (r"L40S", 362e12, "L40S"),
    (r"\bL4\b", 121e12, "L4"),
    (r"\bA10\b", 125e12, "A10"),
)


def bf16_dense_peak(device_name: str) -> tuple[float | None, str | None]:
    """(peak FLOP/s, the entry it matched) for a CUDA device name; (None, None) if unknown."""
    for pattern, flops, label in PEAKS:
        if re.search(pattern, device_name or ""):
            return flops, label
    return None, None
