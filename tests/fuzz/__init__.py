"""Fuzz tests: random and mutated inputs for the YAML, spec and catalog loaders and the CLI."""
