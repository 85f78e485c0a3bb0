"""The face: ``designer``'s command line, one module per command group (:mod:`designer.cli.commands`).

``designer = "designer.cli:main"`` is the console script; ``app`` is the typer app (for tests and
``python -m designer``). :func:`main` installs the signal handlers (:mod:`designer.cli.interrupt`)
before it imports anything else, so a Ctrl-C while the command's libraries load is one line and
exit 130 too, not a traceback. A plain ``designer validate`` runs without typer
(:mod:`designer.cli.shortcut`); every other command line goes to the typer app.
"""

from __future__ import annotations

__all__ = ["app", "main"]


def main() -> None:
    """Console-script entry point."""
    import gc
    import os
    import sys

    # Start-up creates some 100,000 objects (pydantic's and the catalog's), none of them garbage,
    # and the cyclic collector would pass over them again and again: 20 ms of a 0.23 s validate.
    # A plain validate keeps it off to the end (a short process whose input is bounded, and
    # reference counting still frees everything not in a cycle); every other command turns it
    # back on before typer loads.
    gc.disable()

    from designer.cli import interrupt

    by_signal = False
    try:
        interrupt.install()
        # Nothing the command started outlives a signal. Loaded now (os and signal only): the
        # watchdog that calls it must not import while the main thread may hold an import lock.
        from designer.study.processes import kill_children

        interrupt.on_kill(kill_children)
        _no_pydantic_plugins()
        from designer.cli import shortcut

        call = shortcut.plain_validate(sys.argv[1:])
        if call is not None:
            raise SystemExit(shortcut.run_validate(call))
        gc.enable()
        from designer.cli.commands import run_app

        run_app()
    except KeyboardInterrupt:  # while the handlers were installed or the command's modules loaded
        interrupt.finished()
        interrupt.kill_started()
        print(interrupt.message(), file=sys.stderr)
        code: object = interrupt.exit_code()
        by_signal = True
    except SystemExit as exc:
        code = exc.code
        if interrupt.received() is not None and not interrupt.is_finished():
            # Typer ends a command silently (exit 130) on a Ctrl-C while it parses the arguments,
            # which imports pydantic for the parameter types: the signal's line is still due.
            interrupt.finished()
            interrupt.kill_started()
            print(interrupt.message(), file=sys.stderr)
            code = interrupt.exit_code()
    else:
        code = 0
    if not by_signal and interrupt.received() is None:
        interrupt.ended()  # (a command body already said so: interrupt.ended is idempotent)
        raise SystemExit(code)
    # After a signal, end here: CPython remembers a KeyboardInterrupt raised inside code that C
    # ran during an import and would end the process by SIGINT (exit -2) whatever code we exit with.
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code if isinstance(code, int) else 1)


def _no_pydantic_plugins() -> None:
    """Pydantic looks for plugins (``pydantic`` entry points) when it builds its first validator,
    which imports ``importlib.metadata`` and reads every installed package's metadata: 15 ms of a
    ``validate`` run. The command line uses no pydantic plugin, so its process does not look for
    any (what ``PYDANTIC_DISABLE_PLUGINS=1`` does, without the import). A library user's process
    is left alone: only the console script calls this."""
    import sys
    import types

    name = "pydantic.plugin._loader"
    if name not in sys.modules:
        loader = types.ModuleType(name, "No pydantic plugins in designer's command line.")
        loader.get_plugins = lambda: ()  # type: ignore[attr-defined]
        sys.modules[name] = loader


def __getattr__(name: str):
    if name == "app":
        from designer.cli.commands import app
        return app
    raise AttributeError(f"module 'designer.cli' has no attribute {name!r}")
