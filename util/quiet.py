"""Libraries kept quiet where tmcheck speaks for them: transformers' loading and writing bars, and
its log messages below errors, are silenced inside `quiet_transformers()` (what tmcheck does with the
model is reported by tmcheck itself, on one line). Warnings raised inside the block by transformers,
huggingface_hub and safetensors are dropped; everything is restored on exit.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Iterator

QUIET_MODULES = r"(transformers|huggingface_hub|safetensors)(\..*)?"


@contextlib.contextmanager
def quiet_transformers() -> Iterator[None]:
    """transformers without progress bars, log messages below ERROR and warnings, for the block."""
    from transformers.utils import logging as hf_logging

    bars, verbosity = hf_logging.is_progress_bar_enabled(), hf_logging.get_verbosity()
    hf_logging.disable_progress_bar()
    hf_logging.set_verbosity_error()
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", module=QUIET_MODULES)
            yield
    finally:
        hf_logging.set_verbosity(verbosity)
        if bars:
            hf_logging.enable_progress_bar()
