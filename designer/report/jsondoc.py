"""Every JSON document the command line prints: one writer, and ``format_version`` as its first key.

Scripts check ``format_version`` before reading a document (docs/contract.md): it changes only
when a key they may rely on is renamed, removed or changes meaning; new keys can appear without
it changing.
"""

from __future__ import annotations

__all__ = ["FORMAT_VERSION", "document", "dumps"]

import json
import math
import re
from typing import Any, Mapping

FORMAT_VERSION = 1


def document(body: Mapping[str, Any]) -> dict[str, Any]:
    """``body`` with ``format_version`` first (a ``format_version`` already in ``body`` is replaced)."""
    return {"format_version": FORMAT_VERSION, **{k: v for k, v in body.items() if k != "format_version"}}


def _finite(value: Any) -> Any:
    """``value`` with every NaN or infinity replaced by None: JSON has neither, and Python's
    ``json`` would write the invalid tokens ``NaN`` and ``Infinity``."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, Mapping):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


_HIDDEN = re.compile("[\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def dumps(body: Mapping[str, Any]) -> str:
    """The JSON text of :func:`document` (indented, UTF-8 kept, one trailing newline). Always valid
    JSON: a quantity without a finite value (a time to train that never ends) is ``null``."""
    text = json.dumps(_finite(document(body)), indent=2, ensure_ascii=False, allow_nan=False) + "\n"
    # JSON escapes C0 controls itself; C1 controls and bidirectional overrides it leaves raw, and a
    # terminal showing the document would act on them. They only occur inside strings: \\u-escape.
    return _HIDDEN.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
