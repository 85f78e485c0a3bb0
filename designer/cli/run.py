"""Running one command body: every failure becomes one line on stderr and the exit code of docs/contract.md.

Exit codes: 0 success, 1 designs differ (``diff``), 2 bad input, 3 infeasible, 4 no answer in
time, 70 internal error, 130 interrupted. ``--debug`` (set by :mod:`designer.cli.commands`) re-raises
instead, for the traceback.
"""

from __future__ import annotations

__all__ = ["state", "show", "err", "info", "echo", "colour_on", "paint", "paint_diff", "one_line", "outcome", "run"]

import os
import sys
from typing import Any, Callable, TextIO

from designer.cli import interrupt
from designer.errors import DesignerError, InfeasibleError, InputError

# Set by the global options (designer.cli.commands): --debug, --quiet, --no-color.
state = {"debug": False, "quiet": False, "color": True}

_SGR = {"red": "31", "green": "32", "yellow": "33", "bold": "1"}
# Severity words that start a message line, and their colours.
_PREFIXES = (("error:", "red"), ("internal error:", "red"), ("infeasible:", "red"), ("warning:", "yellow"),
             ("cost increase:", "red"))


def colour_on(stream: TextIO) -> bool:
    """Whether to colour what goes to ``stream``: a terminal, no ``--no-color``, no ``NO_COLOR``
    (https://no-color.org: any non-empty value), and not ``TERM=dumb``."""
    if not state.get("color", True) or os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return False
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def paint(text: str, colour: str, stream: TextIO) -> str:
    """``text`` in ``colour`` when :func:`colour_on` says so, else unchanged."""
    return f"\x1b[{_SGR[colour]}m{text}\x1b[0m" if colour_on(stream) else text


def echo(text: str, *, err: bool = False, nl: bool = True, color: bool | None = None) -> None:
    """Write ``text`` (and a newline) to stdout or stderr and flush, as ``typer.echo`` does.

    A command run through typer writes through ``typer.echo``. ``validate`` run directly
    (:mod:`designer.cli.shortcut`, without importing typer) writes the same bytes itself: its
    streams are checked first to be ones typer would use unchanged, and what it writes holds no
    ANSI code unless the colour was asked for (``color=True``), so there is none to strip.
    """
    typer: Any = sys.modules.get("typer")
    if typer is not None:
        typer.echo(text, err=err, nl=nl, color=color)
        return
    stream = sys.stderr if err else sys.stdout
    stream.write(text + "\n" if nl else text)
    stream.flush()


def show(text: str, diff_colours: bool = False) -> None:
    """Print a command's output (text as rendered, no newline added) with every control character
    that the input put in it written visibly (:func:`designer.report.escape.terminal`); with
    ``diff_colours``, the ``+ ~ -`` lines of a diff coloured afterwards (:func:`paint_diff`)."""
    from designer.report import escape

    text = escape.terminal(text)
    echo(paint_diff(text) if diff_colours else text, nl=False, color=diff_colours or None)


def err(text: str) -> None:
    """Print a line on stderr; a leading ``error:`` or ``warning:`` is coloured on a terminal."""
    for word, colour in _PREFIXES:
        if text.startswith(word):
            text = paint(word, colour, sys.stderr) + text[len(word):]
            break
    echo(text, err=True, color=colour_on(sys.stderr))


def info(text: str) -> None:
    """An informational line on stdout (a file written, a spec found valid); ``--quiet`` drops it."""
    if not state.get("quiet"):
        if not text.isprintable():  # a name from the input may carry control characters
            from designer.report import escape

            text = escape.terminal(text)
        echo(text)


_DIFF_COLOURS = {"+": "green", "-": "red", "~": "yellow"}


def paint_diff(text: str) -> str:
    """A terminal diff with its ``+`` lines green, ``-`` red and ``~`` yellow (on a terminal only)."""
    if not colour_on(sys.stdout):
        return text
    out = []
    for line in text.splitlines(keepends=True):
        colour = _DIFF_COLOURS.get(line[:1]) if line[1:2] == " " else None
        out.append(paint(line.rstrip("\n"), colour, sys.stdout) + ("\n" if line.endswith("\n") else "")
                   if colour else line)
    return "".join(out)


_MAX_MESSAGE = 1000  # characters; a message quoting a huge input value is cut here


def one_line(text: str) -> str:
    """An error message as one line (docs/contract.md): line breaks and control characters that a
    message quotes from the input are escaped, and an overlong message is cut."""
    out = "".join(ch if ch.isprintable() else repr(ch)[1:-1] for ch in text)
    return out if len(out) <= _MAX_MESSAGE else out[:_MAX_MESSAGE] + "..."


def _interrupted() -> int:
    interrupt.finished()
    interrupt.kill_started()  # a CBC solver or workers still running after SIGTERM
    err(interrupt.message())
    return interrupt.exit_code()


def _failure(exc: Exception) -> int:
    """The message and exit code of a failure (``--debug`` re-raises it for the traceback)."""
    if state["debug"] and not isinstance(exc, MemoryError):
        raise exc
    if isinstance(exc, InfeasibleError):
        err(f"infeasible: {exc.message}")
        for reason in exc.reasons:
            err(f"  - {reason}")
        if exc.relaxations:
            err("to make it feasible, any one of:")
            for relax in exc.relaxations:
                err(f"  - {relax}")
        return exc.exit_code
    if isinstance(exc, InputError):
        for problem in exc.problems:  # every problem found in the input, the first first
            err(f"error: {one_line(problem.located())}")
        return exc.exit_code
    if isinstance(exc, DesignerError):
        err(f"error: {one_line(str(exc))}")
        return exc.exit_code
    if isinstance(exc, MemoryError):
        err("error: out of memory; the input is too large")
        return 2
    err(f"internal error: {type(exc).__name__}: {exc} (rerun with --debug for the traceback; please report it)")
    return 70


def _is_exit(exc: BaseException) -> bool:
    """Whether ``exc`` is typer's request to end with a code (passed through, not a failure)."""
    typer: Any = sys.modules.get("typer")
    return typer is not None and isinstance(exc, typer.Exit)


def outcome(action: Callable[[], int | None]) -> int:
    """Run one command body and return its exit code, every failure turned into a one-line message.

    After a signal (Ctrl-C, SIGTERM), whatever the body raised or returned is the signal's: its
    one line and exit code (:mod:`designer.cli.interrupt`), even where a library swallowed the
    ``KeyboardInterrupt`` and failed in its own way (PuLP's ``except:`` once turned a Ctrl-C into
    "solver highs is not available").
    """
    try:
        code = action() or 0
        interrupt.check()
        interrupt.ended()
    except KeyboardInterrupt:
        code = _interrupted()
    except Exception as exc:  # noqa: BLE001 - the contract is "never a traceback"
        if _is_exit(exc):
            raise
        code = _interrupted() if interrupt.received() is not None else _failure(exc)
    return code


def run(action: Callable[[], int | None]) -> None:
    """Run one command body under typer (:func:`outcome`) and end the command with its exit code."""
    import typer

    raise typer.Exit(outcome(action))
