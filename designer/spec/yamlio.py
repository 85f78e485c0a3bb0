"""Safe YAML loading that remembers where every value came from, and deterministic dumping.

Loading reads the events of PyYAML's safe parser (libyaml's when it is built in, else the
pure-Python one) and builds plain data from them in one pass, recording the line and column of
every key path. No Python object is ever constructed from a tag, and no node graph is built. That
is what lets every validation error say ``FILE:LINE:COL``.

Refused, each located at the offending node: duplicate keys, merge keys (``<<``), tags beyond the
YAML core schema (``!!python/object``, ``!!binary``, ``!custom``), non-scalar keys, NaN and
infinities, integers of more than 40 digits, undefined and recursive aliases, several documents.

Resource bounds (docs/reliability.md): a file over ``MAX_BYTES`` is refused before it is read; a
document is refused at the value that crosses ``MAX_NODES`` (every alias expansion counts, so an
alias bomb stops there) or ``MAX_DEPTH``, before the rest of the file is parsed. PyYAML's own
composer would first build the whole node graph: a 9 MB list of small numbers took 80 s and
1.4 GB that way, and is now refused in under a second.
"""

from __future__ import annotations

__all__ = [
    "YamlDoc", "read_text", "read_regular_file", "load_yaml", "load_yaml_text", "dump_yaml", "shown", "MAX_BYTES",
    "MAX_NODES", "MAX_DEPTH", "NOT_A_CATALOG",
]

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Mapping

import yaml

from designer.errors import InputError, Location
from designer.spec.files import MAX_BYTES, read_regular_file, read_text

MAX_NODES = 200_000  # values (scalars and collections), counting every alias expansion
MAX_DEPTH = 64  # nested collections; real specs nest 4 deep

# libyaml scans about 20x faster than the pure-Python reader (measured here: 2.4 M events in
# 4.4 s); both are safe parsers and give the same events and marks (tests/spec/test_yamlio.py).
_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

_CORE = "tag:yaml.org,2002:"
_SEQ_TAG, _MAP_TAG, _MERGE_TAG = _CORE + "seq", _CORE + "map", _CORE + "merge"
# The one message for a file named as a catalog that cannot be used as one: missing, unreadable,
# not a regular file, too large, binary, or not recognisably a catalog. One wording for every
# case, so that naming a path never tells whether it exists or what it holds.
NOT_A_CATALOG = ("is not a readable catalog file: a regular YAML file of at most 10 MB with schema_version, "
                 "kind and items")
_SHORT = 60  # characters of a key, tag or anchor quoted in a message

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


def _shown(value: Any) -> str:
    """``repr`` of a key or tag from the input, cut so that a message stays one short line."""
    text = repr(value)
    return text if len(text) <= _SHORT else text[:_SHORT] + "..."


def shown(value: Any, limit: int = _SHORT) -> str:
    """A value from the input as a message quotes it: ``repr`` (so line breaks, escapes and control
    characters are visible as ``\\n``, ``\\x1b``), cut to ``limit`` characters.

    Examples:
        >>> shown("a\\x1b[2Jb")
        "'a\\\\x1b[2Jb'"
        >>> shown("x" * 100, 10)
        "'xxxxxxxx..."
    """
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "..."


def _dotted(path: KeyPath) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


class _Frame:
    """An open collection while its events arrive."""

    __slots__ = ("data", "path", "is_seq", "key", "anchor")

    def __init__(self, data: Any, path: KeyPath, is_seq: bool, anchor: list[Any] | None):
        self.data = data
        self.path = path
        self.is_seq = is_seq
        self.key: Any = _NO_KEY  # a mapping's key waiting for its value
        # The [start, end] span of an anchor defined on this collection (live events only). The
        # frame keeps the span itself, not the name: an inner anchor may reuse the name.
        self.anchor = anchor


_NO_KEY = object()


class _Builder:
    """Plain data and positions from the parser's events, in one pass with explicit stacks.

    Aliases replay the events of their anchor from a log, so an expansion is checked and counted
    exactly like the original (and the log exists only once a document defines an anchor).
    Iterative, so deep nesting cannot exhaust Python's recursion limit.
    """

    def __init__(self, loader: Any, file: str):
        self.loader = loader
        self.file = file
        self.count = 0
        self.positions: dict[KeyPath, tuple[int, int]] = {}
        self.key_positions: dict[KeyPath, tuple[int, int]] = {}
        self.log: list[yaml.Event] | None = None  # live events since the first anchor
        self.anchors: dict[str, list[Any]] = {}  # name -> [start, end or None while open] in log
        self.resolved: dict[tuple[str, Any], str] = {}  # plain scalar -> tag (a regex per type)

    def error(self, event: yaml.Event, message: str) -> InputError:
        mark = event.start_mark
        return InputError(message, Location(self.file, mark.line + 1, mark.column + 1))

    def document(self) -> tuple[bool, Any]:
        """``(found, data)`` of the single document; ``found`` is False for an empty stream."""
        loader = self.loader
        loader.get_event()  # StreamStartEvent
        if loader.check_event(yaml.StreamEndEvent):
            return False, None
        loader.get_event()  # DocumentStartEvent
        data = self.value()
        loader.get_event()  # DocumentEndEvent
        if not loader.check_event(yaml.StreamEndEvent):
            raise self.error(loader.peek_event(), "several YAML documents in one file; expected exactly one")
        return True, data

    def _next(self, replays: list[Iterator[yaml.Event]]) -> tuple[yaml.Event, bool]:
        while replays:
            event = next(replays[-1], None)
            if event is not None:
                return event, False
            replays.pop()
        event = self.loader.get_event()
        if self.log is not None:
            self.log.append(event)
        return event, True

    def value(self) -> Any:
        stack: list[_Frame] = []
        replays: list[Iterator[yaml.Event]] = []
        alias_at: yaml.Event | None = None  # the live alias being expanded, for error locations
        positions = self.positions
        while True:
            event, live = self._next(replays)
            if live:
                alias_at = None
            cls = type(event)
            if cls is yaml.SequenceEndEvent or cls is yaml.MappingEndEvent:
                frame = stack.pop()
                if frame.anchor is not None:
                    frame.anchor[1] = len(self.log)
                done = frame.data
            elif cls is yaml.AliasEvent:
                span = self.anchors.get(event.anchor)
                if span is None:
                    raise self.error(event, f"alias '*{_shown(event.anchor)[1:-1]}' names no anchor defined before it")
                if span[1] is None:
                    raise self.error(event, f"alias '*{_shown(event.anchor)[1:-1]}' refers to a collection that contains it")
                if live:
                    alias_at = event
                replays.append(iter(self.log[span[0]:span[1]]))
                continue
            else:
                parent = stack[-1] if stack else None
                if parent is not None and not parent.is_seq and parent.key is _NO_KEY:
                    self.key(parent, event, live)  # a mapping key: a plain scalar
                    continue
                path = () if parent is None else parent.path + ((len(parent.data),) if parent.is_seq else (parent.key,))
                self.count += 1
                if self.count > MAX_NODES:
                    where = alias_at or event
                    raise self.error(where, f"document expands to more than {MAX_NODES:,} values "
                                     f"({'alias bomb or ' if self.log is not None else ''}far too large); "
                                     "refusing to load it")
                if path not in positions:
                    positions[path] = (event.start_mark.line + 1, event.start_mark.column + 1)
                span = None
                if live and event.anchor is not None:
                    span = self.define(event)
                if cls is yaml.ScalarEvent:
                    done = self.scalar(event)
                    if span is not None:
                        span[1] = len(self.log)
                elif cls is yaml.SequenceStartEvent or cls is yaml.MappingStartEvent:
                    if len(stack) >= MAX_DEPTH:
                        raise self.error(event, f"nesting deeper than {MAX_DEPTH} levels")
                    is_seq = cls is yaml.SequenceStartEvent
                    tag = event.tag
                    if tag is not None and tag != "!" and tag != (_SEQ_TAG if is_seq else _MAP_TAG):
                        raise self.error(event, f"unsupported YAML tag {_shown(tag)}")
                    stack.append(_Frame([] if is_seq else {}, path, is_seq, span))
                    continue
                else:  # the parser yields only the events above inside a document
                    raise self.error(event, f"unexpected YAML event {cls.__name__}")
            if not stack:
                return done
            parent = stack[-1]
            if parent.is_seq:
                parent.data.append(done)
            else:
                parent.data[parent.key] = done
                parent.key = _NO_KEY

    def key(self, frame: _Frame, event: yaml.Event, live: bool) -> None:
        """Read a mapping key; refuse non-scalar, merge and duplicate keys."""
        if type(event) is not yaml.ScalarEvent:
            raise self.error(event, "mapping keys must be plain scalars")
        if live and event.anchor is not None:
            span = self.define(event)
            span[1] = len(self.log)
        tag = self.tag(event)
        if tag == _MERGE_TAG:
            raise self.error(event, "YAML merge keys ('<<') are not supported; write the keys out")
        key = self.scalar(event, tag)
        if isinstance(key, float) or key is None or isinstance(key, bool):
            key = event.value  # "yes", "~" and "1.5" stay the text written
        if key in frame.data:
            raise self.error(event, f"duplicate key {_shown(key)}")
        self.key_positions[frame.path + (key,)] = (event.start_mark.line + 1, event.start_mark.column + 1)
        frame.key = key

    def define(self, event: yaml.Event) -> list[Any]:
        """Start the log span of the anchor ``event`` defines; an anchor is defined once (as PyYAML asks)."""
        if event.anchor in self.anchors:
            first = self.log[self.anchors[event.anchor][0]].start_mark
            raise self.error(event, f"anchor '&{_shown(event.anchor)[1:-1]}' is defined twice "
                             f"(first at line {first.line + 1})")
        if self.log is None:
            self.log = [event]
        span = self.anchors[event.anchor] = [len(self.log) - 1, None]
        return span

    def tag(self, event: yaml.ScalarEvent) -> str:
        tag = event.tag
        if tag is not None and tag != "!":
            return tag
        value = event.value
        if len(value) > 64:  # long texts are strings or errors; not worth a cache entry
            return self.loader.resolve(yaml.ScalarNode, value, event.implicit)
        cache_key = (value, event.implicit)
        tag = self.resolved.get(cache_key)
        if tag is None:
            tag = self.resolved[cache_key] = self.loader.resolve(yaml.ScalarNode, value, event.implicit)
        return tag

    def scalar(self, event: yaml.ScalarEvent, tag: str | None = None) -> Any:
        """The value of a scalar under the YAML core schema (timestamps stay text)."""
        tag = tag or self.tag(event)
        value = event.value
        if tag == _CORE + "str":
            return value
        if tag == _CORE + "null":
            return None
        if tag == _CORE + "bool":
            word = value.lower()
            if word not in ("true", "yes", "on", "false", "no", "off"):  # only with an explicit !!bool
                raise self.error(event, f"cannot read boolean {value[:40]!r}")
            return word in ("true", "yes", "on")
        if tag == _CORE + "int":
            text = value.replace("_", "")
            try:
                if len(text) > 40:
                    raise ValueError
                return int(text, 0) if text[:2].lower() in ("0x", "0o", "0b") else int(text)
            except ValueError:
                raise self.error(event, f"cannot read integer {value[:40]!r}") from None
        if tag == _CORE + "float":
            text = value.replace("_", "").lower()
            if text in (".nan", ".inf", "+.inf", "-.inf"):
                raise self.error(event, f"{value!r} is not a finite number")
            try:
                number = float(text)
            except ValueError:
                raise self.error(event, f"cannot read number {value[:40]!r}") from None
            if not math.isfinite(number):
                raise self.error(event, f"{value[:40]!r} is out of range")
            return number
        if tag == _CORE + "timestamp":
            return value
        raise self.error(event, f"unsupported YAML tag {_shown(tag)}")


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
        builder = _Builder(loader, file)
        found, data = builder.document()
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
    if not found or (data is None and _is_blank(text)):
        raise InputError("the file is empty; expected a YAML mapping", Location(file, 1, 1))
    return YamlDoc(file, data, builder.positions, builder.key_positions)


def _is_blank(text: str) -> bool:
    """Whether a document holds nothing but markers and comments (``---``, ``...``, ``# x``)."""
    for line in text.splitlines():
        stripped = line.strip()
        if stripped and not stripped.startswith("#") and stripped not in ("---", "..."):
            return False
    return True


def load_yaml(path: str | Path, *, max_bytes: int = MAX_BYTES) -> YamlDoc:
    """Read and parse one YAML file (:func:`read_text`, then :func:`load_yaml_text`).

    Raises:
        InputError: the file cannot be read or is not one valid YAML document.
    """
    return load_yaml_text(read_text(path, max_bytes=max_bytes), str(path))


class _Dumper(yaml.SafeDumper):
    """Block style, no aliases, keys in the order given (callers order them)."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


# Line breaks other than "\n": PyYAML's emitter writes them raw inside plain or single-quoted
# scalars, and reading them back folds them into spaces ("\x85" came back as " "). Double quotes
# escape them.
_ODD_BREAKS = ("\r", "\x85", "\u2028", "\u2029")


def _str_representer(dumper: yaml.SafeDumper, data: str) -> yaml.Node:
    style = '"' if any(b in data for b in _ODD_BREAKS) else ("|" if "\n" in data else None)
    return dumper.represent_scalar("tag:yaml.org,2002:str", data, style=style)


_Dumper.add_representer(str, _str_representer)


def dump_yaml(data: Any) -> str:
    """Deterministic YAML text: insertion-ordered keys, block style, no aliases, wide lines."""
    return yaml.dump(data, Dumper=_Dumper, sort_keys=False, default_flow_style=False,
                     allow_unicode=True, width=1000)
