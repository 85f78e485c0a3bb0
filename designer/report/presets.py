"""Renderers of the model presets for ``designer presets``: a table, one preset in full, and JSON (pure).

The presets come in as a mapping (:data:`designer.spec.presets.PRESETS`, which the command passes):
the stages below the planner read no spec module but its vocabulary.
"""

from __future__ import annotations

__all__ = ["attention_of", "render_presets", "render_preset", "presets_to_json_dict"]

import textwrap
from typing import Any, Mapping

from tabulate import tabulate

from designer.spec import units

Presets = Mapping[str, Mapping[str, Any]]

_SOURCE_WIDTH = 60  # the table cuts sources; one preset prints its source whole
_TEXT_WIDTH = 90


def attention_of(p: Mapping[str, Any]) -> str:
    """The preset's attention: ``MLA`` (latent, DeepSeek), ``GQA`` (fewer KV heads than heads) or ``MHA``."""
    if "mla" in p:
        return "MLA"
    return "GQA" if p["kv_heads"] < p["heads"] else "MHA"


def _moe(p: Mapping[str, Any]) -> str:
    moe = p.get("moe")
    if not moe:
        return "dense"
    shared = f" + {moe['shared_experts']} shared" if moe.get("shared_experts") else ""
    return f"{moe['experts']} experts{shared}, top-{moe['top_k']}"


def _short(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 3].rstrip() + "..."


def render_presets(presets: Presets) -> str:
    """One row per preset: parameters, layers, hidden size, heads (KV heads), FFN, sequence length,
    vocabulary, attention, experts and the source of the figures."""
    rows = []
    for name in sorted(presets):
        p = presets[name]
        rows.append([name, units.format_count(p["params"]), p["layers"], p["hidden"], f"{p['heads']} ({p['kv_heads']})",
                     p["ffn"], p["seq_len"], p["vocab"], attention_of(p), _moe(p), _short(p["source"], _SOURCE_WIDTH)])
    headers = ["preset", "params", "layers", "hidden", "heads (kv)", "ffn", "seq_len", "vocab", "attention", "experts",
               "source"]
    return (tabulate(rows, headers=headers, tablefmt="simple", disable_numparse=True)
            + "\n\nUse one as `model: {preset: NAME}`; any field can be overridden next to it "
              "(`designer presets NAME` shows every field).\n")


def render_preset(presets: Presets, name: str) -> str:
    """Every field of one preset as the spec's ``model:`` mapping names it, then its source.

    Raises:
        KeyError: not a preset (the command checks the name first).
    """
    p = presets[name]
    lines = [f"{name}: {units.format_count(p['params'])} parameters, {attention_of(p)} attention, {_moe(p)}", ""]
    for key, value in p.items():
        if key == "source":
            continue
        if key == "params":
            value = units.format_count(value)  # as a spec writes it: 70.6B
        elif isinstance(value, bool):
            value = "true" if value else "false"
        elif isinstance(value, Mapping):
            value = ", ".join(f"{k}: {v}" for k, v in value.items())
        lines.append(f"  {key:<10} {value}")
    lines += ["", "source:", *textwrap.wrap(p["source"], _TEXT_WIDTH, initial_indent="  ", subsequent_indent="  ")]
    return "\n".join(lines) + "\n"


def presets_to_json_dict(presets: Presets) -> dict[str, Any]:
    """``{"presets": [{"name", "attention", <the model: fields>, "source"}]}``, sorted by name."""
    out = []
    for name in sorted(presets):
        p = presets[name]
        fields = {k: (dict(v) if isinstance(v, Mapping) else v) for k, v in p.items() if k != "source"}
        out.append({"name": name, "attention": attention_of(p), **fields, "source": p["source"]})
    return {"presets": out}
