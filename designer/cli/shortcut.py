"""A plain ``designer validate`` run without loading typer: the command line's fast start.

``validate`` is the command an editor or a CI step runs most, on every save or commit, and its
start-up is most of its time: typer and the parameter coercion it builds on pydantic cost about
40 ms of a run that must stay under 0.25 s (benchmarks/startup.py). :func:`plain_validate`
recognises the plain forms of the command, where typer's parsing could only end in the same call:

    designer [--quiet|-q] [--no-color] [--debug] validate [--format|-f text|json] SPEC...

(``--format=json`` and options between the files too; ``-`` is standard input). Anything else
(``--help``, a misspelt or repeated option, no file, ``--``, an option of another place, shell
completion, a stream typer would re-encode) is left to typer, which gives its usual answer. So the
two ways to run ``validate`` print the same bytes and exit with the same code
(tests/cli/test_shortcut.py runs both).
"""

from __future__ import annotations

__all__ = ["Validate", "plain_validate", "run_validate"]

import codecs
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

from designer.cli.checking import FORMATS

_GLOBAL_FLAGS = {"--quiet": "quiet", "-q": "quiet", "--no-color": "no_color", "--debug": "debug"}
_FORMAT_OPTIONS = ("--format", "-f")


@dataclass(frozen=True)
class Validate:
    """A recognised ``validate`` call: the global flags, the spec files in order and the format."""

    specs: tuple[str, ...]
    fmt: str = "text"
    quiet: bool = False
    no_color: bool = False
    debug: bool = False


def _utf8(stream: object) -> bool:
    """Whether typer would write to ``stream`` as it is (a UTF-8 text stream; it re-wraps others)."""
    encoding = getattr(stream, "encoding", None)
    if not isinstance(encoding, str) or not hasattr(stream, "buffer"):
        return False
    try:
        return codecs.lookup(encoding).name == "utf-8"
    except LookupError:
        return False


def _plain_word(arg: str) -> bool:
    """An argument both parsers read the same way: non-empty, UTF-8, no NUL."""
    if not arg or "\0" in arg:
        return False
    try:
        arg.encode("utf-8")
    except UnicodeEncodeError:  # undecodable bytes in argv (surrogate escapes)
        return False
    return True


def plain_validate(argv: Sequence[str], environ: Mapping[str, str] = os.environ) -> Validate | None:
    """The ``validate`` call ``argv`` (``sys.argv[1:]``) makes, or None when typer must parse it."""
    if any(name.startswith("_") and name.endswith("_COMPLETE") for name in environ):
        return None  # typer's shell completion protocol
    if not (_utf8(sys.stdout) and _utf8(sys.stderr)):
        return None
    flags: dict[str, bool] = {}
    args = list(argv)
    while args and args[0] in _GLOBAL_FLAGS:
        flag = _GLOBAL_FLAGS[args.pop(0)]
        if flag in flags:
            return None
        flags[flag] = True
    if not args or args.pop(0) != "validate":
        return None
    specs: list[str] = []
    fmt: str | None = None
    while args:
        arg = args.pop(0)
        if not _plain_word(arg):
            return None
        value: str | None = None
        if arg in _FORMAT_OPTIONS:
            if not args:
                return None
            value = args.pop(0)
        elif arg.startswith("--format="):
            value = arg[len("--format="):]
        elif arg == "-" or not arg.startswith("-"):
            specs.append(arg)
            continue
        else:
            return None
        if fmt is not None or value not in FORMATS:
            return None
        fmt = value
    if not specs:
        return None
    return Validate(tuple(specs), fmt or "text", **flags)


def run_validate(call: Validate) -> int:
    """Run a recognised call as the typer command would, and return its exit code."""
    from designer.cli import checking
    from designer.cli.run import outcome, state

    state["debug"] = call.debug
    state["quiet"] = call.quiet
    state["color"] = not call.no_color
    return outcome(lambda: checking.check_specs([Path(s) for s in call.specs], call.fmt))
