"""Settings of a preset given as text, `FIELD=VALUE` (the CLI's repeatable `--set`), after spaCy's
config overrides (`--set training.lr=0.001`).

A field is named by its dotted path in the preset's dataclasses (`noise`, `model.n_layer` for the
GPT of a pretraining preset); its value is read by the field's declared type (tmcheck.empirics.schema's
bounds included): a number or a word, a list as `1,2,4` (`''` the empty list, for a field whose default
is empty), `none` for a field that may be None. An unknown field is one line naming it and the fields
that can be set; the preset with every setting applied is validated as a whole (`Preset.with_overrides`).

Library: nothing here knows the CLI. `settable(preset)` lists the fields, `parse(preset, items)` reads
the settings, `apply(preset, items)` returns the new preset.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import types
import typing
from collections.abc import Sequence
from typing import Any

from pydantic import TypeAdapter, ValidationError

from tmcheck.empirics.schema import SchemaError

NOT_SETTABLE = ("name", "notes")  # a preset changed by settings is named '<name>-custom'; notes are words
SCALARS = (int, float, str, bool)


def _strip(tp: Any) -> tuple[Any, bool]:
    """(the type without `| None`, whether None is allowed)."""
    inner = typing.get_origin(tp)
    if inner is typing.Annotated:
        base, optional = _strip(typing.get_args(tp)[0])
        return (typing.Annotated[(base, *tp.__metadata__)] if not optional else base), optional
    if inner in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        if len(args) == 1 and len(typing.get_args(tp)) == 2:
            return args[0], True
    return tp, False


def _base(tp: Any) -> Any:
    """The type under Annotated."""
    return typing.get_args(tp)[0] if typing.get_origin(tp) is typing.Annotated else tp


def _kind(tp: Any) -> str | None:
    """'scalar', 'list' (tuple[scalar, ...]) or None (not settable from text: nested tuples, records)."""
    base = _base(_strip(tp)[0])
    if base in SCALARS or typing.get_origin(base) is typing.Literal:
        return "scalar"
    if typing.get_origin(base) is tuple:
        args = typing.get_args(base)
        if len(args) == 2 and args[1] is Ellipsis and _kind(args[0]) == "scalar":
            return "list"
    return None


@functools.cache
def _fields_of(cls: type) -> dict[str, tuple[Any, bool]]:
    """Dotted path -> (declared type, whether '' may set the empty list) of every settable field of a
    dataclass (nested dataclasses opened). The empty list only where the field's default is empty (a
    grid that is never empty by default, such as `dims`, is refused empty)."""
    hints = typing.get_type_hints(cls, include_extras=True)
    out: dict[str, tuple[Any, bool]] = {}
    for f in dataclasses.fields(cls):
        if f.name in NOT_SETTABLE or not f.init:
            continue
        tp = hints[f.name]
        sub = _base(_strip(tp)[0])
        if dataclasses.is_dataclass(sub) and isinstance(sub, type):
            out.update({f"{f.name}.{k}": v for k, v in _fields_of(sub).items()})
        elif _kind(tp) is not None:
            out[f.name] = (tp, f.default == ())
    return out


def settable(preset: Any) -> dict[str, Any]:
    """The fields `--set` can change on this preset (or preset class): dotted path -> declared type."""
    return {k: tp for k, (tp, _) in _fields_of(preset if isinstance(preset, type) else type(preset)).items()}


def type_words(tp: Any) -> str:
    """A declared type in a few words, for help texts: int, float, str, bool, list of int, ..."""
    inner, optional = _strip(tp)
    base = _base(inner)
    if typing.get_origin(base) is tuple:
        words = f"list of {type_words(typing.get_args(base)[0])}"
    elif typing.get_origin(base) is typing.Literal:
        words = "|".join(map(str, typing.get_args(base)))
    else:
        words = getattr(base, "__name__", str(base))
    return words + (" or none" if optional else "")


def _read(path: str, text: str, tp: Any, empty_ok: bool = False) -> Any:
    """`text` read as a value of the declared type `tp`; SchemaError names the field."""
    inner, optional = _strip(tp)
    if optional and text.strip().lower() in ("none", "null"):
        return None
    if _kind(inner) == "list":
        item = typing.get_args(_base(inner))[0]
        parts = [p.strip() for p in text.split(",")]
        if parts == [""]:
            if not empty_ok:
                raise SchemaError(f"--set {path}: empty list (this field is never empty)")
            return ()
        if "" in parts:
            raise SchemaError(f"--set {path}: empty item in {text!r}")
        return tuple(_read(path, p, item) for p in parts)
    try:
        value = TypeAdapter(inner).validate_python(text.strip(), strict=False)
    except ValidationError as exc:
        first = exc.errors()[0]
        msg = first["msg"].removeprefix("Value error, ").replace("Input should be", "expected")
        raise SchemaError(f"--set {path}: {msg}, got {text!r}") from None
    if isinstance(value, float) and not math.isfinite(value):
        raise SchemaError(f"--set {path}: {text!r} is not finite")
    return value


def parse(preset: Any, items: Sequence[str]) -> dict[str, Any]:
    """`FIELD=VALUE` items as {dotted path: value}, each read by its field's type (the last of a field wins)."""
    fields = _fields_of(preset if isinstance(preset, type) else type(preset))
    out: dict[str, Any] = {}
    for item in items:
        path, eq, text = item.partition("=")
        path = path.strip()
        if not eq or not path:
            raise SchemaError(f"--set {item!r}: expected FIELD=VALUE, e.g. --set noise=0.1")
        if path not in fields:
            kind = getattr(preset, "kind", "") or type(preset).__name__
            raise SchemaError(f"--set: unknown field {path!r} of a {kind} preset; settable: {', '.join(fields)}")
        out[path] = _read(path, text, *fields[path])
    return out


def _nested(obj: Any, path: list[str], value: Any) -> Any:
    """`obj` (a dataclass) with the field at `path` replaced."""
    head, *rest = path
    return dataclasses.replace(obj, **{head: _nested(getattr(obj, head), rest, value) if rest else value})


def apply(preset: Any, items: Sequence[str]) -> Any:
    """The preset with the `FIELD=VALUE` settings applied, validated as a whole (`with_overrides`);
    named '<name>-custom' when the settings change it, the preset itself when they do not."""
    values = parse(preset, items)
    top: dict[str, Any] = {}
    for path, value in values.items():
        head, *rest = path.split(".")
        top[head] = _nested(top.get(head, getattr(preset, head)), rest, value) if rest else value
    if not top:
        return preset
    unset = {k: v for k, v in top.items() if v is None}  # with_overrides skips None values
    base = dataclasses.replace(preset, **unset) if unset else preset
    p = base.with_overrides(**{k: v for k, v in top.items() if v is not None})
    if p != preset:
        p = p.with_overrides(name=f"{preset.name}-custom")
    return p
