"""Shared by the documentation tests: the repository root, tools/ importable, and the gates that make a
test fail instead of skipping in CI (TMCHECK_DOCS=1: mkdocs installed; TMCHECK_BROWSER=1: Chromium)."""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))


def load_tool(name: str):
    """tools/<name>.py (or .ci/<name>.py) as a module."""
    path = ROOT / "tools" / f"{name}.py"
    if not path.exists():
        path = ROOT / ".ci" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"tmcheck_tool_{name.replace('-', '_')}", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def need_mkdocs() -> None:
    if importlib.util.find_spec("mkdocs") is None:
        if os.environ.get("TMCHECK_DOCS") == "1":
            pytest.fail("mkdocs is not installed but TMCHECK_DOCS=1 (make docs installs the docs extra)")
        pytest.skip("the docs extra is not installed (make docs installs it)")


def need_chromium() -> str:
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if path is None:
        if os.environ.get("TMCHECK_BROWSER") == "1":
            pytest.fail("Chromium is not installed but TMCHECK_BROWSER=1 (.ci/run installs it)")
        pytest.skip("Chromium is not installed (apt-get install chromium)")
    return path
