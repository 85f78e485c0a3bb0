"""Safe YAML loading with positions: what is refused, where errors point, and how fast limits bite."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings, strategies as st

from designer.errors import InputError, Location
from designer.spec import yamlio


LOADERS = [pytest.param(yaml.SafeLoader, id="python")]
if getattr(yaml, "CSafeLoader", None) is not None:
    LOADERS.append(pytest.param(yaml.CSafeLoader, id="libyaml"))


@pytest.fixture(params=LOADERS)
def loader(request, monkeypatch):
    """Run the test with the libyaml parser and with the pure-Python one (the fallback)."""
    monkeypatch.setattr(yamlio, "_Loader", request.param)
    return request.param


def refused(text: str, match: str) -> InputError:
    with pytest.raises(InputError, match=match) as info:
        yamlio.load_yaml_text(text, "f.yaml")
    return info.value


def at(exc: InputError) -> tuple[int | None, int | None]:
    return exc.location.line, exc.location.col


# --- positions ------------------------------------------------------------------------------------

DOC = """\
a: 1
b:
  - x
  - {c: 2, d: [3, 4]}
é: ü
"""


def test_positions_of_values_and_keys(loader):
    doc = yamlio.load_yaml_text(DOC, "f.yaml")
    assert doc.data == {"a": 1, "b": ["x", {"c": 2, "d": [3, 4]}], "é": "ü"}
    assert doc.positions[("a",)] == (1, 4)
    assert doc.key_positions[("a",)] == (1, 1)
    assert doc.positions[("b", 0)] == (3, 5)
    assert doc.positions[("b", 1, "c")] == (4, 9)
    assert doc.positions[("b", 1, "d", 1)] == (4, 19)
    assert doc.positions[("é",)] == (5, 4)  # columns count characters, not UTF-8 bytes


def test_locate_falls_back_to_the_nearest_parent():
    doc = yamlio.load_yaml_text(DOC, "f.yaml")
    assert doc.locate(("b", 1, "c")) == Location("f.yaml", 4, 9, "b[1].c")
    assert doc.locate(("b", 1, "missing")) == Location("f.yaml", 4, 5, "b[1].missing")
    assert doc.locate(("b", 1, "c"), key=True) == Location("f.yaml", 4, 6, "b[1].c")
    assert doc.locate(()) == Location("f.yaml", 1, 1, "")
    assert str(doc.locate(("a",))) == "f.yaml:1:4"


def test_scalars_resolve_as_yaml_core():
    doc = yamlio.load_yaml_text("i: 0x1F\nu: 1_000\nf: 2.5\nb: yes\nn: ~\ns: '3'\nt: 2024-08-01\n", "f")
    assert doc.data == {"i": 31, "u": 1000, "f": 2.5, "b": True, "n": None, "s": "3", "t": "2024-08-01"}


def test_explicit_core_tags_are_honoured():
    assert yamlio.load_yaml_text("a: !!str 1\nb: !!int '3'\nc: !!bool 'off'\n", "f").data == {
        "a": "1", "b": 3, "c": False}
    refused("a: !!bool maybe\n", "cannot read boolean 'maybe'")
    refused("a: !!int three\n", "cannot read integer 'three'")


# --- refusals, each located -------------------------------------------------------------------------

def test_duplicate_keys_are_refused_at_the_second_one(loader):
    assert at(refused("a: 1\nb: 2\na: 3\n", "duplicate key 'a'")) == (3, 1)


def test_aliases_expand(loader):
    doc = yamlio.load_yaml_text("base: &x {k: 1}\nother: *x\n", "f")
    assert doc.data == {"base": {"k": 1}, "other": {"k": 1}}


def test_merge_keys_are_refused(loader):
    assert at(refused("base: &b {x: 1}\nother:\n  <<: *b\n", "merge keys")) == (3, 3)


def test_undefined_recursive_and_redefined_anchors_are_refused(loader):
    assert at(refused("a: *nope\n", "names no anchor")) == (1, 4)
    assert at(refused("a: &r [1, *r]\n", "contains it")) == (1, 11)
    assert at(refused("a: &x [&x 1]\nb: *x\n", r"anchor '&x' is defined twice \(first at line 1\)")) == (1, 8)
    assert at(refused("a: &x 1\nb: &x 2\n", "defined twice")) == (2, 4)
    assert at(refused("&k a: 1\n&k b: 2\n", "defined twice")) == (2, 1)


def test_an_anchored_key_can_be_aliased():
    assert yamlio.load_yaml_text("&k a: 1\nb: *k\n", "f").data == {"a": 1, "b": "a"}


@pytest.mark.parametrize("text", ["a: .nan\n", "a: .inf\n", "a: -.inf\n", "a: .NaN\n", "a: 1.0e+400\n"])
def test_nan_and_infinity_are_refused(text, loader):
    assert at(refused(text, "finite|out of range")) == (1, 4)


def test_several_documents_are_refused_at_the_second(loader):
    assert at(refused("a: 1\n---\nb: 2\n", "several YAML documents")) == (2, 1)


@pytest.mark.parametrize("text", ["", "\n\n", "# only a comment\n", "---\n", "---\n...\n"])
def test_empty_documents_are_refused(text, loader):
    assert at(refused(text, "empty")) == (1, 1)


def test_malformed_yaml_is_located(loader):
    exc = refused("version: 1\nname: [x\n", "malformed YAML")
    assert exc.location.line == 3
    exc = refused("a: b: c\n", "malformed YAML")
    assert at(exc) == (1, 5)


def test_control_characters_are_located(loader):
    exc = refused("a: 1\nb: x\x07y\n", "malformed YAML")
    assert exc.location.line == 2


@pytest.mark.parametrize("text", [
    '!!python/object/apply:os.system ["touch {marker}"]\n',
    'a: !!python/object/apply:os.system ["touch {marker}"]\n',
    "a: !!python/name:os.system ''\n",
    "a: !!python/object:pathlib.Path {{}}\n",
    "a: !!python/object/new:pathlib.Path ['{marker}']\n",
    "a: !!binary aGVsbG8=\n",
    "a: !!set {{x, y}}\n",
    "a: !!omap [x: 1]\n",
    "a: !custom 3\n",
])
def test_tags_beyond_the_core_schema_are_refused_and_nothing_is_constructed(text, tmp_path, loader):
    marker = tmp_path / "constructed"
    exc = refused(text.format(marker=marker), "unsupported YAML tag")
    assert exc.location.line == 1
    assert not marker.exists()


def test_non_scalar_keys_are_refused(loader):
    assert at(refused("? [a, b]\n: 1\n", "plain scalars")) == (1, 3)


def test_huge_integers_are_refused(loader):
    refused("a: " + "9" * 41 + "\n", "cannot read integer")


# --- files ---------------------------------------------------------------------------------------

def test_missing_file_and_folder(tmp_path):
    with pytest.raises(InputError, match="no such file") as info:
        yamlio.load_yaml(tmp_path / "nope.yaml")
    assert info.value.location.line is None  # whole-file problems are located FILE:
    with pytest.raises(InputError, match="directory"):
        yamlio.load_yaml(tmp_path)


def test_binary_and_non_utf8_files_are_refused(tmp_path):
    nul = tmp_path / "nul.yaml"
    nul.write_bytes(b"a: 1\n\x00\x01\x02")
    with pytest.raises(InputError, match="binary file"):
        yamlio.load_yaml(nul)
    latin = tmp_path / "latin.yaml"
    latin.write_bytes("a: café\n".encode("latin-1"))
    with pytest.raises(InputError, match=r"not UTF-8 text \(byte 6\)"):
        yamlio.load_yaml(latin)


def test_size_limit(tmp_path):
    path = tmp_path / "small.yaml"
    path.write_text("a: " + "x" * 100 + "\n")
    with pytest.raises(InputError, match="limit is 50"):
        yamlio.load_yaml(path, max_bytes=50)
    assert yamlio.load_yaml(path, max_bytes=200).data == {"a": "x" * 100}


def test_a_100_mb_file_is_refused_without_reading_it(tmp_path):
    path = tmp_path / "huge.yaml"
    with path.open("wb") as out:
        out.truncate(100 * 2**20)  # sparse: 100 MB by size, nothing on disk
    with pytest.raises(InputError, match="104,857,600 bytes; the limit is 10,485,760"):
        yamlio.load_yaml(path)


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="needs /dev/zero")
def test_an_endless_stream_is_read_only_up_to_the_limit():
    # /dev/zero reports size 0; reading it whole would never end.
    with pytest.raises(InputError, match="larger than the limit"):
        yamlio.load_yaml("/dev/zero")


# --- resource bounds -------------------------------------------------------------------------------

def billion_laughs(levels: int = 9, width: int = 9) -> str:
    """The classic alias bomb: ``width ** levels`` values (387 M here) from a few hundred bytes."""
    lines = [f"l0: &l0 [{', '.join(['lol'] * width)}]"]
    for i in range(1, levels):
        lines.append(f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * width)}]")
    return "\n".join(lines) + "\n"


_CHILD = """
import json, resource, sys, time
import yaml
from designer.spec import yamlio
from designer.errors import InputError
yamlio._Loader = getattr(yaml, sys.argv[2])
start = time.perf_counter()
try:
    yamlio.load_yaml(sys.argv[1])
    message = ""
except InputError as exc:
    message = exc.located()
print(json.dumps({"s": time.perf_counter() - start, "message": message,
                  "rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024}))
"""


def load_in_child(path: Path, loader: type) -> dict:
    """Load ``path`` in a fresh interpreter: the call's seconds, the process's peak RSS, the error."""
    root = Path(__file__).resolve().parents[2]
    out = subprocess.run([sys.executable, "-c", _CHILD, str(path), loader.__name__], cwd=root,
                         capture_output=True, text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(root)})
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_alias_bomb_is_refused_fast_and_small(loader, tmp_path):
    text = billion_laughs()
    assert len(text) < 500
    path = tmp_path / "bomb.yaml"
    path.write_text(text)
    got = load_in_child(path, loader)
    assert re.search(r"bomb.yaml:\d+:\d+: document expands to more than 200,000 values \(alias bomb",
                     got["message"])
    # Seconds and peak memory are figures, not assertions: benchmarks/input_bounds.py prints them.


def test_a_file_of_millions_of_values_is_refused_at_the_limit(tmp_path):
    loader = yamlio._Loader  # the parser in use: libyaml wherever PyYAML's wheels carry it
    # 9 MB of "- 1": under the size limit, 2.4 M values. Building PyYAML's whole node graph first
    # took 80 s and 1.4 GB; the load now stops at value 200,001 (the sequence itself is value 1).
    path = tmp_path / "many.yaml"
    path.write_text("- 1\n" * (9 * 2**20 // 4))
    got = load_in_child(path, loader)
    assert got["message"].endswith("many.yaml:200000:3: document expands to more than 200,000 values "
                                   "(far too large); refusing to load it")
    # Seconds and peak memory are figures, not assertions: benchmarks/input_bounds.py prints them.


@pytest.mark.parametrize("depth, ok", [(64, True), (65, False), (10_000, False)])
def test_nesting_limit(depth, ok, loader):
    text = "[" * depth + "]" * depth + "\n"
    if ok:
        data = yamlio.load_yaml_text(text, "f").data
        for _ in range(depth - 1):
            data = data[0]
        assert data == []
    else:
        exc = refused(text, "nesting|malformed")  # libyaml stops at its own depth first (1,000)
        assert exc.location.line == 1


def test_long_strings_load():
    text = "a: '" + "x" * 5_000_000 + "'\n"
    assert len(yamlio.load_yaml_text(text, "f").data["a"]) == 5_000_000


def test_messages_quoting_the_input_stay_short():
    exc = refused(f"? {'k' * 5000}\n: 1\n? {'k' * 5000}\n: 2\n", "duplicate key")
    assert len(exc.located()) < 200
    exc = refused(f"a: !{'t' * 5000} 1\n", "unsupported YAML tag")
    assert len(exc.located()) < 200


# --- both parsers agree ------------------------------------------------------------------------------

@pytest.mark.skipif(len(LOADERS) < 2, reason="libyaml not built into PyYAML here")
@pytest.mark.parametrize("text", [DOC, "a: &x [1, {b: 2}]\nc: *x\n", "- 'q'\n- \"w\"\n- |\n  block\n"])
def test_libyaml_and_python_parsers_give_the_same_document(text, monkeypatch):
    docs = []
    for cls in (yaml.SafeLoader, yaml.CSafeLoader):
        monkeypatch.setattr(yamlio, "_Loader", cls)
        docs.append(yamlio.load_yaml_text(text, "f"))
    assert docs[0].data == docs[1].data
    assert dict(docs[0].positions) == dict(docs[1].positions)
    assert dict(docs[0].key_positions) == dict(docs[1].key_positions)


# --- dumping --------------------------------------------------------------------------------------------

scalars = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-(10**30), max_value=10**30),
    st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=30),
)
trees = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(min_size=1, max_size=10), inner,
                                                                          max_size=4)),
    max_leaves=20,
)


@given(st.dictionaries(st.text(min_size=1, max_size=10), trees, min_size=1, max_size=5))
@settings(max_examples=100, deadline=None)
def test_dump_then_load_gives_the_same_data(data):
    text = yamlio.dump_yaml(data)
    assert yamlio.load_yaml_text(text, "f").data == data
    assert yamlio.dump_yaml(data) == text  # deterministic
