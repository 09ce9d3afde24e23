"""The one typed, versioned schema of tmcheck's files: sweep configs (and the presets inside them),
checkpoint metadata and the trainer's result.json (the runs of paper Section 3 and eq. 3-4 as data).

Every file is read through `validate(type, data, where)`: pydantic in strict JSON mode over the
declared types (dataclasses, with bounds as `Annotated` constraints), so that

- a value of the wrong type or out of its bounds is one line naming the field and what it expects
  (`config.json: preset.n_min: expected a valid integer, got 'abc'`), a `SchemaError` (a ValueError:
  exit 2 in the CLI);
- a field the type does not declare is refused (`unknown field`);
- a field added in a later version takes its declared default when an older file lacks it.

Documents carry `schema_version`. A file without one is version 1 (written before versions were
stored); `migrate` lifts an older version to the current one step by step (`MIGRATIONS`), and a file
of a newer version than this tmcheck knows is refused. Nothing here allocates tensors: checkpoint
metadata is checked (sizes bounded, the parameter count estimated against a limit) before a model
is built.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field, ValidationError, create_model

# Bounds used by the declared types of presets and records.
Count = Annotated[int, Field(ge=1)]  # a size or a number of things: at least 1
NonNegative = Annotated[int, Field(ge=0)]
PositiveFloat = Annotated[float, Field(gt=0, allow_inf_nan=False)]
NonNegativeFloat = Annotated[float, Field(ge=0, allow_inf_nan=False)]
Fraction = Annotated[float, Field(gt=0, lt=1, allow_inf_nan=False)]  # strictly between 0 and 1

CONFIG_VERSION = 2  # config.json: 1 = before `schema_version` (and, earliest, before `kind`)
RESULT_VERSION = 2  # result.json: 1 = before `schema_version` (and, earliest, before `stop`)
CHECKPOINT_META_VERSION = 1

MAX_VOCAB = 1_048_576  # a BPE vocabulary above this is refused (the trainer aborts the process)
MAX_PARAMS = 2_000_000_000  # default limit on a model built from a checkpoint (8 GB of float32)
MAX_STEPS = 10**12  # optimizer steps a stored record may claim (a million steps a second for 30 years)
MAX_TOKENS = 10**18  # tokens a stored record may claim
MAX_LAYERS, MAX_HEADS, MAX_WIDTH, MAX_CONTEXT = 4096, 4096, 1_048_576, 1_048_576  # a checkpoint's GPT shape

STRICT = ConfigDict(strict=True, extra="forbid")


class SchemaError(ValueError):
    """A file that does not fit its schema: one line naming the file, the field and what it expects."""


# ------------------------------------------------------------------------------------------ validate
@functools.cache
def _wrapper(tp: Any):
    """A strict pydantic model holding one value of type tp (its config reaches nested dataclasses)."""
    return create_model("Document", __config__=STRICT, value=(tp, ...))


def validate(tp: Any, data: Any, where: str) -> Any:
    """`data` (plain JSON values) as an instance of `tp`, or SchemaError naming the first bad field."""
    try:
        text = json.dumps(data)
    except (TypeError, ValueError) as exc:
        raise SchemaError(f"{where}: not plain JSON data ({exc})") from None
    try:
        return _wrapper(tp).model_validate_json('{"value": ' + text + "}").value
    except ValidationError as exc:
        raise SchemaError(describe(exc, where)) from None


def describe(exc: ValidationError, where: str) -> str:
    """The first error of a ValidationError as one line: where, the field's path, what it expects."""
    errors = exc.errors()
    first = errors[0]
    loc = [p for p in first["loc"] if p != "value"]
    path = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in loc).lstrip(".") or "(the document)"
    kind, msg = first["type"], first["msg"]
    if kind == "missing" or kind == "missing_keyword_only_argument" or kind == "missing_argument":
        what = "missing (required)"
    elif kind in ("extra_forbidden", "unexpected_keyword_argument"):
        what = "unknown field"
    else:
        what = msg.removeprefix("Value error, ").replace("Input should be", "expected")
        shown = repr(first.get("input"))
        what += f", got {shown[:60]}{'...' if len(shown) > 60 else ''}"
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    return f"{where}: {path}: {what}{more}"


def check(instance: Any, where: str) -> None:
    """Validate an instance built in Python (a preset with overrides) against its own declared types."""
    validate(type(instance), asdict(instance), where)


# ------------------------------------------------------------------------------------------ versions
def version_of(data: Mapping, where: str, current: int) -> int:
    """The document's schema_version (1 when absent), refused when it is newer than `current`."""
    v = data.get("schema_version", 1)
    if not isinstance(v, int) or isinstance(v, bool) or v < 1:
        raise SchemaError(f"{where}: schema_version: expected an integer >= 1, got {v!r}")
    if v > current:
        raise SchemaError(f"{where}: schema_version {v} is newer than this tmcheck reads ({current}); upgrade tmcheck")
    return v


def migrate(data: Any, where: str, current: int, steps: Mapping[int, Callable[[dict], dict]]) -> dict:
    """`data` lifted to version `current`: steps[v] takes a version-v document to version v + 1."""
    if not isinstance(data, dict):
        raise SchemaError(f"{where}: expected a JSON object, got {type(data).__name__}")
    v = version_of(data, where, current)
    doc = dict(data)
    while v < current:
        doc = steps[v](doc)
        v += 1
    doc["schema_version"] = current
    return doc


# --- config.json ----------------------------------------------------------------------------------
def _config_1_to_2(doc: dict) -> dict:
    """Version 1 sweeps of the earliest releases had no kind: only pretraining sweeps existed then."""
    if "kind" not in doc and "corpora" in doc:
        doc["kind"] = "pretrain"
    return doc


CONFIG_MIGRATIONS = {1: _config_1_to_2}


@functools.cache
def config_model(preset_class: type):
    """The schema of a sweep's config.json for one preset class: schema_version, kind, the preset, and
    the sweep's other settings that the preset class declares in `config_options`."""
    options = {name: (tp, ...) for name, tp in getattr(preset_class, "config_options", {}).items()}
    return create_model(
        f"{preset_class.__name__}Config",
        __config__=STRICT,
        schema_version=(Literal[CONFIG_VERSION], ...),
        kind=(Literal[preset_class.kind], ...),
        preset=(preset_class, ...),
        **options,
    )


def load_config(data: Any, where: str, preset_class: Callable[[str], type]):
    """A config.json (any version) as its validated model: `.preset` the preset object, and
    `model_dump(mode="json")` the config with every default filled in (what a sweep compares)."""
    doc = migrate(data, where, CONFIG_VERSION, CONFIG_MIGRATIONS)
    kind = doc.get("kind")
    if not isinstance(kind, str):
        raise SchemaError(f"{where}: kind: missing (required): the sweep kind, e.g. pretrain")
    try:
        model = config_model(preset_class(kind))
        return model.model_validate_json(json.dumps(doc))
    except ValidationError as exc:
        raise SchemaError(describe(exc, where)) from None


# --- checkpoint metadata --------------------------------------------------------------------------
@dataclass(frozen=True)
class GPTShape:
    """The model_config a checkpoint of our GPT stores (the fields of tmcheck.empirics.lm.gpt.GPTConfig),
    bounded so that a hostile file cannot make tmcheck allocate what it does not hold."""

    vocab_size: Annotated[int, Field(ge=1, le=MAX_VOCAB)] = 1024
    block_size: Annotated[int, Field(ge=1, le=MAX_CONTEXT)] = 128
    n_layer: Annotated[int, Field(ge=1, le=MAX_LAYERS)] = 4
    n_head: Annotated[int, Field(ge=1, le=MAX_HEADS)] = 4
    n_embd: Annotated[int, Field(ge=1, le=MAX_WIDTH)] = 128
    dropout: Annotated[float, Field(ge=0, lt=1, allow_inf_nan=False)] = 0.0

    def __post_init__(self):
        if self.n_embd % self.n_head:
            raise ValueError(f"n_embd={self.n_embd} is not divisible by n_head={self.n_head}")

    def params(self) -> int:
        """Every parameter of the GPT this shape builds: token and position embeddings, per block
        12 C^2 + 13 C, the final LayerNorm 2 C (the output head is tied to the token embedding)."""
        C = self.n_embd
        return (self.vocab_size + self.block_size) * C + self.n_layer * (12 * C * C + 13 * C) + 2 * C


@dataclass(frozen=True)
class CheckpointMeta:
    """`meta` of a checkpoint written by the trainer for one language-model run."""

    model_config: GPTShape
    schema_version: Annotated[int, Field(ge=1, le=CHECKPOINT_META_VERSION)] = CHECKPOINT_META_VERSION
    n: NonNegative | None = None
    seed: int | None = None
    corpus: str | None = None
    init_from: str | None = None


def check_model_size(shape: GPTShape, tensor_elements: int | None, where: str, max_params: int = MAX_PARAMS) -> int:
    """The parameter count of `shape`, refused (SchemaError) over `max_params` or when it differs from
    the elements the file holds (`tensor_elements`, None: not known): nothing is allocated first."""
    n = shape.params()
    if n > max_params:
        raise SchemaError(
            f"{where}: model_config describes {n:,} parameters, over the limit of {max_params:,} "
            f"(--max-params raises it)"
        )
    if tensor_elements is not None and tensor_elements != n:
        raise SchemaError(
            f"{where}: model_config describes {n:,} parameters, but the file holds {tensor_elements:,} weights"
        )
    return n


# --- dataset.json ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class DatasetSpecRecord:
    """The DatasetSpec a prepared dataset was built from (tmcheck.empirics.data.tokens.DatasetSpec)."""

    corpus: str
    vocab_size: Annotated[int, Field(ge=258, le=MAX_VOCAB)] = 1024
    max_train_tokens: Annotated[int, Field(ge=1, le=MAX_TOKENS)] = 10**9
    max_eval_tokens: Annotated[int, Field(ge=1, le=MAX_TOKENS)] = 200_000
    min_test_docs: NonNegative = 0
    tokenizer_bytes: Count = 4_000_000
    seed: int = 0
    tokenizer: str = ""


@dataclass(frozen=True)
class SplitRecord:
    documents: NonNegative
    tokens: Annotated[int, Field(ge=0, le=MAX_TOKENS)]
    documents_available: NonNegative


@dataclass(frozen=True)
class DatasetRecord:
    """dataset.json of a prepared dataset: its spec, the counts of each split, the tokenizer's size."""

    spec: DatasetSpecRecord
    splits: dict[Literal["train", "val", "test"], SplitRecord]
    vocab_size: Annotated[int, Field(ge=1, le=MAX_VOCAB)]
    eot: NonNegative
    source_sha256: str | None  # of an own corpus (text:PATH, dir:PATH); None for the built-in ones

    def __post_init__(self):
        if set(self.splits) != {"train", "val", "test"}:
            raise ValueError("splits must hold train, val and test")
        if self.eot >= self.vocab_size:
            raise ValueError(f"eot {self.eot} lies outside the vocabulary of {self.vocab_size}")
        if self.vocab_size > self.spec.vocab_size:
            raise ValueError(f"vocab_size {self.vocab_size} exceeds the spec's {self.spec.vocab_size}")


# --- result.json ----------------------------------------------------------------------------------
STOPS = ("patience", "cap")


@dataclass(frozen=True)
class HistoryPoint:
    step: NonNegative
    train_loss: float
    val_loss: float
    tokens: NonNegative
    lr: float


@dataclass(frozen=True)
class TrainRecord:
    """result.json of a finished training run (the fields of tmcheck.empirics.lm.train.TrainResult)."""

    best_val: Annotated[float, Field(allow_inf_nan=False)]  # a finite loss: a run with none has no result
    best_step: Annotated[int, Field(ge=-1)]
    steps: Annotated[int, Field(ge=0, le=MAX_STEPS)]
    stopped_early: bool
    tokens: Annotated[int, Field(ge=0, le=MAX_TOKENS)]
    seconds: NonNegativeFloat
    stop: Literal["patience", "cap"]
    history: tuple[HistoryPoint, ...] = ()
    schema_version: Literal[RESULT_VERSION] = RESULT_VERSION

    def __post_init__(self):
        if self.best_step > self.steps:
            raise ValueError(f"best_step {self.best_step} lies after the last step {self.steps}")
        if (self.tokens == 0) != (self.steps == 0) or self.tokens < self.steps:
            raise ValueError(f"{self.tokens:,} tokens cannot come from {self.steps:,} steps")
        if self.stop != STOPS[0 if self.stopped_early else 1]:
            raise ValueError(f"stop {self.stop!r} contradicts stopped_early={self.stopped_early}")


def check_progress(
    record: Mapping, where: str, max_steps: int | None = None, tokens_per_step: int | None = None
) -> None:
    """A run's stored progress (a result.json, or the counters of last.pt) against the run that reads
    it: at most `max_steps` steps, `best_step` no later than `steps`, and exactly `tokens_per_step`
    tokens a step (None: not known). SchemaError naming the field otherwise."""
    steps, tokens = record["steps"], record["tokens"]
    if max_steps is not None and steps > max_steps:
        raise SchemaError(f"{where}: steps: {steps:,} is more than this run's max_steps {max_steps:,}")
    if record.get("best_step", -1) > steps:
        raise SchemaError(f"{where}: best_step: {record['best_step']:,} lies after the last step {steps:,}")
    if tokens_per_step is not None and tokens != steps * tokens_per_step:
        raise SchemaError(f"{where}: tokens: {tokens:,} is not {steps:,} steps x {tokens_per_step:,} tokens a step")


def _result_1_to_2(doc: dict) -> dict:
    """Version 1 results of the earliest releases had no `stop`: it follows from stopped_early."""
    if "stop" not in doc and isinstance(doc.get("stopped_early"), bool):
        doc["stop"] = STOPS[0 if doc["stopped_early"] else 1]
    return doc


RESULT_MIGRATIONS = {1: _result_1_to_2}


def load_result(data: Any, where: str) -> dict:
    """A result.json (any version) validated and lifted to the current version, as plain data."""
    doc = migrate(data, where, RESULT_VERSION, RESULT_MIGRATIONS)
    record = validate(TrainRecord, doc, where)
    out = asdict(record)
    out["history"] = [dict(h) for h in out["history"]]
    return out


__all__ = [
    "CHECKPOINT_META_VERSION",
    "CONFIG_VERSION",
    "MAX_PARAMS",
    "MAX_VOCAB",
    "RESULT_VERSION",
    "CheckpointMeta",
    "DatasetRecord",
    "Count",
    "Fraction",
    "GPTShape",
    "NonNegative",
    "NonNegativeFloat",
    "PositiveFloat",
    "SchemaError",
    "TrainRecord",
    "check",
    "check_model_size",
    "check_progress",
    "config_model",
    "load_config",
    "load_result",
    "migrate",
    "validate",
]
