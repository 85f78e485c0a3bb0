"""The input: a spec's models, its loading and messages, and the units and YAML reading shared by every input.

Modules: :mod:`~designer.spec.choices` (the closed sets a spec chooses from),
:mod:`~designer.spec.models` (the frozen spec), :mod:`~designer.spec.values` (the value types a spec
is written in), :mod:`~designer.spec.schema` (pydantic input models), :mod:`~designer.spec.jsonschema`
(the JSON Schema as written), :mod:`~designer.spec.load` (``load_spec``), :mod:`~designer.spec.messages`
(one line per validation error), :mod:`~designer.spec.presets` (model architectures),
:mod:`~designer.spec.units` (quantities) and :mod:`~designer.spec.yamlio` (YAML with positions).

The names below are re-exported lazily: importing ``designer.spec.units`` (as the catalog, the
stages and the renderers do) loads neither pydantic nor the spec's models.
"""

from __future__ import annotations

__all__ = [
    "Objective", "Deployment", "Pricing",
    "MoESpec", "ModelSpec", "ParallelismSpec", "WorkloadSpec", "Budget", "Constraints",
    "FacilitySpec", "SystemPin", "Spec",
    "load_spec", "parse_spec", "spec_json_schema", "spec_digest",
]

_CHOICES = ("Objective", "Deployment", "Pricing")
_MODELS = ("MoESpec", "ModelSpec", "ParallelismSpec", "WorkloadSpec", "Budget", "Constraints", "FacilitySpec",
           "SystemPin", "Spec")
_LOAD = ("load_spec", "parse_spec", "spec_digest")


def __getattr__(name: str):
    if name in _CHOICES:
        from designer.spec import choices as home
    elif name in _MODELS:
        from designer.spec import models as home
    elif name in _LOAD:
        from designer.spec import load as home
    elif name == "spec_json_schema":
        from designer.spec import jsonschema as home
    else:
        raise AttributeError(f"module 'designer.spec' has no attribute {name!r}")
    return getattr(home, name)
