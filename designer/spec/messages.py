"""Pydantic validation errors in the project's own words: every problem of an input, each located,
with what is wrong and how to fix it (a "did you mean" for misspelt keys and choices).

Used by :mod:`designer.spec.load`. Pydantic's own messages ("Input should be ...", "List should
have at least 1 item after validation") name union branches and validators, which mean nothing to
a user, so the key path is rebuilt from the input and the text from the error type and its
context. No pydantic text reaches the user: an error type without a rule here gets a plain
"is not valid here" with the value given.
"""

from __future__ import annotations

__all__ = ["Problem", "problems", "best_error", "message"]

import difflib
import re
from typing import Any, NamedTuple

from pydantic import BaseModel


class Problem(NamedTuple):
    """One problem at a key path of the input; ``key`` when it is the key itself (an unknown key)."""

    loc: tuple[Any, ...]
    key: bool
    message: str
    hint: str | None


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


def _value_at(data: Any, loc: tuple[Any, ...]) -> Any:
    """The value as written at a cleaned key path (the raw text ``0 days``, not its parsed seconds)."""
    node = data
    for part in loc:
        node = node[part]
    return node


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


def _kind(value: Any) -> str:
    """What a YAML value is, in words."""
    if value is None:
        return "nothing (null)"
    if isinstance(value, bool):
        return f"{str(value).lower()} (a boolean)"
    if isinstance(value, (int, float)):
        return f"the number {_short(value)}"
    if isinstance(value, str):
        return f"the text {_short(value)}"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return type(value).__name__


# Values people write for a boolean that YAML reads as a number or text: what they meant.
_MEANT = {**dict.fromkeys(("1", "yes", "y", "on", "true"), "true"), **dict.fromkeys(("0", "no", "n", "off", "false"), "false")}


def _flag_hint(given: Any) -> str:
    """How to write the boolean ``given`` was probably meant to be (YAML's unquoted true or false)."""
    meant = _MEANT.get(str(given).strip().lower(), "true or false") if isinstance(given, (str, int, float)) else None
    if meant is None:
        return "write true or false"
    return f"write {meant}, without quotes" if isinstance(given, str) else f"write {meant} (a number is not a boolean)"


def _number(x: Any) -> str:
    return f"{x:g}" if isinstance(x, float) else str(x)


# A unit parser's message ends in advice ("; use ns, us, ...", ": did you mean "30 days"?"): that
# advice is the hint.
_ADVICE = re.compile(r"^(?P<msg>.*?)(?:;|:) (?P<hint>(?:did you mean|use |write it like|write ).*)$", re.S)


def _split_advice(text: str) -> tuple[str, str | None]:
    m = _ADVICE.match(text)
    return (m.group("msg"), m.group("hint")) if m else (text, None)


def _items(n: Any) -> str:
    return f"{n} item" if n == 1 else f"{n} items"


def explain(err: dict[str, Any], loc: tuple[Any, ...], root: type[BaseModel], data: Any = None) -> tuple[str, str | None]:
    """``(message, hint)`` for a pydantic error at the input key path ``loc``: an unknown key with
    the closest known one (or the known keys of ``root``'s model there), a missing key, a value not
    among the allowed ones with the closest, a bound with the value given, a wrong shape."""
    kind = err["type"]
    ctx = err.get("ctx") or {}
    where = _dotted(loc)
    try:
        given = _value_at(data, loc) if data is not None and kind != "missing" else err.get("input")
    except (KeyError, IndexError, TypeError):
        given = err.get("input")
    if kind in _UNKNOWN_KEY:
        key = loc[-1]
        model = _model_at(loc, root)
        hint = None
        if model is not None:
            close = difflib.get_close_matches(str(key), list(model.model_fields), n=1, cutoff=0.5)
            hint = f"did you mean '{close[0]}'?" if close else f"known keys: {', '.join(model.model_fields)}"
        return f"unknown key {_short(key)} in {_dotted(loc[:-1]) if loc[:-1] else 'the spec'}", hint
    if kind == "missing":
        return f"{where}: required key is missing", None
    if kind == "value_error":
        text = str(ctx.get("error", err.get("msg", ""))).removeprefix("Value error, ")
        msg, hint = _split_advice(text)
        return f"{where}: {msg}", hint
    if kind == "literal_error":
        expected = str(ctx.get("expected", ""))
        choices = [e.strip("' ") for e in expected.replace(" or ", ",").split(",")]
        close = difflib.get_close_matches(str(given), choices, n=1)
        plain = isinstance(given, (str, int, float)) and not isinstance(given, bool)
        shown = _short(given) if plain else _kind(given)
        return (f"{where}: {shown} is not allowed: expected {expected}",
                f"did you mean '{close[0]}'?" if close else None)
    bounds = {"greater_than_equal": ("at least", "ge"), "greater_than": ("greater than", "gt"),
              "less_than_equal": ("at most", "le"), "less_than": ("less than", "lt")}
    if kind in bounds:
        words, name = bounds[kind]
        return f"{where}: must be {words} {_number(ctx.get(name))} (got {_short(given)})", None
    if kind in ("too_short", "too_long"):
        limit = ctx.get("min_length" if kind == "too_short" else "max_length")
        actual = ctx.get("actual_length")
        if kind == "too_short":
            got = "an empty list" if not actual else _items(actual)
            return f"{where}: needs at least {_items(limit)}, got {got}", None
        return f"{where}: at most {_items(limit)}, got {actual}", None
    if kind == "string_too_short":
        return f"{where}: must not be empty", None
    if kind == "string_too_long":
        return f"{where}: at most {ctx.get('max_length')} characters, got {len(str(given))}", "shorten it"
    if kind in ("model_type", "model_attributes_type", "dict_type"):
        return f"{where}: expected a mapping (key: value pairs), got {_kind(given)}", None
    if kind == "list_type":
        return f"{where}: expected a list, got {_kind(given)}", None
    if kind == "string_type":
        return f"{where}: expected text, got {_kind(given)}", None
    if kind in ("int_type", "int_parsing", "int_from_float"):
        return f"{where}: expected a whole number, got {_kind(given)}", None
    if kind in ("float_type", "float_parsing", "finite_number"):
        return f"{where}: expected a finite number, got {_kind(given)}", None
    if kind in ("bool_type", "bool_parsing"):
        return f"{where}: expected true or false, got {_kind(given)}", _flag_hint(given)
    return f"{where}: {_kind(given)} is not valid here", None


def message(err: dict[str, Any], loc: tuple[Any, ...], root: type[BaseModel], data: Any = None) -> str:
    """One line (``message; hint``) for a pydantic error at the input key path ``loc``."""
    text, hint = explain(err, loc, root, data)
    return text if hint is None else f"{text}; {hint}"


# A key the model does not have: a misspelt name, or a number where a name belongs.
_UNKNOWN_KEY = ("extra_forbidden", "invalid_key")


def _rank(err: dict[str, Any], count: int, loc: tuple[Any, ...]) -> int:
    # An unknown key explains the "missing" error that usually comes with it: report it first.
    if err["type"] in _UNKNOWN_KEY:
        return 0
    if err["type"] == "literal_error" and count > 1 and "parallelism" in loc:
        return 2
    return 1


def best_error(errors: list[dict[str, Any]], data: Any) -> tuple[dict[str, Any], tuple[Any, ...]]:
    """Pick the most useful error: prefer the deepest, non-union-noise one, in document order."""
    scored = []
    for i, err in enumerate(errors):
        loc = _clean_loc(tuple(err["loc"]), data, missing=err["type"] == "missing")
        scored.append((_rank(err, len(errors), loc), i, err, loc))
    scored.sort(key=lambda t: (t[0], t[1]))
    _, _, err, loc = scored[0]
    return err, loc


_MAPPING_TYPES = ("model_type", "model_attributes_type", "dict_type")


def _auto_only(err: dict[str, Any]) -> bool:
    """A union branch's "not 'auto'" error: noise when the other branch explains the value."""
    return err["type"] == "literal_error" and str((err.get("ctx") or {}).get("expected", "")) == "'auto'"


def _bool_only(err: dict[str, Any]) -> bool:
    """A union branch's "not true or false" error (``networks: false`` or a mapping): noise when the
    mapping branch explains the value."""
    return err["type"] in ("bool_type", "bool_parsing")


def problems(errors: list[dict[str, Any]], data: Any, root: type[BaseModel]) -> list[Problem]:
    """Every problem of a pydantic validation, once each, in the project's words.

    pydantic reports one error per union branch (``tp: x`` fails both as a count and as ``'auto'``)
    and a "missing" error beside the misspelt key that caused it. Per key path the most useful
    error is kept (as in :func:`best_error`); a branch's "not 'auto'" error is dropped when another
    error explains the value or a deeper key (it becomes the hint "or 'auto'"); a missing key is
    dropped when an unknown key beside it is its misspelling.
    """
    cleaned = [(err, _clean_loc(tuple(err["loc"]), data, missing=err["type"] == "missing")) for err in errors]
    by_loc: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    for err, loc in cleaned:
        by_loc.setdefault(loc, []).append(err)
    deeper = {loc[:i] for loc in by_loc for i in range(len(loc))}
    out: list[Problem] = []
    suggested: set[tuple[Any, ...]] = set()
    for loc, errs in by_loc.items():
        auto = any(_auto_only(e) for e in errs)
        boolean = any(_bool_only(e) for e in errs) and (loc in deeper or any(e["type"] in _MAPPING_TYPES
                                                                             for e in errs))
        rest = [e for e in errs if not _auto_only(e) and not (boolean and _bool_only(e))]
        if (auto or boolean) and not rest and loc in deeper:
            continue  # the deeper errors say what is wrong inside the mapping
        errs = rest or errs
        err = min(errs, key=lambda e: _rank(e, len(errs), loc))
        text, hint = explain(err, loc, root, data)
        if boolean and err["type"] in _MAPPING_TYPES:
            model = _model_at(loc + ("?",), root)
            keys = ", ".join(model.model_fields) if model is not None else "its keys"
            given = _value_at(data, loc)
            text = f"{_dotted(loc)}: expected true, false or a mapping of {keys}; got {_kind(given)}"
            meant = isinstance(given, (str, int, float)) and str(given).strip().lower() in _MEANT
            hint = _flag_hint(given) if meant else None
        elif auto and rest and err["type"] in _MAPPING_TYPES:
            model = _model_at(loc + ("?",), root)
            keys = ", ".join(model.model_fields) if model is not None else "its keys"
            text = f"{_dotted(loc)}: expected 'auto' or a mapping of {keys}; got {_kind(_value_at(data, loc))}"
            hint = None
        elif auto and rest:
            hint = f"{hint}; or 'auto' to let the optimizer choose" if hint else "or 'auto' to let the optimizer choose"
        if err["type"] in _UNKNOWN_KEY and hint and hint.startswith("did you mean '"):
            suggested.add(loc[:-1] + (hint[len("did you mean '"):-2],))
        out.append(Problem(loc, err["type"] in _UNKNOWN_KEY, text, hint))
    return [p for p in out if not (p.message.endswith("required key is missing") and p.loc in suggested)]
