"""Pydantic validation errors as one located line each: which error to report, where in the
input it is, and what to say (with a "did you mean" for misspelt keys and choices).

Used by :mod:`designer.spec.load`; pydantic's own messages name union branches and validators, which
mean nothing to a user, so the key path is rebuilt from the input and the text from the error type.
"""

from __future__ import annotations

__all__ = ["best_error", "message"]

import difflib
from typing import Any

from pydantic import BaseModel



def _model_at(loc: tuple[Any, ...], root: type[BaseModel]) -> type[BaseModel] | None:
    """The pydantic model class that holds the key at ``loc`` (for did-you-mean suggestions)."""
    model: Any = root
    for part in loc[:-1]:
        if isinstance(part, int):
            continue
        field = model.model_fields.get(part) if isinstance(model, type) and issubclass(model, BaseModel) else None
        if field is None:
            return None
        model = _unwrap_model(field.annotation)
        if model is None:
            return None
    return model if isinstance(model, type) and issubclass(model, BaseModel) else None


def _unwrap_model(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in getattr(annotation, "__args__", ()) or ():
        found = _unwrap_model(arg)
        if found is not None:
            return found
    return None


def _clean_loc(loc: tuple[Any, ...], data: Any, *, missing: bool = False) -> tuple[Any, ...]:
    """The key path of an error in the input: pydantic's ``loc`` without its union-branch labels.

    pydantic puts branch and validator names ("_Parallelism", "literal['auto']", "function-after[...]")
    between the real keys. Walking the input data keeps exactly the parts that are keys or indices
    there; a label can never be mistaken for a user's key such as ``_x`` or ``int`` (which once
    crashed here). The last part of a ``missing`` error names a key that is, by definition, absent.
    """
    out = []
    node = data
    for i, part in enumerate(loc):
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node):
            node = node[part]
        elif not (missing and i == len(loc) - 1 and isinstance(part, str)):
            continue
        out.append(part)
    return tuple(out)


_SHORT = 60  # characters of a user's value echoed in a message


def _short(value: Any) -> str:
    """``repr`` of a value from the input, cut to keep the message one short line."""
    text = repr(value)
    return text if len(text) <= _SHORT else text[:_SHORT] + "..."


def _dotted(loc: tuple[Any, ...]) -> str:
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text or "(top level)"


def message(err: dict[str, Any], loc: tuple[Any, ...], root: type[BaseModel]) -> str:
    """One line for a pydantic error at the input key path ``loc``: an unknown key with the
    closest known one (or the known keys of ``root``'s model there), a missing key, a value not
    among the allowed ones with the closest, a bound with the value given, a wrong shape."""
    kind = err["type"]
    where = _dotted(loc)
    if kind == "extra_forbidden":
        key = loc[-1]
        model = _model_at(loc, root)
        hint = ""
        if model is not None:
            close = difflib.get_close_matches(str(key), list(model.model_fields), n=1, cutoff=0.5)
            if close:
                hint = f"; did you mean '{close[0]}'?"
            else:
                hint = f"; known keys: {', '.join(model.model_fields)}"
        return f"unknown key {_short(key)} in {_dotted(loc[:-1]) if loc[:-1] else 'the spec'}{hint}"
    if kind == "missing":
        return f"{where}: required key is missing"
    msg = err["msg"]
    msg = msg.removeprefix("Value error, ")
    if kind == "literal_error":
        got = err.get("input")
        expected = err.get("ctx", {}).get("expected", "")
        close = difflib.get_close_matches(str(got), [e.strip("' ") for e in expected.replace(" or ", ",").split(",")], n=1)
        hint = f"; did you mean '{close[0]}'?" if close else ""
        return f"{where}: {_short(got)} is not allowed: expected {expected}{hint}"
    if kind in ("greater_than_equal", "greater_than") and err.get("input") is not None:
        return f"{where}: {msg} (got {_short(err.get('input'))})"
    if kind in ("model_type", "model_attributes_type", "dict_type"):
        return f"{where}: expected a mapping (key: value pairs), got {type(err.get('input')).__name__}"
    if kind == "list_type":
        return f"{where}: expected a list, got {type(err.get('input')).__name__}"
    return f"{where}: {msg}"


def best_error(errors: list[dict[str, Any]], data: Any) -> tuple[dict[str, Any], tuple[Any, ...]]:
    """Pick the most useful error: prefer the deepest, non-union-noise one, in document order."""
    scored = []
    for i, err in enumerate(errors):
        loc = _clean_loc(tuple(err["loc"]), data, missing=err["type"] == "missing")
        # An unknown key explains the "missing" error that usually comes with it: report it first.
        if err["type"] == "extra_forbidden":
            rank = 0
        elif err["type"] == "literal_error" and len(errors) > 1 and "parallelism" in loc:
            rank = 2
        else:
            rank = 1
        scored.append((rank, i, err, loc))
    scored.sort(key=lambda t: (t[0], t[1]))
    _, _, err, loc = scored[0]
    return err, loc
