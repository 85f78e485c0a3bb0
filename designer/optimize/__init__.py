"""The optimizer: candidates evaluated and priced, then an integer program chooses and sizes the system.

It consumes the compiled problem (:class:`designer.optimize.task.Task`, built by the planner) and
never reads a spec. Modules: :mod:`~designer.optimize.task` (the compiled problem),
:mod:`~designer.optimize.candidates` (candidate systems), :mod:`~designer.optimize.evaluate` (the
network a job sees, its options), :mod:`~designer.optimize.pricing` (unit costs, exact BOMs),
:mod:`~designer.optimize.workspace` (lazy evaluation and the program's data),
:mod:`~designer.optimize.bounds` (cost lower bounds), :mod:`~designer.optimize.batches` and
:mod:`~designer.optimize.min_time` (the solve drivers), :mod:`~designer.optimize.problem` (the
program's data), :mod:`~designer.optimize.formulation` and :mod:`~designer.optimize.milp` (the
program and its solving; the only modules importing PuLP) and :mod:`~designer.optimize.explain`
(explanations found by re-solving) and :mod:`~designer.optimize.ranked` (the N best distinct
designs). Nothing is imported here.
"""

__all__: list[str] = []
