"""designer: design GPU training clusters and their networks, and find the cheapest one that does the job.

Library use::

    from designer import load_spec, load_catalog, solve
    spec = load_spec("examples/quickstart.yaml")
    design = solve(spec)

The package reads like the pipeline: :mod:`designer.spec` and :mod:`designer.catalog` (input),
:mod:`designer.planner` (spec and catalog compiled into the optimizer's problem, and back into a
design), :mod:`designer.topology`, :mod:`designer.perf` and :mod:`designer.optimize` (the stages),
:mod:`designer.design`, :mod:`designer.report` and :mod:`designer.pictures` (output),
:mod:`designer.study` (what-if studies) and :mod:`designer.cli` (the command line).
"""

__version__ = "0.1.0"

__all__ = ["__version__", "load_spec", "load_catalog", "solve", "estimate"]


def __getattr__(name: str):
    # Lazy re-exports keep `import designer` cheap (the CLI imports only what a command needs).
    if name == "load_spec":
        from designer.spec.load import load_spec
        return load_spec
    if name == "load_catalog":
        from designer.catalog.load import load_catalog
        return load_catalog
    if name == "solve":
        from designer.planner.pipeline import solve
        return solve
    if name == "estimate":
        from designer.planner.predict import estimate
        return estimate
    raise AttributeError(f"module 'designer' has no attribute {name!r}")
