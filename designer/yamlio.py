"""Safe YAML loading that remembers where every value came from, and deterministic dumping.

Loading reads PyYAML's safe parser events (libyaml's when it is built in, else the pure-Python
parser; no Python object is ever constructed from a tag), composes the node graph itself and
converts it by hand so that each key path maps to its line and column. That is what lets every
validation error say ``FILE:LINE:COL``.

Resource bounds: composition is streamed, so a document with more than ``MAX_NODES`` nodes or
nesting deeper than ``MAX_DEPTH`` is refused at the node that crosses the limit, before the rest
of the file is parsed (PyYAML's own composer would first build the whole graph: a 9 MB list of
small numbers took 80 s and 1.4 GB). The conversion then refuses duplicate keys, merge keys,
tags other than the YAML core ones, recursive aliases and alias bombs (``MAX_NODES`` counts every
alias expansion).
"""

from __future__ import annotations

__all__ = ["YamlDoc", "load_yaml", "load_yaml_text", "dump_yaml", "MAX_BYTES"]

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

import yaml

from designer.errors import InputError, Location

MAX_BYTES = 10 * 1024 * 1024  # specs and catalogs are kilobytes; 10 MB is far beyond any real one
MAX_NODES = 200_000  # converted values, counting every alias expansion
MAX_DEPTH = 64

# libyaml scans about 20x faster than the pure-Python reader (measured: 2.4 M events in 4.4 s);
# both are safe parsers, and both give the same events and marks.
_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_SEQ_TAG = "tag:yaml.org,2002:seq"
_MAP_TAG = "tag:yaml.org,2002:map"

KeyPath = tuple[Any, ...]


@dataclass(frozen=True)
class YamlDoc:
    """A parsed YAML document: plain data plus the position of every key path."""

    file: str
    data: Any
    positions: Mapping[KeyPath, tuple[int, int]] = field(default_factory=dict)
    key_positions: Mapping[KeyPath, tuple[int, int]] = field(default_factory=dict)

    def locate(self, path: KeyPath = (), *, key: bool = False) -> Location:
        """Location of the value at ``path`` (or of its key when ``key``), else its nearest parent."""
        path = tuple(path)
        table = self.key_positions if key else self.positions
        probe = path
        while True:
            if probe in table:
                line, col = table[probe]
                return Location(self.file, line, col, _dotted(path))
            if key and probe in self.positions:
                line, col = self.positions[probe]
                return Location(self.file, line, col, _dotted(path))
            if not probe:
                return Location(self.file, 1, 1, _dotted(path))
            probe = probe[:-1]


def _dotted(path: KeyPath) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


class _Converter:
    def __init__(self, file: str):
        self.file = file
        self.count = 0
        self.positions: dict[KeyPath, tuple[int, int]] = {}
        self.key_positions: dict[KeyPath, tuple[int, int]] = {}

    def error(self, node: yaml.Node, message: str) -> InputError:
        mark = node.start_mark
        return InputError(message, Location(self.file, mark.line + 1, mark.column + 1))

    def convert(self, node: yaml.Node, path: KeyPath, depth: int) -> Any:
        self.count += 1
        if self.count > MAX_NODES:
            raise self.error(node, f"document expands to more than {MAX_NODES:,} values "
                             "(alias bomb or far too large); refusing to load it")
        if depth > MAX_DEPTH:
            raise self.error(node, f"nesting deeper than {MAX_DEPTH} levels")
        if path not in self.positions:
            self.positions[path] = (node.start_mark.line + 1, node.start_mark.column + 1)
        if isinstance(node, yaml.ScalarNode):
            return self.scalar(node)
        if isinstance(node, yaml.SequenceNode):
            if node.tag != _SEQ_TAG:
                raise self.error(node, f"unsupported YAML tag {node.tag!r}")
            return [self.convert(child, path + (i,), depth + 1) for i, child in enumerate(node.value)]
        if isinstance(node, yaml.MappingNode):
            if node.tag != _MAP_TAG:
                raise self.error(node, f"unsupported YAML tag {node.tag!r}")
            out: dict[Any, Any] = {}
            for key_node, value_node in node.value:
                if key_node.tag == "tag:yaml.org,2002:merge":
                    raise self.error(key_node, "YAML merge keys ('<<') are not supported; write the keys out")
                if not isinstance(key_node, yaml.ScalarNode):
                    raise self.error(key_node, "mapping keys must be plain scalars")
                key = self.scalar(key_node)
                if isinstance(key, float) or key is None or isinstance(key, bool):
                    key = key_node.value
                if key in out:
                    raise self.error(key_node, f"duplicate key {key!r}")
                self.key_positions[path + (key,)] = (key_node.start_mark.line + 1, key_node.start_mark.column + 1)
                out[key] = self.convert(value_node, path + (key,), depth + 1)
            return out
        raise self.error(node, "unsupported YAML node")

    def scalar(self, node: yaml.ScalarNode) -> Any:
        tag = node.tag
        value = node.value
        if tag == "tag:yaml.org,2002:str":
            return value
        if tag == "tag:yaml.org,2002:null":
            return None
        if tag == "tag:yaml.org,2002:bool":
            return value.lower() in ("true", "yes", "on")
        if tag == "tag:yaml.org,2002:int":
            text = value.replace("_", "")
            try:
                if len(text) > 40:
                    raise ValueError
                return int(text, 0) if text[:2].lower() in ("0x", "0o", "0b") else int(text)
            except ValueError:
                raise self.error(node, f"cannot read integer {value[:40]!r}") from None
        if tag == "tag:yaml.org,2002:float":
            text = value.replace("_", "").lower()
            if text in (".nan", ".inf", "+.inf", "-.inf"):
                raise self.error(node, f"{value!r} is not a finite number")
            try:
                number = float(text)
            except ValueError:
                raise self.error(node, f"cannot read number {value[:40]!r}") from None
            if not math.isfinite(number):
                raise self.error(node, f"{value[:40]!r} is out of range")
            return number
        if tag in ("tag:yaml.org,2002:timestamp",):
            return value
        raise self.error(node, f"unsupported YAML tag {tag!r}")


class _Composer:
    """Builds the node graph of one document from parser events, stopping at the first limit crossed.

    Iterative (an explicit stack), so deep nesting cannot exhaust Python's recursion limit.
    """

    def __init__(self, loader: Any, file: str):
        self.loader = loader
        self.file = file
        self.anchors: dict[str, yaml.Node] = {}
        self.count = 0

    def error(self, event: yaml.Event, message: str) -> InputError:
        mark = event.start_mark
        return InputError(message, Location(self.file, mark.line + 1, mark.column + 1))

    def document(self) -> yaml.Node | None:
        """The single document's root node, ``None`` for an empty stream."""
        loader = self.loader
        loader.get_event()  # StreamStartEvent
        if loader.check_event(yaml.StreamEndEvent):
            return None
        loader.get_event()  # DocumentStartEvent
        root = self.node()
        loader.get_event()  # DocumentEndEvent
        if not loader.check_event(yaml.StreamEndEvent):
            raise self.error(loader.peek_event(), "several YAML documents in one file; expected exactly one")
        return root

    def _counted(self, event: yaml.Event) -> None:
        self.count += 1
        if self.count > MAX_NODES:
            raise self.error(event, f"document has more than {MAX_NODES:,} values (far too large); "
                             "refusing to load it")

    def node(self) -> yaml.Node:
        loader = self.loader
        stack: list[list[Any]] = []  # [open collection node, pending mapping key node or None]
        while True:
            event = loader.get_event()
            if isinstance(event, yaml.AliasEvent):
                self._counted(event)
                done = self.anchors.get(event.anchor)
                if done is None:
                    raise self.error(event, f"alias '*{event.anchor}' names no anchor defined before it")
                if any(entry[0] is done for entry in stack):
                    raise self.error(event, f"alias '*{event.anchor}' refers to a collection that contains it")
            elif isinstance(event, yaml.ScalarEvent):
                self._counted(event)
                tag = event.tag
                if tag is None or tag == "!":
                    tag = loader.resolve(yaml.ScalarNode, event.value, event.implicit)
                done = yaml.ScalarNode(tag, event.value, event.start_mark, event.end_mark, style=event.style)
                if event.anchor is not None:
                    self.anchors[event.anchor] = done
            elif isinstance(event, (yaml.SequenceStartEvent, yaml.MappingStartEvent)):
                self._counted(event)
                if len(stack) >= MAX_DEPTH:
                    raise self.error(event, f"nesting deeper than {MAX_DEPTH} levels")
                kind = yaml.SequenceNode if isinstance(event, yaml.SequenceStartEvent) else yaml.MappingNode
                tag = event.tag
                if tag is None or tag == "!":
                    tag = loader.resolve(kind, None, event.implicit)
                node = kind(tag, [], event.start_mark, event.end_mark, flow_style=event.flow_style)
                if event.anchor is not None:
                    self.anchors[event.anchor] = node
                stack.append([node, None])
                continue
            elif isinstance(event, (yaml.SequenceEndEvent, yaml.MappingEndEvent)):
                done = stack.pop()[0]
                done.end_mark = event.end_mark
            else:  # the parser only yields the events above inside a document
                raise self.error(event, f"unexpected YAML event {type(event).__name__}")
            if not stack:
                return done
            parent = stack[-1]
            if isinstance(parent[0], yaml.SequenceNode):
                parent[0].value.append(done)
            elif parent[1] is None:
                parent[1] = done
            else:
                parent[0].value.append((parent[1], done))
                parent[1] = None


def _reader_location(exc: yaml.YAMLError, text: str, file: str) -> Location:
    """Line and column of a reader error (it carries a character offset, not a mark)."""
    position = getattr(exc, "position", None)
    if not isinstance(position, int) or not 0 <= position <= len(text):
        return Location(file)
    line = text.count("\n", 0, position) + 1
    return Location(file, line, position - (text.rfind("\n", 0, position) + 1) + 1)


def load_yaml_text(text: str, file: str = "<string>") -> YamlDoc:
    """Parse one YAML document from ``text``, keeping positions.

    Raises:
        InputError: malformed YAML, an empty text, several documents, a non-core tag, a duplicate
            or merge key, a non-finite number, or a limit crossed (``MAX_NODES``, ``MAX_DEPTH``);
            located ``FILE:LINE:COL`` where the parser knows the place.
    """
    loader = None
    try:
        loader = _Loader(text)
        root = _Composer(loader, file).document()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        loc = Location(file, mark.line + 1, mark.column + 1) if mark else Location(file)
        problem = " ".join((exc.problem or exc.context or "malformed YAML").split())
        raise InputError(f"malformed YAML: {problem}", loc) from None
    except yaml.reader.ReaderError as exc:
        raise InputError(f"malformed YAML: {' '.join(str(exc.reason).split())}",
                         _reader_location(exc, text, file)) from None
    except yaml.YAMLError as exc:
        raise InputError(f"malformed YAML: {str(exc).splitlines()[0]}", Location(file)) from None
    except (UnicodeError, ValueError, RecursionError) as exc:
        raise InputError(f"cannot read YAML: {type(exc).__name__}", Location(file)) from None
    finally:
        if loader is not None:
            loader.dispose()
    if root is None or (isinstance(root, yaml.ScalarNode) and root.tag == "tag:yaml.org,2002:null"
                        and root.value == ""):
        raise InputError("the file is empty; expected a YAML mapping", Location(file, 1, 1))
    converter = _Converter(file)
    try:
        data = converter.convert(root, (), 0)
    except RecursionError:
        raise InputError(f"nesting deeper than {MAX_DEPTH} levels", Location(file)) from None
    return YamlDoc(file, data, converter.positions, converter.key_positions)


def load_yaml(path: str | Path, *, max_bytes: int = MAX_BYTES) -> YamlDoc:
    """Read and parse one YAML file, refusing missing, unreadable, binary or oversized files."""
    p = Path(path)
    name = str(path)
    try:
        size = p.stat().st_size
    except FileNotFoundError:
        raise InputError("no such file", Location(name)) from None
    except OSError as exc:
        raise InputError(f"cannot read file: {exc.strerror}", Location(name)) from None
    if p.is_dir():
        raise InputError("is a directory, not a YAML file", Location(name))
    if size > max_bytes:
        raise InputError(f"file is {size:,} bytes; the limit is {max_bytes:,}", Location(name))
    try:
        raw = p.read_bytes()[: max_bytes + 1]
    except OSError as exc:
        raise InputError(f"cannot read file: {exc.strerror}", Location(name)) from None
    if len(raw) > max_bytes:
        raise InputError(f"file is larger than the limit of {max_bytes:,} bytes", Location(name))
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"not UTF-8 text (byte {exc.start})", Location(name)) from None
    if "\x00" in text:
        raise InputError("binary file (contains NUL bytes), not YAML", Location(name))
    return load_yaml_text(text, name)


class _Dumper(yaml.SafeDumper):
    """Block style, no aliases, keys in the order given (callers order them)."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def _str_representer(dumper: yaml.SafeDumper, data: str) -> yaml.Node:
    style = "|" if "\n" in data else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", data, style=style)


_Dumper.add_representer(str, _str_representer)


def dump_yaml(data: Any) -> str:
    """Deterministic YAML text: insertion-ordered keys, block style, no aliases, wide lines."""
    return yaml.dump(data, Dumper=_Dumper, sort_keys=False, default_flow_style=False,
                     allow_unicode=True, width=1000)
