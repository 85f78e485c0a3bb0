"""A progress bar on stderr for the commands that run many solves (study, frontier, sweep).

Drawn with rich, only when stderr is a terminal and without ``--quiet``, so logs and pipes stay clean; it is erased when
the command ends (the results follow on stdout). The bar draws itself on every tick rather than
from a refresh thread: worker processes are forked while it is up, and a fork must not copy a
thread that may hold a lock.
"""

from __future__ import annotations

__all__ = ["ProgressBar"]

import sys
from types import TracebackType

from designer.cli.run import state


class ProgressBar:
    """``with ProgressBar("solving") as bar: study(..., progress=bar)``; ``bar(done, total)``."""

    def __init__(self, label: str, *, where: str = ""):
        self.label = label
        self.where = where
        self.live = sys.stderr.isatty() and not state.get("quiet")  # --quiet: no progress
        self._progress = None
        self._task = None

    def __enter__(self) -> ProgressBar:
        if self.live:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, \
                TimeRemainingColumn

            self._progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                      TimeElapsedColumn(), TextColumn("eta"), TimeRemainingColumn(),
                                      console=Console(stderr=True), transient=True, auto_refresh=False)
            self._progress.start()
            text = self.label + (f" on {self.where}" if self.where else "")
            self._task = self._progress.add_task(text, total=None)
        return self

    def __call__(self, done: int, total: int) -> None:
        if self._progress is not None:
            self._progress.update(self._task, completed=done, total=total or None)
            self._progress.refresh()

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self._progress is not None:
            self._progress.stop()
            self._progress = None
