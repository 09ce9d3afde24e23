"""util.progress: drawn on stderr only, never on stdout; the environment switch works both ways."""

from __future__ import annotations

from tmcheck.util import progress


def test_always_draws_on_stderr_and_leaves_stdout_empty(monkeypatch, capsys):
    monkeypatch.setenv("TMCHECK_PROGRESS", "always")
    with progress.bar(3, "runs", loss="nan") as advance:
        for _ in range(3):
            advance(loss="0.5")
    out, err = capsys.readouterr()
    assert out == "" and "runs" in err and "3/3" in err and "loss=0.5" in err


def test_never_and_not_shown_draw_nothing(monkeypatch, capsys):
    monkeypatch.setenv("TMCHECK_PROGRESS", "never")
    with progress.bar(3, "runs") as advance:
        advance()
    monkeypatch.setenv("TMCHECK_PROGRESS", "always")
    with progress.bar(3, "runs", show=False) as advance:
        advance()
    assert capsys.readouterr() == ("", "")


def test_auto_follows_the_terminal(monkeypatch):
    monkeypatch.setenv("TMCHECK_PROGRESS", "auto")
    monkeypatch.setattr("sys.stderr.isatty", lambda: False, raising=False)
    assert progress.enabled() is False
