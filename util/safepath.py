"""Output paths under a directory the user named, resolved component by component (#43).

Every file tmcheck writes lies under a root the user named: a run's `--out`, a sweep directory, an
export directory, a data directory, a report's directory. Below that root no component may be a
symbolic link, not only the last one: `OUT/data -> elsewhere` would otherwise put the token shards
(and replace files of those names) in `elsewhere`. A component that exists must be a directory
(except the last), and no part may be empty, absolute, `.` or `..`. A link AT the root is the
caller's decision (`train --out` refuses one, a sweep directory given as a link is followed).

- `below(root, *parts)`: root/parts, checked; ValueError naming the first linked component.
- `makedirs(root, *parts)`: the same, then every missing directory created one at a time, each
  checked again after its mkdir (a link planted meanwhile is refused, never followed).
- `inside(root, path)`: `path` (which must lie under root) checked the same way.

The atomic writer (tmcheck.util.atomic) never writes through a link at the last component; this
rule covers the components above it.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path, PurePath


class LinkRefused(ValueError):
    """A component below the user's root is a symbolic link (or not a directory)."""


def _components(parts) -> list[str]:
    out = []
    for part in parts:
        pure = PurePath(part)
        if pure.is_absolute():
            raise ValueError(f"{part} is an absolute path; an output path lies under the directory given")
        for c in pure.parts:
            if c in ("", ".", ".."):
                raise ValueError(f"{part} leaves the directory it must lie under (it holds {c!r})")
            out.append(c)
    return out


def _check(path: Path, last: bool) -> bool:
    """Whether `path` exists; LinkRefused when it is a link, or (not last) exists and is no directory."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return False
    if stat.S_ISLNK(st.st_mode):
        raise LinkRefused(f"{path} is a symbolic link; tmcheck never writes through one (remove it)")
    if not last and not stat.S_ISDIR(st.st_mode):
        raise LinkRefused(f"{path} exists and is not a directory")
    return True


def below(root: Path | str, *parts: str | PurePath) -> Path:
    """root/parts, refused (LinkRefused) when any existing component below root is a symbolic link or
    an existing non-last component is not a directory."""
    path = Path(root)
    names = _components(parts)
    for i, name in enumerate(names):
        path = path / name
        if not _check(path, last=i == len(names) - 1):
            return Path(root).joinpath(*names)  # the rest does not exist yet
    return path


def inside(root: Path | str, path: Path | str) -> Path:
    """`path`, which lies under `root` (lexically), checked by `below`."""
    root, path = Path(root), Path(path)
    try:
        rel = path.relative_to(root)
    except ValueError:
        raise ValueError(f"{path} does not lie under {root}") from None
    return below(root, rel) if rel.parts else path


def makedirs(root: Path | str, *parts: str | PurePath) -> Path:
    """root/parts as a directory: the root created with its parents if absent (the user named it),
    each component below it created one at a time, refused (LinkRefused) at a link."""
    root = Path(root)
    if root.is_symlink() and not root.is_dir():
        raise LinkRefused(f"{root} is a symbolic link to no directory")
    root.mkdir(parents=True, exist_ok=True)
    path = root
    for name in _components(parts):
        path = path / name
        if not _check(path, last=False):
            try:
                os.mkdir(path)  # never follows a link at `path`
            except FileExistsError:
                pass
            _check(path, last=False)  # a link planted between the check and the mkdir
    return path
