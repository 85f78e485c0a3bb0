"""The cut loop of designer.optimize.rigid stops once its bound stops rising."""

from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace

from designer.optimize import rigid


@dataclass(frozen=True)
class _Problem:
    exclude: tuple = ()
    energy: tuple = ()


def _loop(monkeypatch, objectives: list[float], jobs: int = 3) -> tuple[int, object]:
    """Run the loop on programs whose optima are ``objectives`` (then the last, repeated), none
    of which packs, each with ``jobs`` workloads on the cluster and one in the cloud; (programs
    solved, what the loop returned)."""
    calls = []
    assignment = {**{f"w{i}": ("k", None) for i in range(jobs)}, "c": ("cloud", None)}

    def solve(problem, **_):
        calls.append(problem)
        return SimpleNamespace(objective=objectives[min(len(calls), len(objectives)) - 1], onprem_key="k",
                               assignment=assignment)

    monkeypatch.setattr(rigid, "solve_problem", solve)
    monkeypatch.setattr(rigid, "pack_solution", lambda problem, sol: None)
    monkeypatch.setattr(rigid, "_energy_cuts", lambda problem, sol: [])
    monkeypatch.setattr(rigid, "_conflict_cut", lambda problem, sol: ((("w", "k", len(calls)),), 0))
    monkeypatch.setattr(rigid, "_fallback", lambda problem, sol, run: ("kept", sol.objective))
    out = rigid.solve_scheduled(_Problem())
    return len(calls), out


def test_rounds_that_leave_the_bound_where_it_was_stop_the_cuts(monkeypatch):
    solved, out = _loop(monkeypatch, [1.0])
    assert solved == rigid._STALL + 1  # the first program, then _STALL rounds that do not raise it
    assert out == ("kept", 1.0)


def test_rounds_that_raise_the_bound_keep_cutting(monkeypatch):
    rising = [1.0 + 0.1 * i for i in range(rigid._ROUNDS + 1)]
    solved, out = _loop(monkeypatch, rising)
    assert solved == rigid._ROUNDS + 1  # every round allowed: each raised the bound
    assert out == ("kept", rising[-1])


def test_a_rise_resets_the_count_of_stalled_rounds(monkeypatch):
    solved, _ = _loop(monkeypatch, [1.0, 1.0, 2.0, 2.0, 2.0, 2.0])
    assert solved == 3 + rigid._STALL


def test_with_many_jobs_a_round_without_an_overfull_interval_keeps_the_assignment(monkeypatch):
    # Nine jobs on the cluster: a no-good cut would remove one assignment of many of equal cost,
    # so the first program that finds no overfull interval goes to the fallback at its bound.
    solved, out = _loop(monkeypatch, [1.0, 2.0, 3.0], jobs=rigid._NOGOOD_UP_TO + 1)
    assert (solved, out) == (1, ("kept", 1.0))


def test_with_few_jobs_no_good_rounds_still_run(monkeypatch):
    solved, _ = _loop(monkeypatch, [1.0, 2.0, 3.0], jobs=rigid._NOGOOD_UP_TO)
    assert solved == 3 + rigid._STALL
