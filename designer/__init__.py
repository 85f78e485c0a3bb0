"""designer: design GPU training clusters and their networks, and find the cheapest one that does the job.

Library use::

    from designer import load_spec, load_catalog, solve
    spec = load_spec("examples/quickstart.yaml")
    design = solve(spec)
"""

__version__ = "0.1.0"

__all__ = ["__version__", "load_spec", "load_catalog", "solve", "estimate"]


def __getattr__(name: str):
    # Lazy re-exports keep `import designer` cheap (the CLI imports only what a command needs).
    if name == "load_spec":
        from designer.spec import load_spec
        return load_spec
    if name == "load_catalog":
        from designer.catalog import load_catalog
        return load_catalog
    if name == "solve":
        from designer.planner import solve
        return solve
    if name == "estimate":
        from designer.planner import estimate
        return estimate
    raise AttributeError(f"module 'designer' has no attribute {name!r}")
