"""Mutation testing of theory/ and proofs_check/ with mutmut (`make mutation`; DESIGN.md, "every check can fail").

mutmut (>= 3) mutates the functions of every file of theory/ (theory/lemmas/ included) and proofs_check/ and runs,
per mutant, the tests of a fast subset (tests/theory and tests/proofs_check, the registry's verdicts one test per
obligation, `slow` excluded) that reach the mutated function. A mutant is killed when a test fails (a pinned
verdict that changes fails its test), survives otherwise.

The package's folders are mapped into the `tmcheck` namespace (pyproject.toml), which mutmut's copy of the tree
does not know; so the run happens in a work directory laid out as the import sees it (tmcheck/theory, ...,
tests/), configured by its own setup.cfg, and mutmut's copies take precedence on sys.path there.

    python tools/mutation.py                       # every target; resumes a run left unfinished
    python tools/mutation.py --files theory/bounds.py --budget-minutes 60
    python tools/mutation.py --sample 40 --rerun   # 40 more mutants per file, and the survivors again
    python tools/mutation.py --report-only         # mutation/report.json and SURVIVORS.md from what ran
    python tools/mutation.py --holdout 320 --seed 7 --commit HEAD   # a held-out sample (below)

The held-out score (#41 item 4). The mutants an earlier run drew were the ones the tests were then written
against, so the pooled score over them is biased upward. `--holdout K` draws, after the tests were written, a fresh
seeded sample of K mutants over the whole tree from a tree exported from one commit (`--commit`; a clean snapshot,
whatever is being edited in the working tree): each file gets its share of K in proportion to its number of
mutants, at least one, so every file is represented. The names, seed, commit and date go to
mutation/holdout.json before any of them runs; the report gives their score with its Clopper-Pearson (exact
binomial) 95% interval beside the pooled score, and the pooled figures of the run before the held-out one are kept
in the report as they were.

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
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "mutation"
WORK = OUT / ".work"  # ignored (mutation/.gitignore)
PACKAGES = ("theory", "proofs_check", "cli", "empirics", "util")
TARGETS = ("theory/*.py", "theory/lemmas/*.py", "proofs_check/*.py")
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


def snapshot(commit: str) -> tuple[Path, str]:
    """The tree of one commit, exported (git archive) into mutation/.work/snapshot; with its full hash."""
    full = subprocess.run(["git", "rev-parse", commit], cwd=ROOT, capture_output=True, text=True, check=True)
    sha = full.stdout.strip()
    dst = WORK / "snapshot"
    if dst.exists():
        shutil.rmtree(dst)
    dst.mkdir(parents=True)
    tar = subprocess.run(["git", "archive", sha], cwd=ROOT, capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(dst)], input=tar, check=True)
    return dst, sha


def prepare(files: list[str], src: Path = ROOT) -> None:
    """The work directory: tmcheck/<package> copies of the sources of src (refreshed), tests/, and setup.cfg."""
    pkg = WORK / "tmcheck"
    pkg.mkdir(parents=True, exist_ok=True)
    for name in PACKAGES:
        dst = pkg / name
        if dst.exists():
            shutil.rmtree(dst)
        shutil.copytree(src / name, dst, ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("tests", "docs", "tools"):  # the tests read the generated docs pages and their generators
        if (WORK / name).exists():
            shutil.rmtree(WORK / name)
        shutil.copytree(src / name, WORK / name, ignore=shutil.ignore_patterns("__pycache__", ".work"))
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
    shutil.copy(src / "pyproject.toml", WORK / "pyproject.toml")


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


GENERATE = """
import os
from pathlib import Path
import mutmut.__main__ as m
m.set_mutant_under_test("mutant_generation")
os.makedirs(Path("mutants"), exist_ok=True)
m.copy_src_dir()
m.copy_also_copy_files()
m.setup_source_paths()
m.create_mutants(1)
m.state()  # noqa: B018
"""


def generate() -> None:
    """Write every mutant (mutmut's generation step alone, no test run), so that records() lists them all."""
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    subprocess.run([sys.executable, "-c", GENERATE], cwd=WORK, env=env, check=True, capture_output=True)


def draw_holdout(size: int, seed: int, commit: str) -> dict:
    """A seeded sample of `size` mutants over every target file, each file's share in proportion to its number
    of mutants (largest remainders), at least one per file with mutants: every file is represented."""
    import random

    recs = {rel: sorted(codes) for rel, codes in records().items() if codes and rel in targets(None)}
    total = sum(len(v) for v in recs.values())
    if total == 0:
        raise SystemExit("tools/mutation.py: no mutants were generated")
    quota = {rel: size * len(v) / total for rel, v in recs.items()}
    share = {rel: max(1, int(q)) for rel, q in quota.items()}
    for rel in sorted(quota, key=lambda r: quota[r] - int(quota[r]), reverse=True):
        if sum(share.values()) >= size:
            break
        share[rel] += 1
    share = {rel: min(c, len(recs[rel])) for rel, c in share.items()}
    names = {
        rel: sorted(random.Random(f"holdout:{seed}:{rel}").sample(v, min(share[rel], len(v))))
        for rel, v in recs.items()
    }
    return {
        "seed": seed,
        "commit": commit,
        "drawn": time.strftime("%Y-%m-%d %H:%M:%S"),
        "size": sum(len(v) for v in names.values()),
        "population": total,
        "method": "stratified by file in proportion to its mutants (largest remainders, at least one per file), "
        "seeded uniform within each file, drawn after the tests were written",
        "names": names,
    }


RESULTS = OUT / "holdout_results.json"
SURVIVING = ("survived", "no tests", "suspicious")


def holdout_results(hold: dict, recs: dict) -> dict:
    """Each held-out mutant's outcome, kept in mutation/holdout_results.json (committed): mutmut's records live in
    the ignored work directory, which a later sitting on another machine does not have, so a sample run over
    several sittings resumes from this file. An outcome recorded now replaces the kept one."""
    kept = json.loads(RESULTS.read_text(encoding="utf-8")) if RESULTS.exists() else {}
    for rel, names in hold["names"].items():
        for n in names:
            st = status(recs.get(rel, {}).get(n))
            if st != "not run":
                kept[n] = {"file": rel, "status": st} | ({"diff": diff(n, rel)} if st in SURVIVING else {})
    return kept


def _why(name: str, entry: dict, by_name: dict, expl: dict) -> dict:
    if name in by_name:
        return by_name[name]["explanation"]
    why = expl.get(name) or next((v for k, v in expl.items() if fnmatch.fnmatch(name, k)), None)
    if why is None and text_only(entry.get("diff", "")):
        why = {"text": "changes only the words of a message, note or label (no value, verdict or call)"}
    return why or {"pending": "not yet explained"}


def holdout_summary(hold: dict, results: dict, survivors: list[dict]) -> dict:
    """The held-out sample's score with its Clopper-Pearson interval, per file, and its survivors by class."""
    from scipy.stats import binomtest

    by_name, expl = {s["mutant"]: s for s in survivors}, explanations()
    counts, per_file, left = {}, {}, []
    for rel, names in hold["names"].items():
        row = {"drawn": len(names)}
        for n in names:
            st = results.get(n, {}).get("status", "not run")
            counts[st] = counts.get(st, 0) + 1
            row[st] = row.get(st, 0) + 1
            if st in SURVIVING:
                left.append({"mutant": n, "explanation": _why(n, results[n], by_name, expl)})
        per_file[rel] = row
    ran = sum(v for k, v in counts.items() if k in DECIDED)
    detected = counts.get("killed", 0) + counts.get("timeout", 0)
    ci = binomtest(detected, ran).proportion_ci(0.95, method="exact") if ran else None
    classes: dict[str, int] = {}
    for e in left:
        key = next(iter(e["explanation"]))
        classes[key] = classes.get(key, 0) + 1
    return {
        **{k: hold[k] for k in ("seed", "commit", "drawn", "size", "population", "method")},
        "ran": ran,
        "not_run": counts.get("not run", 0),
        "detected": detected,
        "counts": counts,
        "score": detected / ran if ran else None,
        "ci95": [ci.low, ci.high] if ci else None,
        "interval": "Clopper-Pearson (exact binomial), 95%",
        "files": len(per_file),
        "files_with_a_run": sum(1 for r in per_file.values() if any(k in DECIDED for k in r)),
        "survivor_classes": classes,
        "per_file": per_file,
        "survivors": [e["mutant"] for e in left],
    }


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
    return re.sub(r"""([rbfuRBFU]{0,2})("([^"\\]|\\.)*"|'([^'\\]|\\.)*')""", '""', line)


_MESSAGE = ("help=", "description=", "raise ", "Error(", "print(", "warn(", "note=", "reason=", "reading=")
_NOT_MESSAGE = ("[", " in ", "==", "!=", "float(", "encoding=", "split(", "startswith(", "endswith(", "replace(")


_KEY = re.compile(r"""("([^"\\]|\\.)*"|'([^'\\]|\\.)*')\s*:(?!=)""")  # a string followed by ':' (a key)
_FIELD = re.compile(r"\{[^{}]*\}")  # an f-string's replacement field: an expression and its format spec


def _fields(line: str) -> list[str]:
    """The replacement fields of the f-strings on a line (what a rounding or a shown value changes)."""
    out = []
    for m in re.finditer(r"""[fF][rR]?("([^"\\]|\\.)*"|'([^'\\]|\\.)*')""", line):
        out += _FIELD.findall(m.group(1))
    return out


def text_only(d: str) -> bool:
    """The mutant changes only the words of a message (a help text, an error message, a note, a line of printed
    text): only the contents of string literals, on a line that formats text (an f-string, a continuation
    string, or a message argument) and uses no string as a key, a comparison operand or a parser argument.
    A changed key of a dict (a JSON field) or a changed replacement field of an f-string (the value shown, or
    its rounding: `{x:.3f}`) is an output change, not text."""
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
        if _KEY.search(a) or _KEY.search(b) or _fields(a) != _fields(b):
            return False
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
    hold_path = OUT / "holdout.json"
    held = None
    if hold_path.exists():
        hold = json.loads(hold_path.read_text(encoding="utf-8"))
        results = holdout_results(hold, recs)
        RESULTS.write_text(json.dumps(results, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        held = holdout_summary(hold, results, survivors)
    return {
        "holdout": held,
        "earlier": earlier(),
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


EARLIER_KEYS = ("tool", "generated", "targets", "mutants", "ran", "killed", "timeout", "score", "score_killed_only")


def earlier() -> dict | None:
    """The pooled figures of the run before the held-out sample (kept from the committed report as they were)."""
    path = OUT / "report.json"
    if not path.exists():
        return None
    old = json.loads(path.read_text(encoding="utf-8"))
    if "earlier" in old:
        return old["earlier"]
    return {k: old.get(k) for k in EARLIER_KEYS} | {"note": "pooled over the mutants drawn while tests were added"}


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


def run_holdout(size: int, seed: int, commit: str, workers: int, budget_minutes: float | None) -> int:
    """Mutate a clean export of `commit`, draw the held-out sample once (mutation/holdout.json; a later call with
    the same seed and commit resumes it) and run its mutants."""
    src, sha = snapshot(commit)
    prepare(targets(None), src)
    generate()
    path = OUT / "holdout.json"
    hold = json.loads(path.read_text(encoding="utf-8")) if path.exists() else None
    if hold is None or (hold["seed"], hold["commit"], hold["size"] >= size) != (seed, sha, True):
        hold = draw_holdout(size, seed, sha)
        OUT.mkdir(exist_ok=True)
        path.write_text(json.dumps(hold, indent=1) + "\n", encoding="utf-8")
    recs, done = records(), json.loads(RESULTS.read_text(encoding="utf-8")) if RESULTS.exists() else {}
    todo = [
        n for rel, names in hold["names"].items() for n in names if recs.get(rel, {}).get(n) is None and n not in done
    ]
    print(f"tools/mutation.py: held-out sample of {hold['size']} at {sha[:10]}, {len(todo)} to run", file=sys.stderr)
    return run(workers, budget_minutes, todo) if todo else 0


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
    ap.add_argument("--holdout", type=int, default=0, help="draw (or resume) a held-out sample of this many mutants")
    ap.add_argument("--commit", default="HEAD", help="with --holdout: the commit whose tree is mutated")
    args = ap.parse_args(argv)
    files = targets(args.files)
    if not files:
        print("tools/mutation.py: no source file matches", file=sys.stderr)
        return 2
    if args.holdout and not args.report_only:
        if args.fresh and WORK.exists():
            shutil.rmtree(WORK)
        rc = run_holdout(args.holdout, args.seed, args.commit, args.workers, args.budget_minutes)
        print(f"tools/mutation.py: mutmut exited with {rc}", file=sys.stderr)
    elif not args.report_only:
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
