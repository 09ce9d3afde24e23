"""Dependencies: pyproject.toml holds compatible ranges, so tmcheck installs beside
other research code; constraints.txt (the lock `make` applies) pins every one of them exactly, inside
its range, with torch at the CPU wheel 2.13.0."""

from __future__ import annotations

import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[2]
# Pinned on purpose: the benchmark compares against this exact release of the anchor.
EXACT_ON_PURPOSE = {"scikit-dimension"}


def read_lock(text: str) -> dict[str, Version]:
    pins = {}
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            req = Requirement(line)
            (spec,) = req.specifier
            assert spec.operator == "==", f"lock line is not an exact pin: {line}"
            pins[canonicalize_name(req.name)] = Version(spec.version)
    return pins


def lock_problems(project: dict, pins: dict[str, Version]) -> list[str]:
    """Each runtime and extra requirement: a range (not a pin) in pyproject, an exact pin in the lock
    that the range admits. Returns one line per violation."""
    problems = []
    reqs = [(None, r) for r in project["dependencies"]]
    reqs += [(x, r) for x, rs in project.get("optional-dependencies", {}).items() for r in rs]
    for extra, line in reqs:
        req = Requirement(line)
        name = canonicalize_name(req.name)
        where = f"[{extra}] {line}" if extra else line
        if extra is None and any(s.operator == "==" for s in req.specifier):
            problems.append(f"{where}: an exact pin in the runtime dependencies")
        if name not in pins:
            problems.append(f"{where}: not pinned in constraints.txt")
        elif not req.specifier.contains(pins[name], prereleases=True):
            problems.append(f"{where}: lock pins {pins[name]}, outside the range")
    return problems


def floor_problems(project: dict, floors: dict[str, Version]) -> list[str]:
    """Each runtime and dev requirement's `>=` floor is the version pinned in .ci/floors.txt (the
    versions the suite was run with), torch excepted (only its CPU wheel is on this machine)."""
    problems = []
    for line in [*project["dependencies"], *project["optional-dependencies"]["dev"]]:
        req = Requirement(line)
        name = canonicalize_name(req.name)
        lows = [Version(s.version) for s in req.specifier if s.operator == ">="]
        if name == "torch":
            continue
        if not lows:
            problems.append(f"{line}: no floor")
        elif floors.get(name) != lows[0]:
            problems.append(f"{line}: .ci/floors.txt pins {floors.get(name)}")
    return problems


def _project() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def _pins() -> dict[str, Version]:
    return read_lock((ROOT / "constraints.txt").read_text())


def test_lock_pins_every_requirement_inside_its_range():
    assert lock_problems(_project(), _pins()) == []


def test_torch_is_the_cpu_wheel_and_numpy_admits_dadapy():
    pins = _pins()
    assert pins["torch"] == Version("2.13.0")
    numpy = next(Requirement(r) for r in _project()["dependencies"] if r.startswith("numpy"))
    assert numpy.specifier.contains("1.26.4"), "dadapy 0.3.4 needs numpy<2"


def test_license_is_an_spdx_expression():
    assert _project()["license"] == "MIT"


def test_mutated_lock_or_ranges_are_caught():
    project, pins = _project(), _pins()
    assert any("outside the range" in p for p in lock_problems(project, {**pins, "numpy": Version("1.25.2")}))
    del pins["submitit"]
    assert any("submitit" in p and "not pinned" in p for p in lock_problems(project, pins))
    pinned = {**project, "dependencies": [*project["dependencies"], "rich==15.0.0"]}
    assert any("exact pin" in p for p in lock_problems(pinned, _pins()))


def test_floors_are_the_tested_versions():
    floors = read_lock((ROOT / ".ci" / "floors.txt").read_text())
    assert floor_problems(_project(), floors) == []
    assert floors["numpy"] < Version("2"), "the floors venv is the numpy<2 world of dadapy"
    lowered = {**floors, "scikit-learn": Version("1.3.2")}
    assert any("scikit-learn" in p for p in floor_problems(_project(), lowered))


def test_only_deliberate_exact_pins_in_extras():
    for extra, reqs in _project()["optional-dependencies"].items():
        for line in reqs:
            req = Requirement(line)
            if any(s.operator == "==" for s in req.specifier):
                assert canonicalize_name(req.name) in EXACT_ON_PURPOSE, f"[{extra}] {line}"
