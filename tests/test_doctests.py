"""The examples in the package's docstrings run and print what they say (doctest)."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import designer

# __main__ runs the command line when imported
MODULES = sorted(m.name for m in pkgutil.walk_packages(designer.__path__, "designer.")
                 if not m.name.endswith("__main__"))


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_hold(name):
    try:
        module = importlib.import_module(name)
    except ImportError as exc:  # an optional extra (matplotlib for plots) not installed here
        pytest.skip(f"{name} needs {exc.name}")
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0, f"{result.failed} of {result.attempted} docstring examples failed in {name}"
