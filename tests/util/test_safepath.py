"""tmcheck.util.safepath: a link at any component below the root is refused, at every depth, and
nothing is created through it; a path without links is returned unchanged."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tmcheck.util import safepath


def plant(root: Path, parts: list[str], at: int, target: Path) -> Path:
    """root/parts with a link (to target) at component `at`, the components above it created."""
    path = root.joinpath(*parts[:at])
    path.mkdir(parents=True, exist_ok=True)
    link = path / parts[at]
    link.symlink_to(target, target_is_directory=True)
    return link


@pytest.mark.parametrize("at", [0, 1, 2])
def test_a_link_at_any_component_is_refused(tmp_path, at):
    target = tmp_path / "elsewhere"
    target.mkdir()
    root, parts = tmp_path / "root", ["a", "b", "file.json"]
    link = plant(root, parts, at, target)
    with pytest.raises(safepath.LinkRefused, match=f"{link} is a symbolic link"):
        safepath.below(root, *parts)
    with pytest.raises(ValueError, match="symbolic link"):
        safepath.inside(root, root.joinpath(*parts))
    if at < 2:
        with pytest.raises(safepath.LinkRefused):
            safepath.makedirs(root, *parts[:2])
    assert list(target.iterdir()) == []  # nothing created through the link
    link.unlink()  # mutation: without the link the same call passes
    assert safepath.below(root, *parts) == root.joinpath(*parts)
    assert safepath.makedirs(root, "a", "b").is_dir()


def test_a_link_at_the_root_itself_is_the_callers_choice(tmp_path):
    (tmp_path / "real").mkdir()
    (tmp_path / "root").symlink_to(tmp_path / "real")
    assert safepath.makedirs(tmp_path / "root", "x") == tmp_path / "root" / "x"
    assert (tmp_path / "real" / "x").is_dir()


def test_parts_that_leave_the_root_are_refused(tmp_path):
    for bad in ("..", "a/../b", "/etc/passwd"):
        with pytest.raises(ValueError):
            safepath.below(tmp_path, bad)
    (tmp_path / "f").write_text("x")
    with pytest.raises(safepath.LinkRefused, match="not a directory"):
        safepath.below(tmp_path, "f", "g")
    with pytest.raises(ValueError, match="does not lie under"):
        safepath.inside(tmp_path / "a", tmp_path / "b")


@given(st.lists(st.sampled_from(["a", "b", "c"]), min_size=1, max_size=4), st.data())
def test_below_refuses_exactly_when_some_existing_component_is_a_link(tmp_path_factory, parts, data):
    root = tmp_path_factory.mktemp("r")
    target = tmp_path_factory.mktemp("t")
    at = data.draw(st.one_of(st.none(), st.integers(0, len(parts) - 1)))
    if at is None:
        root.joinpath(*parts[:-1]).mkdir(parents=True, exist_ok=True)
        assert safepath.below(root, *parts) == root.joinpath(*parts)
    else:
        plant(root, parts, at, target)
        with pytest.raises(safepath.LinkRefused):
            safepath.below(root, *parts)
