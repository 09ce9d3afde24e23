"""`tmcheck proofs` shows its progress on stderr, also under --json, and stdout stays one JSON document."""

from __future__ import annotations

import contextlib
import json

from typer.testing import CliRunner

from tmcheck.cli.main import app
from tmcheck.util import progress


def test_progress_on_stderr_under_json(monkeypatch):
    shown = []

    class Console:
        def status(self, text):
            shown.append(text)

            class S(contextlib.nullcontext):
                def start(self):
                    pass

                def stop(self):
                    pass

            return S()

    monkeypatch.setattr(progress, "console", Console)
    monkeypatch.setenv("TMCHECK_PROGRESS", "always")
    res = CliRunner().invoke(app, ["proofs", "--section", "lemma5", "--json"])
    assert res.exit_code in (0, 1) and json.loads(res.stdout)["totals"]
    assert shown and "lemma5" in shown[0]
    monkeypatch.setenv("TMCHECK_PROGRESS", "never")
    shown.clear()
    CliRunner().invoke(app, ["proofs", "--section", "lemma5", "--json"])
    assert not shown
