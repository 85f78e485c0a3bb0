"""Random text and bytes through the YAML loader: a document or one located InputError, nothing else."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import given, strategies as st

from designer.errors import InputError
from designer.spec import yamlio

from . import gen

TEXTS = st.one_of(gen.yaml_ish_text, gen.deep_nesting(), gen.alias_text(), gen.spec_texts(), gen.catalog_texts())


@given(TEXTS)
def test_any_text_gives_a_document_or_a_located_error(text):
    gen.CASES["yaml text"] += 1
    try:
        doc = yamlio.load_yaml_text(text, "fuzz.yaml")
    except InputError as exc:
        gen.assert_located_error(exc, {"fuzz.yaml"})
        gen.assert_one_line(exc.located())
    else:
        # Every value the loader returns sits at a recorded position.
        for path in gen._paths(doc.data):
            loc = doc.locate(path)
            assert loc.file == "fuzz.yaml" and loc.line >= 1


@given(st.one_of(st.binary(max_size=3000), TEXTS.map(lambda t: t.encode("utf-8")),
                 st.tuples(TEXTS, st.binary(max_size=8)).map(lambda p: p[0].encode("utf-8") + p[1])))
def test_any_bytes_in_a_file_give_a_document_or_a_located_error(raw):
    gen.CASES["yaml bytes"] += 1
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "fuzz.yaml"
        path.write_bytes(raw)
        try:
            yamlio.load_yaml(path)
        except InputError as exc:
            gen.assert_located_error(exc, {str(path)})
            gen.assert_one_line(exc.located())
