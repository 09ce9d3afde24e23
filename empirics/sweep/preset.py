"""The base of every sweep kind's presets (paper Section 3): `Preset`, the checks the language-model
kinds share, and the field types of their corpora and vocabularies.

Each kind module declares its preset class (a subclass of Preset) and its named presets beside its
spec, and names both in its `Kind` record (tmcheck.empirics.sweep.kinds: `get_preset`,
`preset_names`, `preset_class`, `preset_from_dict` look them up through the kind).

Fields are declared with their bounds (tmcheck.empirics.schema: `Count` is at least 1, ...), so a
preset read from a config.json is checked by the one schema (a wrong type or value is one line
naming the field); `validate` adds the relations between fields. `config_options` names the other
settings a sweep's config.json stores beside the preset (pretraining: its corpora).

Timings in the presets' notes are for 2 CPU cores unless stated; GPU figures are design targets,
not measured here.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass, replace
from typing import Annotated, Any, ClassVar

from pydantic import AfterValidator, Field

from tmcheck.empirics import schema
from tmcheck.empirics.data.corpora import check_corpus

Corpus = Annotated[str, AfterValidator(check_corpus)]  # a corpus tmcheck can load (refused otherwise)
Vocabulary = Annotated[int, Field(ge=258, le=schema.MAX_VOCAB)]  # 256 bytes, <|endoftext|>, a merge


def check_model(model, where: str) -> None:
    """A GPT configuration (tmcheck.empirics.lm.gpt.GPTConfig) within the schema's bounds (positive
    sizes, heads dividing the width)."""
    schema.validate(schema.GPTShape, asdict(model), f"{where}: model")


def check_train(train, where: str) -> None:
    """A trainer configuration (tmcheck.empirics.lm.train.TrainConfig) that can run: positive counts,
    finite rates, a known schedule."""
    from tmcheck.empirics.lm.train import SCHEDULES

    bad = [
        (name, want)
        for name, ok, want in (
            ("max_steps", train.max_steps >= 1, ">= 1"),
            ("lr", math.isfinite(train.lr) and train.lr > 0, "a finite number > 0"),
            ("min_lr", math.isfinite(train.min_lr) and 0 <= train.min_lr <= train.lr, "between 0 and lr"),
            ("warmup_steps", train.warmup_steps >= 0, ">= 0"),
            ("weight_decay", math.isfinite(train.weight_decay) and train.weight_decay >= 0, "a finite number >= 0"),
            ("grad_clip", math.isfinite(train.grad_clip) and train.grad_clip >= 0, "a finite number >= 0"),
            ("grad_accum", train.grad_accum >= 1, ">= 1"),
            ("eval_every", train.eval_every >= 1, ">= 1"),
            ("patience", train.patience >= 0, ">= 0"),
            ("schedule", train.schedule in SCHEDULES, f"one of {', '.join(SCHEDULES)}"),
            ("cooldown", train.cooldown >= (1 if train.schedule == "plateau" else 0), ">= 1 under schedule plateau"),
            ("threads", train.threads >= 0, ">= 0"),
        )
        if not ok
    ]
    if bad:
        name, want = bad[0]
        raise schema.SchemaError(f"{where}: train.{name}: expected {want}, got {getattr(train, name)!r}")


@dataclass(frozen=True, kw_only=True)
class Preset:
    """The base of every preset: `kind` (a class constant) names the sweep kind it configures."""

    kind: ClassVar[str] = ""
    config_options: ClassVar[dict[str, Any]] = {}  # config.json's settings beside the preset: name -> type
    name: str
    notes: str = ""

    def as_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> Preset:
        """The preset a config.json stores: the schema's types and bounds (unknown fields refused,
        missing ones take their defaults), then `validate`."""
        p = schema.validate(cls, d, f"a {cls.kind} preset")
        p.validate()
        return p

    def validate(self) -> None:
        """SchemaError (a ValueError, one line) naming the first field that cannot run."""
        schema.check(self, f"preset {self.name!r}")
        self.check_relations()

    def check_relations(self) -> None:
        """The relations between fields that their declared bounds cannot express; none in the base."""

    @classmethod
    def config_corpora(cls, config: Mapping) -> list[str]:
        """The corpora a config of this kind (or a preset's own fields) would read; none in the base."""
        return []

    def with_overrides(self, **overrides) -> Preset:
        """The preset with the given fields replaced (None values ignored), validated."""
        p = replace(self, **{k: v for k, v in overrides.items() if v is not None})
        p.validate()
        return p


def named(*presets: Preset) -> dict[str, Preset]:
    """A kind's presets by name, in the order given."""
    return {p.name: p for p in presets}
