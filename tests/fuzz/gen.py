"""Generators of bad input (from scratch and by mutating the real examples and catalogs) and the
oracles every fuzz case must satisfy."""

from __future__ import annotations

import collections
import re
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from designer.spec import yamlio

ROOT = Path(__file__).resolve().parent.parent.parent
EXAMPLES = {p.name: p.read_text(encoding="utf-8") for p in sorted((ROOT / "examples").glob("*.yaml"))}
CATALOGS = {p.name: p.read_text(encoding="utf-8") for p in sorted((ROOT / "catalogs").glob("*.yaml"))}

CASES: collections.Counter[str] = collections.Counter()  # generated cases per test, for the summary

# One line on stderr: ``error: FILE:LINE:COL: message`` or ``error: FILE: message`` (whole file).
ERROR_LINE = re.compile(r"^error: (?P<file>[^:\n]+?)(?::(?P<line>\d+):(?P<col>\d+))?: (?P<message>\S[^\n]*)$")

# --- values ---------------------------------------------------------------------------------------------

UNITS = [
    "400 Gbps", "50 GB/s", "400 GB", "8 Gb", "1 GiB", "70B", "15T", "$2.5M", "$12,500", "12500", "90 days",
    "3 years", "2 us", "5 MW", "5 MWh", "40 kW", "0.08 USD/kWh", "$55.04/h", "989 TFLOPS", "80%", "150%",
    "-1 day", "-$5", "1e400 W", "nan Gbps", "0", "0 W", "1e-300 s", "auto", "inf days", "0x10 GB", "1_000 W",
]
SPEC_KEYS = [
    "version", "name", "objective", "horizon", "budget", "capex", "total", "workloads", "model", "preset",
    "tokens", "global_batch", "precision", "recompute", "parallelism", "tp", "pp", "dp", "ep", "cp", "zero",
    "microbatch", "deadline", "gpus", "constraints", "min_utilization", "deployments", "fabrics", "topologies",
    "max_power", "max_nodes", "max_racks", "oversubscription", "pricing", "facility", "electricity", "pue",
    "rack_power", "catalogs", "system", "server", "switch", "nodes", "fabric", "topology", "layers", "hidden",
    "heads", "kv_heads", "ffn", "seq_len", "vocab", "moe", "experts", "top_k", "_x", "int", "str", "literal['auto']",
]
NAMES = ["llama3-8b", "llama3-70b", "dgx-h100", "dgx-h1000", "nvidia-qm9700", "infiniband", "roce", "ethernet",
         "fat_tree", "rail_only", "on_prem", "cloud", "auto", "bf16", "min_total_cost", "aws-p5.48xlarge"]
NUMBERS = [0, -1, 1, 2, 3, 7, 64, 1024, 2**31, 2**63, 10**9, 10**39, -(10**39), 0.5, 1.0, 1.5, -0.0, 1e-300,
           1e300, 99999999999999999999, float("nan"), float("inf"), -float("inf")]

long_text = st.integers(min_value=200, max_value=200_000).map(lambda n: "x" * n)
odd_text = st.text(alphabet=st.characters(codec="utf-8"), max_size=12)

scalars = st.one_of(
    st.none(), st.booleans(), st.sampled_from(NUMBERS), st.integers(-(10**15), 10**15),
    st.floats(allow_nan=True, allow_infinity=True), st.sampled_from(UNITS), st.sampled_from(NAMES),
    odd_text, long_text,
)
keys = st.one_of(st.sampled_from(SPEC_KEYS), odd_text.filter(bool), st.integers(-3, 3))
values = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(keys, inner, max_size=4)),
    max_leaves=12,
)


def dump(data: Any) -> str:
    """YAML text for any generated data (the project's own dumper; NaN becomes ``.nan``)."""
    return yamlio.dump_yaml(data)


# --- from scratch ------------------------------------------------------------------------------------------

@st.composite
def spec_shaped(draw) -> dict:
    """A mapping that looks like a spec: real keys (sometimes), random values of every type."""
    workload = draw(st.dictionaries(st.sampled_from(SPEC_KEYS[7:30]), values, max_size=8))
    if draw(st.booleans()):
        workload["model"] = draw(st.one_of(st.just({"preset": "llama3-8b"}),
                                           st.dictionaries(st.sampled_from(SPEC_KEYS[45:]), scalars, max_size=6)))
    spec = {"version": draw(st.sampled_from([1, 1, 1, 2, "1", None])), "name": draw(scalars),
            "workloads": draw(st.one_of(st.just([workload]), values))}
    spec.update(draw(st.dictionaries(st.sampled_from(SPEC_KEYS), values, max_size=5)))
    return spec


FRAGMENTS = [
    "version: 1\n", "name: x\n", "workloads:\n", "  - ", "- ", ": ", "? ", "\n", "  ", "\t", "[", "]", "{", "}",
    ", ", "&a ", "*a", "&b ", "*b", "<<: *a\n", "!!python/object/apply:os.system ['true']", "!!binary ", "!x ",
    "!!str ", "!!int ", "---\n", "...\n", "%YAML 1.1\n", "'", '"', "|\n", ">\n", "# c\n", "~", ".nan", ".inf",
    "1e400", "0x", "é", "\u2028", "\ufeff", "\x85", "\x00", "\x07", "\\", "tokens: 1T\n", "gpus: 0\n",
    "nodes: 1000000000\n", "deadline: 30\n", "rate: 400 GB\n",
]
yaml_ish_text = st.lists(st.one_of(st.sampled_from(FRAGMENTS), odd_text), max_size=40).map("".join)


@st.composite
def deep_nesting(draw) -> str:
    depth = draw(st.integers(min_value=1, max_value=3000))
    opener, closer = draw(st.sampled_from([("[", "]"), ("{a: ", "}"), ("- ", "")]))
    if opener == "- ":
        return "".join("  " * i + "-\n" for i in range(min(depth, 300))) + "  " * min(depth, 300) + "x\n"
    return "a: " + opener * depth + "1" + closer * depth + "\n"


@st.composite
def alias_text(draw) -> str:
    """Anchors and aliases, from harmless reuse to bombs and recursion."""
    width = draw(st.integers(1, 12))
    levels = draw(st.integers(1, 8))
    lines = [f"v0: &v0 [{', '.join(['x'] * width)}]"]
    for i in range(1, levels):
        lines.append(f"v{i}: &v{i} [{', '.join([f'*v{i - 1}'] * width)}]")
    extra = draw(st.sampled_from(["", "r: &r [*r]\n", "u: *undefined\n", "m:\n  <<: *v0\n", "k: {*v0 : 1}\n",
                                  "d: &v0 [y]\n", "n: &n [&n z]\nm: *n\n", "&q p: 1\nq: *q\n"]))
    return "\n".join(lines) + "\n" + extra


# --- mutations of real files ---------------------------------------------------------------------------------

def _paths(data: Any, prefix: tuple = ()) -> list[tuple]:
    out = [prefix]
    if isinstance(data, dict):
        for k, v in data.items():
            out.extend(_paths(v, prefix + (k,)))
    elif isinstance(data, list):
        for i, v in enumerate(data):
            out.extend(_paths(v, prefix + (i,)))
    return out


def _get(data: Any, path: tuple) -> Any:
    for part in path:
        data = data[part]
    return data


@st.composite
def mutated_data(draw, text: str) -> Any:
    """The document of ``text`` with 1-3 structural mutations: delete a key, change a value's type,
    rename a key (typo or unknown), swap a unit, push a number to an extreme, wrap or unwrap."""
    data = yamlio.load_yaml_text(text, "base.yaml").data
    for _ in range(draw(st.integers(1, 3))):
        paths = _paths(data)
        path = draw(st.sampled_from(paths))
        op = draw(st.sampled_from(["delete", "retype", "rename", "unit", "number", "wrap", "add", "typo"]))
        if not path:
            if op in ("wrap", "retype"):
                data = [data] if op == "wrap" else draw(values)
            continue
        parent, last = _get(data, path[:-1]), path[-1]
        node = parent[last]
        if op == "delete":
            del parent[last]
        elif op == "retype":
            parent[last] = draw(values)
        elif op == "unit":
            parent[last] = draw(st.sampled_from(UNITS))
        elif op == "number":
            parent[last] = draw(st.sampled_from(NUMBERS))
        elif op == "wrap":
            parent[last] = [node] if not isinstance(node, list) or not node else node[0]
        elif op == "add" and isinstance(node, dict):
            node[draw(keys)] = draw(values)
        elif op in ("rename", "typo") and isinstance(parent, dict):
            key = str(last)
            if op == "typo" and len(key) > 1:
                i = draw(st.integers(0, len(key) - 2))
                new = draw(st.sampled_from([key[:i] + key[i + 1:], key[:i] + key[i + 1] + key[i] + key[i + 2:],
                                            key + "s", key.upper()]))
            else:
                new = draw(keys)
            value = parent.pop(last)
            parent[new] = value
    return data


@st.composite
def mutated_text(draw, text: str) -> str:
    """``text`` with 1-3 textual mutations: duplicate, delete or swap lines (duplicate keys), cut it
    short, insert YAML syntax or odd characters, swap a unit, add anchors and aliases."""
    for _ in range(draw(st.integers(1, 3))):
        lines = text.splitlines(keepends=True) or [""]
        op = draw(st.sampled_from(["dup", "delete", "swap", "cut", "insert", "unit", "alias", "docs", "indent"]))
        i = draw(st.integers(0, len(lines) - 1))
        j = draw(st.integers(0, len(lines) - 1))
        if op == "dup":
            lines.insert(j, lines[i])
        elif op == "delete":
            del lines[i]
        elif op == "swap":
            lines[i], lines[j] = lines[j], lines[i]
        elif op == "indent":
            lines[i] = draw(st.sampled_from(["  ", "\t", " "])) + lines[i]
        text = "".join(lines)
        if op == "cut":
            text = text[: draw(st.integers(0, len(text)))]
        elif op == "insert":
            at = draw(st.integers(0, len(text)))
            text = text[:at] + draw(st.one_of(st.sampled_from(FRAGMENTS), odd_text, long_text)) + text[at:]
        elif op == "unit":
            found = list(re.finditer(r"(?<=: )[-$0-9.][^,}\n]*", text))
            if found:
                m = draw(st.sampled_from(found))
                text = text[:m.start()] + draw(st.sampled_from(UNITS + [str(n) for n in NUMBERS])) + text[m.end():]
        elif op == "alias":
            found = list(re.finditer(r"(?<=: )(?=\S)", text))
            if len(found) >= 2:
                a, b = sorted(draw(st.lists(st.sampled_from(found), min_size=2, max_size=2, unique=True)),
                              key=lambda m: m.start())
                text = text[:a.start()] + "&z " + text[a.start():b.start()] + "*z #" + text[b.start():]
        elif op == "docs":
            text = draw(st.sampled_from(["---\n" + text, text + "---\n" + text, text + "...\n", "---\n---\n"]))
    return text


def example_texts() -> st.SearchStrategy[str]:
    """A real example, mutated as data or as text."""
    base = st.sampled_from(sorted(EXAMPLES.values()))
    return st.one_of(
        base.flatmap(lambda t: mutated_data(t).map(dump)),
        base.flatmap(mutated_text),
    )


def spec_texts() -> st.SearchStrategy[str]:
    """Every kind of would-be spec: mutated examples, spec-shaped data, YAML-ish text, nesting, aliases."""
    return st.one_of(
        example_texts(),
        example_texts(),  # twice: the real files are the likeliest source of near-miss input
        spec_shaped().map(dump),
        values.map(dump),
        yaml_ish_text,
        deep_nesting(),
        alias_text(),
    )


def catalog_texts() -> st.SearchStrategy[str]:
    """A built-in catalog file mutated as data or as text, or catalog-shaped junk."""
    base = st.sampled_from(sorted(CATALOGS.values()))
    return st.one_of(
        base.flatmap(lambda t: mutated_data(t).map(dump)),
        base.flatmap(mutated_text),
        st.fixed_dictionaries({"schema_version": st.sampled_from([1, 2, "1"]),
                               "kind": st.sampled_from(["nic", "switch", "gpu", "server", "cloud", "nics", "x"]),
                               "items": values}).map(dump),
    )


# --- oracles ----------------------------------------------------------------------------------------------------

def assert_one_line(text: str) -> None:
    assert "\n" not in text and "\r" not in text and len(text) < 2_000, repr(text[:300])


def assert_located_error(exc: Exception, files: set[str]) -> None:
    """A loader error: an InputError located in one of ``files``, one line, with a message."""
    from designer.errors import InputError

    assert isinstance(exc, InputError), f"{type(exc).__name__}: {exc}"
    assert exc.location is not None and exc.location.file in files, exc.located()
    assert exc.message.strip()
    if exc.location.line is not None:
        assert exc.location.line >= 1 and (exc.location.col or 1) >= 1


def assert_cli_outcome(result, files: set[str], allowed: frozenset[int] = frozenset({0, 2})) -> None:
    """exit 0 with ``FILE: ok`` lines, or exit 2 (3 where allowed) with one located error line; never
    a traceback or an internal error."""
    assert result.exit_code in allowed, (result.exit_code, result.output[-2000:])
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert "Traceback" not in result.output and "internal error" not in result.output
    if result.exit_code == 0:
        assert result.stderr == "" or result.stderr.startswith("warning: "), result.stderr
        return
    if result.exit_code == 3:
        assert result.stderr.startswith("infeasible: ")
        return
    lines = [line for line in result.stderr.splitlines() if not line.startswith("warning: ")]
    assert lines, result.stderr[:2000]
    for line in lines:  # one located line per problem
        m = ERROR_LINE.match(line)
        assert m, line[:500]
        assert m["file"] in files, (m["file"], files)
