"""Mutated catalog files through the catalog loader: a Catalog, or one CatalogError located in that file."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import given

from designer import catalog as catalog_mod
from designer.catalog.types import KINDS
from designer.errors import InputError

from . import gen

BUILTIN = catalog_mod.load_builtin()


@given(gen.catalog_texts())
def test_a_mutated_user_catalog_merges_or_gives_a_located_catalog_error(text):
    gen.CASES["catalog"] += 1
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "user.yaml"
        path.write_text(text, encoding="utf-8")
        try:
            merged = catalog_mod.load_catalog([path], base=BUILTIN)
        except InputError as exc:
            gen.assert_located_error(exc, {str(path)})
            return
    for kind in KINDS:
        assert set(BUILTIN.by_kind(kind)) <= set(merged.by_kind(kind))
