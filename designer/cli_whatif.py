"""``designer draw``, ``designer frontier`` and ``designer sweep``: pictures and what-if analyses.

Thin commands: parse the options, make one call into :mod:`designer.draw` or
:mod:`designer.whatif`, render (:mod:`designer.plot`, tables here), write, set the exit code
(0 done, 2 bad input, as for every command). ``register(app)`` adds them to the main app.
"""

from __future__ import annotations

__all__ = ["register", "draw_command", "frontier_command", "sweep_command", "parse_range", "parse_variation",
           "render_frontier_table", "render_sweep_table", "frontier_to_json_dict", "sweep_to_json_dict",
           "MAX_POINTS"]

import json
import math
import os
import re
import sys
import tempfile
from pathlib import Path
from typing import Any, Callable, List, Optional

import typer
from tabulate import tabulate

from designer import units
from designer.cli_common import JOBS_OPTION, SOLVER_OPTION, TIME_LIMIT_OPTION, SolverName
from designer.errors import InputError
from designer.whatif import VARIABLES, Frontier, Outcome, Sweep, Variation

_DEFAULT_UTILIZATION = "0.5:0.95:0.05"
MAX_POINTS = 200  # most values in one range: each is a full solve


def _run(body: Callable[[], int | None]) -> None:
    # The main CLI's runner maps every error to its one-line message and exit code.
    from designer import cli

    cli._run(body)


def _fraction(text: str) -> float:
    """``0.8`` or ``80%``."""
    return units.parse_fraction(text if text.strip().endswith("%") else float(text))


def _workers(jobs: Optional[int]) -> int:
    if jobs is not None:
        if jobs < 1:
            raise InputError(f"--jobs must be at least 1, got {jobs}")
        return jobs
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


class _Bar:
    """A one-line progress bar on stderr, drawn only on a terminal (logs stay clean)."""

    def __init__(self, label: str, width: int = 30):
        self.label, self.width = label, width
        self.live = sys.stderr.isatty()

    def __call__(self, done: int, total: int) -> None:
        if not self.live or total <= 0:
            return
        filled = self.width * done // total
        sys.stderr.write(f"\r{self.label} [{'#' * filled}{'-' * (self.width - filled)}] {done}/{total}")
        sys.stderr.flush()

    def close(self) -> None:
        if self.live:  # erase the bar: the results follow on stdout
            sys.stderr.write("\r" + " " * (len(self.label) + self.width + 16) + "\r")
            sys.stderr.flush()


def _write(path: Path, data: bytes | str) -> None:
    """Replace ``path`` with ``data`` atomically: text through :func:`designer.atomic.write_atomic`,
    bytes (PNG) by the same recipe (temporary file in the target's folder, then rename)."""
    from designer import atomic

    if isinstance(data, str):
        atomic.write_atomic(path, data)
        return
    target = path.resolve()
    tmp = None
    try:
        # An existing picture keeps its permission bits; a new one gets rw-r--r--.
        mode = target.stat().st_mode & 0o777 if target.exists() else 0o644
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        os.chmod(tmp, mode)
        os.replace(tmp, target)
        tmp = None
    except OSError as exc:
        raise InputError(f"cannot write {path}: {(exc.strerror or str(exc)).lower()}") from None
    finally:
        if tmp is not None and os.path.exists(tmp):
            os.unlink(tmp)


# ---------------------------------------------------------------- option parsing


def parse_range(text: str, parse: Callable[[str], float] = float, *, what: str = "range") -> tuple[float, ...]:
    """``"0.5:0.95:0.05"`` (start:stop:step, stop included) or ``"0.6,0.7,0.9"`` as values.

    Args:
        text: The range.
        parse: Parser of one value (``units.parse_money`` for budgets).
        what: The option's name, for error messages.

    Raises:
        InputError: Malformed, empty, decreasing, or more than :data:`MAX_POINTS` values.

    Examples:
        >>> parse_range("0.5:0.7:0.1")
        (0.5, 0.6, 0.7)
        >>> parse_range("2,1")
        (1.0, 2.0)
    """
    def one(item: str) -> float:
        try:
            value = float(parse(item.strip()))
        except (ValueError, units.UnitError) as exc:
            raise InputError(f"{what}: cannot read {item.strip()!r}: {exc}") from None
        if not math.isfinite(value):
            raise InputError(f"{what}: {item.strip()!r} is not a finite number")
        return value

    if ":" in text:
        parts = text.split(":")
        if len(parts) != 3:
            raise InputError(f"{what}: expected start:stop:step, e.g. 0.5:0.95:0.05; got {text!r}")
        lo, hi, step = (one(p) for p in parts)
        if step <= 0 or hi < lo:
            raise InputError(f"{what}: need step > 0 and stop >= start; got {text!r}")
        count = math.floor((hi - lo) / step + 1e-9) + 1
        values = [round(lo + i * step, 12) for i in range(min(count, MAX_POINTS + 1))]
    else:
        values = sorted({one(p) for p in text.split(",") if p.strip()})
    if not values:
        raise InputError(f"{what}: no values in {text!r}")
    if len(values) > MAX_POINTS:
        raise InputError(f"{what}: {len(values)} values; at most {MAX_POINTS} (each is a full solve)")
    return tuple(values)


_CHANGE = re.compile(r"^\s*([+-]?\d+(?:\.\d*)?|[+-]?\.\d+)\s*%\s*$")


def _change(text: str, what: str) -> float:
    m = _CHANGE.match(text)
    if m is None:
        raise InputError(f"{what}: expected a change in percent such as -30% or +50%, got {text.strip()!r}")
    return float(m.group(1)) / 100.0


def parse_variation(text: str) -> Variation:
    """``"gpu_price=-30%..+30%"`` as a :class:`Variation`.

    Raises:
        InputError: Unknown variable, malformed range, or a change of -100% or less.

    Examples:
        >>> parse_variation("electricity=-50%..+100%")
        Variation(name='electricity', low=-0.5, high=1.0)
    """
    name, sep, span = text.partition("=")
    name = name.strip()
    if not sep or name not in VARIABLES:
        known = ", ".join(VARIABLES)
        raise InputError(f"--vary {text!r}: expected NAME=LOW..HIGH with NAME one of {known}")
    low_text, sep, high_text = span.partition("..")
    if not sep:
        raise InputError(f"--vary {text!r}: expected a range such as -30%..+30%")
    low, high = _change(low_text, f"--vary {name}"), _change(high_text, f"--vary {name}")
    if high < low:
        low, high = high, low
    if low <= -1.0:
        raise InputError(f"--vary {name}: a price cannot fall by 100% or more (got {low:+.0%})")
    return Variation(name, low, high)


# ---------------------------------------------------------------- renderers (pure)


def _pct(change: float) -> str:
    return f"{change:+.1%}" if change else "0%"


def _status(o: Outcome) -> str:
    return units.format_money_short(o.total_usd) if o.status == "ok" else o.status


def _target_text(target: str, value: float) -> str:
    if target == "budget":
        return units.format_money_short(value)
    if target == "utilization":
        return f"{value:.0%}" if round(value * 100, 6).is_integer() else f"{value:.1%}"
    return f"{value:g}x"


def render_frontier_table(frontier: Frontier) -> str:
    """The frontier as a text table: one row per value, the optimum, then every class's best."""
    # Class headers without their "fabric=" / "deployment=" prefix: the values do not overlap.
    headers = [frontier.target, "optimum", "chosen system", *(c.partition("=")[2] or c for c in frontier.classes)]
    rows = []
    for p in frontier.points:
        o = p.outcome
        classes = dict(o.classes)
        rows.append([_target_text(frontier.target, p.value), _status(o), o.system or o.reason,
                     *(units.format_money_short(classes.get(c)) for c in frontier.classes)])
    text = tabulate(rows, headers=headers, tablefmt="simple", disable_numparse=True) + "\n"
    for s in frontier.switchovers:
        text += (f"optimum switches between {_target_text(frontier.target, s.low)} and "
                 f"{_target_text(frontier.target, s.high)}: {s.before} -> {s.after}\n")
    return text


def render_sweep_table(result: Sweep) -> str:
    """The sweep as text: the base decision, a table per variable, then where the decision changes."""
    base = result.base
    out = [f"base: {base.system or base.status} ({_status(base)})"]
    for var in result.variations:
        rows = [[_pct(p.change), _status(p.outcome), p.outcome.system or p.outcome.reason,
                 "" if p.outcome.key == base.key else "changed"]
                for p in result.points if p.variable == var.name]
        out.append("")
        out.append(tabulate(rows, headers=[var.name, "total", "chosen system", "vs base"], tablefmt="simple",
                            disable_numparse=True))
    out.append("")
    if not result.crossovers:
        out.append("the chosen design does not change over the ranges swept")
    for x in result.crossovers:
        out.append(f"{x.variable}: the design changes between {_pct(x.low)} and {_pct(x.high)}: "
                   f"{x.before.system or x.before.status} ({_status(x.before)}) -> "
                   f"{x.after.system or x.after.status} ({_status(x.after)})")
    return "\n".join(out) + "\n"


def _outcome_json(o: Outcome) -> dict[str, Any]:
    return {"status": o.status, "system": o.system or None, "technology": o.technology or None,
            "total_usd": None if o.total_usd is None else round(o.total_usd, 2), "reason": o.reason or None}


def frontier_to_json_dict(frontier: Frontier) -> dict[str, Any]:
    """The frontier as JSON-ready data (money in dollars, rounded to cents)."""
    return {
        "target": frontier.target,
        "classes": list(frontier.classes),
        "points": [{"value": p.value, **_outcome_json(p.outcome),
                    "classes": {k: None if v is None else round(v, 2) for k, v in p.outcome.classes}}
                   for p in frontier.points],
        "switchovers": [{"low": s.low, "high": s.high, "from": s.before, "to": s.after} for s in frontier.switchovers],
    }


def sweep_to_json_dict(result: Sweep) -> dict[str, Any]:
    """The sweep as JSON-ready data: base, then per variable its points and located changes."""
    return {
        "base": _outcome_json(result.base),
        "tolerance": result.tolerance,
        "variables": [{
            "name": var.name, "low": var.low, "high": var.high,
            "points": [{"change": p.change, **_outcome_json(p.outcome)}
                       for p in result.points if p.variable == var.name],
            "changes": [{"low": x.low, "high": x.high, "at": round(x.at, 6), "from": _outcome_json(x.before),
                         "to": _outcome_json(x.after)} for x in result.crossovers if x.variable == var.name],
        } for var in result.variations],
    }


# ---------------------------------------------------------------- commands


def draw_command(
    design_path: Path = typer.Argument(..., metavar="DESIGN", help="A design file from `designer solve -o`.",
                                       show_default=False),
    output: Optional[Path] = typer.Option(None, "-o", "--output",
                                          help="Picture file: .svg, .png or .dot (default: DOT on stdout)."),
    catalog_files: List[Path] = typer.Option([], "--catalog", "-c", metavar="FILE",
                                             help="User catalog the design was made with (repeatable)."),
    detail: Optional[int] = typer.Option(None, "--detail", min=1,
                                         help="Most boxes per tier before devices are grouped "
                                              "(default 32 for servers and leaves, 16 above)."),
) -> None:
    """Draw a design's fabric by tier (servers, leaf, spine, core), rails coloured; large tiers grouped."""
    from designer import catalog as catalog_mod, design as design_mod, draw, plot

    def body() -> int:
        fmt = plot.format_of(output) if output is not None else "dot"
        if fmt in plot.IMAGE_FORMATS:
            plot.check_matplotlib()
        d = design_mod.load_design(design_path)
        limits = draw.MAX_BOXES if detail is None else (detail,) * 4
        drawing = draw.draw_design(d, catalog_mod.load_catalog(catalog_files), max_boxes=limits)
        for warning in drawing.warnings:
            typer.echo(f"warning: {warning}", err=True)
        data = plot.render_dot(drawing) if fmt == "dot" else plot.render_drawing(drawing, fmt)
        if output is None:
            typer.echo(data, nl=False)
        else:
            _write(output, data)
            typer.echo(f"{output}: {drawing.subtitle}")
        return 0

    _run(body)


def frontier_command(
    spec_path: Path = typer.Argument(..., metavar="SPEC", help="The spec to vary.", show_default=False),
    output: Optional[Path] = typer.Option(None, "-o", "--output", help="Plot file (.png or .svg)."),
    utilization: Optional[str] = typer.Option(None, "--utilization", metavar="START:STOP:STEP",
                                              help=f"Utilization targets (default {_DEFAULT_UTILIZATION})."),
    deadline_scale: Optional[str] = typer.Option(None, "--deadline-scale", metavar="START:STOP:STEP",
                                                 help="Scale every deadline, e.g. 0.5:2:0.25."),
    budget: Optional[str] = typer.Option(None, "--budget", metavar="START:STOP:STEP",
                                         help="Total budgets, e.g. $5M:$30M:$5M."),
    solver: SolverName = SOLVER_OPTION,
    time_limit: Optional[float] = TIME_LIMIT_OPTION,
    jobs: Optional[int] = JOBS_OPTION,
    as_json: bool = typer.Option(False, "--json", help="Print JSON instead of the table."),
) -> None:
    """Total cost against a target (utilization, deadlines or budget), per fabric and deployment class."""
    from designer import inputs, plot, whatif

    def body() -> int:
        given = [(t, v) for t, v in (("utilization", utilization), ("deadline_scale", deadline_scale),
                                     ("budget", budget)) if v is not None]
        if len(given) > 1:
            raise InputError("give one of --utilization, --deadline-scale, --budget")
        target, text = given[0] if given else ("utilization", _DEFAULT_UTILIZATION)
        option = "--" + target.replace("_", "-")
        parse = {"utilization": _fraction, "budget": units.parse_money}.get(target, float)
        values = parse_range(text, parse, what=option)
        fmt = plot.format_of(output, plot.IMAGE_FORMATS) if output is not None else None
        if fmt is not None:
            plot.check_matplotlib()
        spec, catalog = inputs.load_inputs(spec_path)
        for v in values:  # bad values fail before any solve
            whatif.with_target(spec, target, v)
        if output is not None:
            from designer import atomic

            atomic.check_writable(output)  # before the solves, which can take minutes
        bar = _Bar(f"solving {len(values)} points")
        try:
            result = whatif.frontier(spec, catalog, target, values, solver=solver.value, time_limit_s=time_limit,
                                     workers=_workers(jobs), progress=bar)
        finally:
            bar.close()
        if as_json:
            typer.echo(json.dumps(frontier_to_json_dict(result), indent=2))
        else:
            typer.echo(render_frontier_table(result), nl=False)
        if output is not None and fmt is not None:
            _write(output, plot.render_frontier(result, fmt, name=spec.name))
        return 0

    _run(body)


def sweep_command(
    spec_path: Path = typer.Argument(..., metavar="SPEC", help="The spec to solve.", show_default=False),
    vary: List[str] = typer.Option(..., "--vary", metavar="NAME=LOW..HIGH",
                                   help="A price to vary, e.g. gpu_price=-30%..+30% (repeatable). Names: "
                                        "gpu_price, server_price, switch_price, optics_price, cloud_price, "
                                        "electricity."),
    steps: int = typer.Option(5, "--steps", min=2, max=50, help="Grid values per price, ends included."),
    solver: SolverName = SOLVER_OPTION,
    time_limit: Optional[float] = TIME_LIMIT_OPTION,
    jobs: Optional[int] = JOBS_OPTION,
    as_json: bool = typer.Option(False, "--json", help="Print JSON instead of the tables."),
) -> None:
    """How the chosen design depends on prices: re-solve across each range and locate every change (to 1%)."""
    from designer import inputs, whatif

    def body() -> int:
        variations = [parse_variation(v) for v in vary]
        spec, catalog = inputs.load_inputs(spec_path)
        for var in variations:
            why = whatif.unused_variation(spec, var.name)
            if why:
                typer.echo(f"warning: {var.name}: {why}, so its changes cannot move the decision", err=True)
        bar = _Bar("solving")
        try:
            result = whatif.sweep(spec, catalog, variations, steps=steps, solver=solver.value,
                                  time_limit_s=time_limit, workers=_workers(jobs), progress=bar)
        finally:
            bar.close()
        if as_json:
            typer.echo(json.dumps(sweep_to_json_dict(result), indent=2))
        else:
            typer.echo(render_sweep_table(result), nl=False)
        return 0

    _run(body)


def register(app: typer.Typer) -> None:
    """Add ``draw``, ``frontier`` and ``sweep`` to the main app."""
    app.command("draw")(draw_command)
    app.command("frontier")(frontier_command)
    app.command("sweep")(sweep_command)
