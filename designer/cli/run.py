"""Running one command body: every failure becomes one line on stderr and the exit code of docs/contract.md.

Exit codes: 0 success, 1 designs differ (``diff``), 2 bad input, 3 infeasible, 4 no answer in
time, 70 internal error, 130 interrupted. ``--debug`` (set by :mod:`designer.cli.commands`) re-raises
instead, for the traceback.
"""

from __future__ import annotations

__all__ = ["state", "err", "one_line", "run"]

from typing import Callable

import typer

from designer.errors import DesignerError, InfeasibleError, InputError

state = {"debug": False}


def err(text: str) -> None:
    """Print a line on stderr."""
    typer.echo(text, err=True)


_MAX_MESSAGE = 1000  # characters; a message quoting a huge input value is cut here


def one_line(text: str) -> str:
    """An error message as one line (docs/contract.md): line breaks and control characters that a
    message quotes from the input are escaped, and an overlong message is cut."""
    out = "".join(ch if ch.isprintable() else repr(ch)[1:-1] for ch in text)
    return out if len(out) <= _MAX_MESSAGE else out[:_MAX_MESSAGE] + "..."


def run(action: Callable[[], int | None]) -> None:
    """Run one command body, turning every failure into a one-line message and an exit code."""
    try:
        code = action() or 0
    except typer.Exit:
        raise
    except InfeasibleError as exc:
        if state["debug"]:
            raise
        err(f"infeasible: {exc.message}")
        for reason in exc.reasons:
            err(f"  - {reason}")
        if exc.relaxations:
            err("to make it feasible, any one of:")
            for relax in exc.relaxations:
                err(f"  - {relax}")
        code = exc.exit_code
    except InputError as exc:
        if state["debug"]:
            raise
        for problem in exc.problems:  # every problem found in the input, the first first
            err(f"error: {one_line(problem.located())}")
        code = exc.exit_code
    except DesignerError as exc:
        if state["debug"]:
            raise
        err(f"error: {one_line(str(exc))}")
        code = exc.exit_code
    except KeyboardInterrupt:
        err("interrupted; no output was written")
        code = 130
    except MemoryError:
        err("error: out of memory; the input is too large")
        code = 2
    except Exception as exc:  # noqa: BLE001 - the contract is "never a traceback"
        if state["debug"]:
            raise
        err(f"internal error: {type(exc).__name__}: {exc} (rerun with --debug for the traceback; please report it)")
        code = 70
    raise typer.Exit(code)
