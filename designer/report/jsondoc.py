"""Every JSON document the command line prints: one writer, and ``format_version`` as its first key.

Scripts check ``format_version`` before reading a document (docs/contract.md): it changes only
when a key they may rely on is renamed, removed or changes meaning; new keys can appear without
it changing.
"""

from __future__ import annotations

__all__ = ["FORMAT_VERSION", "document", "dumps"]

import json
from typing import Any, Mapping

FORMAT_VERSION = 1


def document(body: Mapping[str, Any]) -> dict[str, Any]:
    """``body`` with ``format_version`` first (a ``format_version`` already in ``body`` is replaced)."""
    return {"format_version": FORMAT_VERSION, **{k: v for k, v in body.items() if k != "format_version"}}


def dumps(body: Mapping[str, Any]) -> str:
    """The JSON text of :func:`document` (indented, UTF-8 kept, one trailing newline)."""
    return json.dumps(document(body), indent=2, ensure_ascii=False) + "\n"
