"""The one JSON normaliser: what every `--json` output, written payload and obligation record goes
through before `json.dumps`.

Fractions become 'p/q' strings (exact values stay exact), numpy scalars and arrays plain Python,
non-finite floats the strings 'nan', 'inf', '-inf' (JSON has no such numbers), mapping keys strings,
tuples lists, and anything else unknown (a Path, a sympy or mpmath number) its string.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np


def plain(obj: Any) -> Any:
    """obj, JSON-ready (see the module docstring)."""
    if isinstance(obj, Fraction):
        return str(obj)
    if isinstance(obj, dict):
        return {str(k): plain(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [plain(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return plain(obj.tolist())
    if isinstance(obj, np.generic):
        return plain(obj.item())
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else str(obj)
    return obj if obj is None or isinstance(obj, bool | int | str) else str(obj)
