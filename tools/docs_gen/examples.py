"""The example gallery (docs/examples/*.md): each example is a script under examples/, run when the site
is built; its page shows the script (committed) and what it printed (build time, never typed).

A script runs with bash -e in a fresh temporary directory, with this interpreter's bin/ (tmcheck, python)
first on PATH and a 100-column terminal; one that fails or runs past TIMEOUT fails the build.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from docs_gen import GeneratorError
from docs_gen._common import ROOT

PAGES = (
    "docs/examples/index.md",
    "docs/examples/embeddings-id.md",
    "docs/examples/scaling-law.md",
    "docs/examples/lemma1-network.md",
    "docs/examples/sweep-slurm.md",
)
EXAMPLES = ROOT / "examples"
TIMEOUT = 120  # seconds per example: each is sized to run in seconds
NAMES = ("embeddings_id", "scaling_law", "lemma1_network", "sweep_slurm")


def script(name: str) -> Path:
    return EXAMPLES / f"{name}.sh"


def run(name: str) -> tuple[str, float]:
    """(what the script printed, stdout and stderr in order, and its wall seconds)."""
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    env.update(COLUMNS="100", TERM="dumb", NO_COLOR="1", PYTHONHASHSEED="0")
    with tempfile.TemporaryDirectory(prefix=f"tmcheck-example-{name}-") as tmp:
        t0 = time.time()
        try:
            res = subprocess.run(
                ["bash", "-e", str(script(name))],
                cwd=tmp,
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
                timeout=TIMEOUT,
            )
        except subprocess.TimeoutExpired as exc:
            raise GeneratorError(f"examples/{name}.sh ran past {TIMEOUT} s") from exc
    if res.returncode != 0:
        tail = " | ".join(res.stdout.strip().splitlines()[-3:])
        raise GeneratorError(f"examples/{name}.sh exited {res.returncode}: {tail}")
    return res.stdout, time.time() - t0


def source(name: str) -> str:
    return f"```bash\n{script(name).read_text(encoding='utf-8').rstrip()}\n```\n"


def output(name: str) -> str:
    text, seconds = run(name)
    return (
        f"Printed when this site was built (`bash -e examples/{name}.sh` in an empty directory, "
        f"{seconds:.0f} s):\n\n```text\n{text.rstrip()}\n```\n"
    )


def gallery() -> str:
    rows = []
    for name in NAMES:
        first = script(name).read_text(encoding="utf-8").splitlines()[0].lstrip("# ")
        title, _, what = first.partition(": ")
        rows.append(f"- [{title}]({name.replace('_', '-')}.md): {what}")
    return "\n".join(rows) + "\n"


GENERATORS: dict[str, Callable[[], str]] = {
    "examples.gallery": gallery,
    **{f"examples.{n}.source": (lambda n=n: source(n)) for n in NAMES},
    **{f"examples.{n}.output": (lambda n=n: output(n)) for n in NAMES},
}
AT_BUILD = {f"examples.{n}.output" for n in NAMES}
