"""Mutation testing of theory/ and proofs_check/ with mutmut (`make mutation`; DESIGN.md, "every check can fail").

mutmut (>= 3) mutates the functions of theory/bounds.py, theory/heads.py, theory/spec.py, theory/targets.py,
theory/lemmas/ and proofs_check/ and runs, per mutant, the tests of a fast subset (tests/theory and
tests/proofs_check, the registry's verdicts one test per obligation, `slow` excluded) that reach the mutated
function. A mutant is killed when a test fails (a pinned verdict that changes fails its test), survives otherwise.

The package's folders are mapped into the `tmcheck` namespace (pyproject.toml), which mutmut's copy of the tree
does not know; so the run happens in a work directory laid out as the import sees it (tmcheck/theory, ...,
tests/), configured by its own setup.cfg, and mutmut's copies take precedence on sys.path there.

    python tools/mutation.py                       # every target; resumes a run left unfinished
    python tools/mutation.py --files theory/bounds.py --budget-minutes 60
    python tools/mutation.py --sample 40 --rerun   # 40 more mutants per file, and the survivors again
    python tools/mutation.py --report-only         # mutation/report.json and SURVIVORS.md from what ran

The run is niced (nice -n 10) and uses --workers processes (default 1: the machine is shared). Results are
read from mutmut's records after each run and written to mutation/report.json (score, counts per file, every
survivor with its file, line and diff, and the killing test added or the reason it is equivalent, from
mutation/explanations.json) and mutation/SURVIVORS.md. Mutants not run yet are counted as such, never as
killed. The score is detected / decided over the mutants that ran: detected = killed or timed out (the tests
ran past mutmut's limit: the mutant changed what the code does; listed, as Stryker counts them), decided =
detected + survived + no tests (no test of the subset reaches the function: counted as surviving) +
suspicious.

A full run is ~12,000 mutants, more than the shared machine gives in hours; --sample K runs a seeded uniform
sample of K mutants per file among those not yet run (the per-file score is then an estimate over the sample,
and the report says how many ran), --rerun runs again the survivors and the mutants without tests (after tests
were added).
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "mutation"
WORK = OUT / ".work"  # ignored (mutation/.gitignore)
PACKAGES = ("theory", "proofs_check", "cli", "empirics", "util")
TARGETS = (
    "theory/bounds.py",
    "theory/heads.py",
    "theory/spec.py",
    "theory/targets.py",
    "theory/lemmas/*.py",
    "proofs_check/*.py",
)
TESTS = ("tests/theory", "tests/proofs_check")
# mutmut's exit codes (mutmut/stats.py)
STATUS = {1: "killed", 3: "killed", 0: "survived", 5: "no tests", 33: "no tests", 34: "skipped", 36: "timeout"}
STATUS.update({-24: "timeout", 24: "timeout", 152: "timeout", 255: "timeout", 37: "caught by type check"})
DECIDED = ("killed", "timeout", "survived", "no tests", "suspicious")


def targets(files: list[str] | None) -> list[str]:
    """The repository-relative source files to mutate (globs of TARGETS, or those given)."""
    pats = files or list(TARGETS)
    out = []
    for pat in pats:
        out += sorted(str(p.relative_to(ROOT)) for p in ROOT.glob(pat) if p.name != "__init__.py" or "lemmas" in pat)
    return sorted(set(out))


def prepare(files: list[str]) -> None:
    """The work directory: tmcheck/<package> copies of the sources (refreshed), tests/, and setup.cfg."""
    pkg = WORK / "tmcheck"
    pkg.mkdir(parents=True, exist_ok=True)
    for name in PACKAGES:
        dst = pkg / name
        if dst.exists():
            shutil.rmtree(dst)
        shutil.copytree(ROOT / name, dst, ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("tests", "docs", "tools"):  # the tests read the generated docs pages and their generators
        if (WORK / name).exists():
            shutil.rmtree(WORK / name)
        shutil.copytree(ROOT / name, WORK / name, ignore=shutil.ignore_patterns("__pycache__", ".work"))
    only = "\n".join(f"    tmcheck/{f}" for f in files)
    tests = "\n".join(f"    {t}" for t in TESTS)
    (WORK / "setup.cfg").write_text(
        "[mutmut]\n"
        "source_paths =\n    tmcheck/theory\n    tmcheck/proofs_check\n"
        "also_copy =\n    tmcheck/cli\n    tmcheck/empirics\n    tmcheck/util\n    tests\n    docs\n    tools\n"
        f"only_mutate =\n{only}\n"
        f"pytest_add_cli_args_test_selection =\n{tests}\n"
        "pytest_add_cli_args =\n    -p\n    no:cacheprovider\n    -m\n    not slow and not gpu\n    -q\n"
        # the source-mutation table rewrites functions from their source, which mutmut's trampolines replace;
        # the structure tests read the repository's layout, which the work directory does not have
        "    -k\n    not source_mutation\n    --ignore\n    tests/theory/test_structure.py\n"
        "use_setproctitle = false\n",
        encoding="utf-8",
    )
    # pytest reads its options (markers, import mode) from here
    shutil.copy(ROOT / "pyproject.toml", WORK / "pyproject.toml")


def run(workers: int, budget_minutes: float | None, patterns: list[str]) -> int:
    """mutmut run in the work directory, niced; stops (resumable) after budget_minutes."""
    env = {**os.environ, "OMP_NUM_THREADS": "1", "HYPOTHESIS_PROFILE": "ci", "PYTHONDONTWRITEBYTECODE": "1"}
    cmd = ["nice", "-n", "10", sys.executable, "-m", "mutmut", "run", "--max-children", str(workers), *patterns]
    proc = subprocess.Popen(cmd, cwd=WORK, env=env, start_new_session=True)
    try:
        return proc.wait(timeout=None if budget_minutes is None else budget_minutes * 60)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, 2)  # SIGINT: mutmut stops its workers and keeps what it recorded
        try:
            return proc.wait(timeout=120)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 9)
            return proc.wait()


def records() -> dict[str, dict]:
    """Per source file (repository-relative): mutant name -> exit code (None: not run), from mutmut's .meta files."""
    out = {}
    for meta in sorted((WORK / "mutants" / "tmcheck").rglob("*.py.meta")):
        rel = str(meta.relative_to(WORK / "mutants" / "tmcheck"))[: -len(".meta")]
        data = json.loads(meta.read_text(encoding="utf-8"))
        out[rel] = data.get("exit_code_by_key", {})
    return out


def status(code) -> str:
    return "not run" if code is None else STATUS.get(code, "suspicious")


_DIFFS: dict[str, str] | None = None


def diff(name: str, rel: str) -> str:
    """mutmut show: the mutant as a unified diff of its function (cached per mutant and source text)."""
    global _DIFFS
    cache = WORK / "diffs.json"
    if _DIFFS is None:
        _DIFFS = json.loads(cache.read_text(encoding="utf-8")) if cache.exists() else {}
    import hashlib

    key = name + ":" + hashlib.sha1((ROOT / rel).read_bytes()).hexdigest()[:12]
    if key not in _DIFFS:
        res = subprocess.run(
            [sys.executable, "-m", "mutmut", "show", name], cwd=WORK, capture_output=True, text=True, timeout=120
        )
        _DIFFS[key] = "\n".join(res.stdout.splitlines()[1:]).strip()
        cache.write_text(json.dumps(_DIFFS), encoding="utf-8")
    return _DIFFS[key]


def select(files: list[str], sample: int, rerun: bool, seed: int) -> list[str]:
    """Mutant names to run: a seeded sample of `sample` not-yet-run mutants per file, and (rerun) the survivors and
    the mutants without tests."""
    import random

    recs, names, expl = records(), [], explanations()
    for rel in files:
        codes = recs.get(rel, {})
        todo = sorted(n for n, c in codes.items() if c is None)
        names += random.Random(f"{seed}:{rel}").sample(todo, min(sample, len(todo)))
        if rerun:
            again = (n for n, c in codes.items() if status(c) in ("survived", "no tests", "suspicious"))
            names += sorted(n for n in again if n not in expl)  # an explained equivalent mutant stays as it is
    return names


def line_of(rel: str, d: str) -> int | None:
    """The source line the diff's first removed line is on (its first occurrence in the file)."""
    removed = [ln[1:] for ln in d.splitlines() if ln.startswith("-") and not ln.startswith("---")]
    if not removed:
        return None
    lines = (ROOT / rel).read_text(encoding="utf-8").splitlines()
    want = removed[0].strip()
    for i, ln in enumerate(lines, 1):
        if ln.strip() == want:
            return i
    return None


def _without_strings(line: str) -> str:
    """The line with its string literals' contents removed (a crude tokenizer: quotes, escapes, prefixes)."""
    import re

    return re.sub(r"""([rbfuRBFU]{0,2})("([^"\\]|\\.)*"|'([^'\\]|\\.)*')""", '""', line)


_MESSAGE = ("help=", "description=", "raise ", "Error(", "print(", "warn(", "note=", "reason=", "reading=")
_NOT_MESSAGE = ("[", " in ", "==", "!=", "float(", "encoding=", "split(", "startswith(", "endswith(", "replace(")


def text_only(d: str) -> bool:
    """The mutant changes only the words of a message (a help text, an error message, a note, a line of printed
    text): only the contents of string literals, on a line that formats text (an f-string, a continuation
    string, or a message argument) and uses no string as a key, a comparison operand or a parser argument."""
    removed = [ln[1:] for ln in d.splitlines() if ln.startswith("-") and not ln.startswith("---")]
    added = [ln[1:] for ln in d.splitlines() if ln.startswith("+") and not ln.startswith("+++")]
    if not removed or len(removed) != len(added):
        return False
    for a, b in zip(removed, added, strict=True):
        if _without_strings(a) != _without_strings(b):
            return False
        if a == b:
            continue
        line = a.strip()
        message = any(m in line for m in _MESSAGE) or line.startswith(('f"', "f'", '"', "'"))
        if not message or any(n in _without_strings(line) for n in _NOT_MESSAGE):
            return False
    return True


def explanations() -> dict:
    path = OUT / "explanations.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}


def report(files: list[str]) -> dict:
    recs = records()
    expl = explanations()
    per_file, survivors, timeouts = {}, [], []
    for rel in files:
        codes = recs.get(rel, {})
        counts: dict[str, int] = {}
        for name, code in codes.items():
            counts[status(code)] = counts.get(status(code), 0) + 1
            if status(code) in ("survived", "no tests", "suspicious"):
                d = diff(name, rel)
                entry = {"file": rel, "line": line_of(rel, d), "mutant": name, "status": status(code), "diff": d}
                why = expl.get(name) or next((v for k, v in expl.items() if fnmatch.fnmatch(name, k)), None)
                if why is None and text_only(d):
                    why = {"text": "changes only the words of a message, note or label (no value, verdict or call)"}
                entry["explanation"] = why or {"pending": "not yet explained"}
                survivors.append(entry)
            if status(code) == "timeout":
                timeouts.append(name)
        ran = sum(v for k, v in counts.items() if k in DECIDED)
        det = counts.get("killed", 0) + counts.get("timeout", 0)
        per_file[rel] = {"mutants": len(codes), **counts, "ran": ran, "score": det / ran if ran else None}
    killed = sum(f.get("killed", 0) for f in per_file.values())
    detected = killed + len(timeouts)
    ran = sum(f["ran"] for f in per_file.values())
    total = sum(f["mutants"] for f in per_file.values())
    explained = [s for s in survivors if "pending" not in s["explanation"]]
    text = sum(1 for s in survivors if "text" in s["explanation"])
    equivalent = sum(1 for s in explained if "equivalent" in s["explanation"])
    credit: dict[str, int] = {}
    for s in explained:
        if "equivalent" in s["explanation"]:
            credit[s["file"]] = credit.get(s["file"], 0) + 1
    return {
        "tool": "mutmut " + _mutmut_version(),
        "targets": list(TARGETS),
        "tests": list(TESTS),
        "mutants": total,
        "ran": ran,
        "not_run": sum(f.get("not run", 0) for f in per_file.values()),
        "killed": killed,
        "timeout": len(timeouts),
        "score": detected / ran if ran else None,
        "score_killed_only": killed / ran if ran else None,
        "score_with_explained_equivalents": (detected + equivalent) / ran if ran else None,
        "score_without_text_mutants": detected / (ran - text) if ran > text else None,
        "estimated_score_all_mutants": stratified(per_file),
        "estimated_score_all_mutants_with_explained_equivalents": stratified(per_file, credit),
        "text_only_survivors": text,
        "no_tests": sum(f.get("no tests", 0) for f in per_file.values()),
        "survivors_explained": len(explained),
        "per_file": per_file,
        "survivors": survivors,
        "timeouts": timeouts,
        "generated": time.strftime("%Y-%m-%d %H:%M:%S"),
    }


def stratified(per_file: dict, credit: dict | None = None) -> dict | None:
    """The score of all the mutants, estimated from per-file samples (a stratified estimate).

    The files are strata: file f has N_f mutants, of which n_f ran (a seeded uniform sample, or all),
    d_f detected (plus credit[f], e.g. the explained equivalent survivors). The pooled score over the
    mutants that ran over-weights the files that ran in full; this weights each file's score by N_f / N:
    p = sum_f (N_f / N) p_f, with the 95% normal interval of its standard error, each stratum's variance
    taken at (d_f + 1) / (n_f + 2) (so a file at 100% still counts some uncertainty) and the finite
    population correction 1 - n_f / N_f (zero for a file that ran in full).
    """
    credit = credit or {}
    strata = [
        (c["mutants"], c["ran"], c.get("killed", 0) + c.get("timeout", 0) + credit.get(f, 0))
        for f, c in per_file.items()
        if c["mutants"]
    ]
    if not strata or any(n == 0 for _, n, _ in strata):
        return None  # a file with no mutant run: the score of its stratum is unknown
    total = sum(big for big, _, _ in strata)
    est, var = 0.0, 0.0
    for big, n, d in strata:
        w = big / total
        est += w * d / n
        q = (d + 1) / (n + 2)
        var += w * w * q * (1 - q) / n * (1 - n / big)
    half = 1.959963984540054 * var**0.5
    return {
        "estimate": est,
        "ci95": [max(0.0, est - half), min(1.0, est + half)],
        "mutants": total,
        "method": "stratified by file, weights N_f/N, normal interval, add-two variance, finite population",
    }


def _mutmut_version() -> str:
    from importlib.metadata import version

    return version("mutmut")


def _estimate_sentence(rep: dict) -> str:
    """The stratified estimate over all mutants, in words ('' when a file has no mutant run)."""
    est = rep.get("estimated_score_all_mutants")
    if not est:
        return ""
    eq = rep.get("estimated_score_all_mutants_with_explained_equivalents") or est
    lo, hi = est["ci95"]
    return (
        f" Over all {est['mutants']} mutants (each file's sample weighted by its number of mutants) the score is "
        f"estimated at {_pct(est['estimate'])} (95% interval {_pct(lo)} to {_pct(hi)}; {est['method']}), "
        f"{_pct(eq['estimate'])} ({_pct(eq['ci95'][0])} to {_pct(eq['ci95'][1])}) with the explained equivalents."
    )


def survivors_md(rep: dict) -> str:
    lines = [
        "# Surviving mutants",
        "",
        f"Generated by `tools/mutation.py` ({rep['tool']}, {rep['generated']}) from mutation/report.json. "
        f"{rep['ran']} of {rep['mutants']} mutants ran; score {_pct(rep['score'])} "
        f"(killed or timed out over those that ran; {_pct(rep['score_killed_only'])} killed only; "
        f"{_pct(rep['score_with_explained_equivalents'])} counting the explained equivalent mutants as killed)."
        + _estimate_sentence(rep),
        "",
        "| file | mutants | ran | killed | timeout | survived | no tests | score |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for f, c in rep["per_file"].items():
        lines.append(
            f"| `{f}` | {c['mutants']} | {c['ran']} | {c.get('killed', 0)} | {c.get('timeout', 0)} "
            f"| {c.get('survived', 0)} | {c.get('no tests', 0)} | {_pct(c['score'])} |"
        )
    lines += ["", "## Survivors", ""]
    for s in rep["survivors"]:
        e = s["explanation"]
        why = (
            e.get("equivalent")
            and f"equivalent: {e['equivalent']}"
            or e.get("killed_by")
            and f"killed by {e['killed_by']}"
            or e.get("text")
            and f"text only: {e['text']}"
        )
        lines += [f"### `{s['mutant']}` ({s['file']}:{s['line']}, {s['status']})", "", why or "not yet explained", ""]
        lines += ["```diff", s["diff"], "```", ""]
    return "\n".join(lines) + "\n"


def _pct(x) -> str:
    return "–" if x is None else f"{100 * x:.1f}%"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", nargs="*", help="source files (repository-relative globs) instead of every target")
    ap.add_argument("--workers", type=int, default=1, help="mutmut worker processes (default 1)")
    ap.add_argument("--budget-minutes", type=float, default=None, help="stop mutmut after this long (resumable)")
    ap.add_argument("--sample", type=int, default=0, help="run a seeded sample of this many new mutants per file")
    ap.add_argument("--rerun", action="store_true", help="run the survivors and the mutants without tests again")
    ap.add_argument("--seed", type=int, default=0, help="the sample's seed")
    ap.add_argument("--report-only", action="store_true", help="write the report from the recorded results only")
    ap.add_argument("--fresh", action="store_true", help="discard recorded results and start over")
    args = ap.parse_args(argv)
    files = targets(args.files)
    if not files:
        print("tools/mutation.py: no source file matches", file=sys.stderr)
        return 2
    if not args.report_only:
        if args.fresh and WORK.exists():
            shutil.rmtree(WORK)
        prepare(targets(None))  # every target is mutated; --files selects which mutants run
        if args.sample or args.rerun:
            patterns = select(files, args.sample, args.rerun, args.seed)
        else:
            patterns = [f"tmcheck.{f[:-3].replace('/', '.')}.*" for f in files] if args.files else []
        if patterns or not (args.sample or args.rerun):
            rc = run(args.workers, args.budget_minutes, patterns)
            print(f"tools/mutation.py: mutmut exited with {rc}", file=sys.stderr)
        else:
            print("tools/mutation.py: nothing to run", file=sys.stderr)
    rep = report(targets(None))
    OUT.mkdir(exist_ok=True)
    (OUT / "report.json").write_text(json.dumps(rep, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    (OUT / "SURVIVORS.md").write_text(survivors_md(rep), encoding="utf-8")
    print(f"mutation score {_pct(rep['score'])} over {rep['ran']} of {rep['mutants']} mutants (mutation/report.json)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
