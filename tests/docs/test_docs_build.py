"""The strict build: the site as committed builds with no warning, and a broken link fails it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from helpers import ROOT, need_mkdocs  # noqa: E402


def build(tmp: Path, edit=None) -> subprocess.CompletedProcess:
    """mkdocs build --strict of a copy of docs/ with the project's own config (hooks and all)."""
    import yaml

    docs = tmp / "docs"
    shutil.copytree(ROOT / "docs", docs)
    if edit:
        edit(docs)
    cfg = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    cfg["docs_dir"], cfg["site_dir"] = str(docs), str(tmp / "site")
    cfg["hooks"] = [str(ROOT / h) for h in cfg["hooks"]]
    python = next(p for p in cfg["plugins"] if isinstance(p, dict) and "mkdocstrings" in p)
    handler = python["mkdocstrings"]["handlers"]["python"]
    handler["paths"] = [str(ROOT / p) for p in handler["paths"]]
    (tmp / "mkdocs.yml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(tmp / "mkdocs.yml")],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp,
        timeout=300,
    )


@pytest.mark.slow  # runs every generator or obligation (1-3 min): CI's documentation stage runs it
def test_the_site_builds_strictly_and_a_broken_link_fails_it(tmp_path):
    need_mkdocs()
    ok = build(tmp_path / "ok")
    assert ok.returncode == 0, ok.stderr[-2000:]
    assert "WARNING" not in ok.stderr
    site = tmp_path / "ok" / "site"
    assert (site / "index.html").is_file() and (site / "figures" / "pretrain" / "fig_scaling.png").is_file()
    api = (site / "api" / "empirics" / "id" / "index.html").read_text()
    assert api.count("doc doc-object") > 10 and "<th>parameter</th>" in api  # one group, with its tables
    assert (site / "assets" / "mathjax" / "tex-chtml.js").is_file()  # the math renders with no CDN

    def broken(docs: Path) -> None:
        page = docs / "getting-started.md"
        page.write_text(page.read_text() + "\nSee [the missing page](nowhere.md).\n")

    bad = build(tmp_path / "bad", broken)
    assert bad.returncode != 0 and "nowhere.md" in bad.stderr
