"""Every registered estimator's numpydoc ``Examples`` section runs (issue 37 item 4): its docstring is built from
the shared blocks of ``fairdash.models.core.base`` (the tiny data, the fitted-input attributes) and checked here as a
doctest, on tiny synthetic data."""
from __future__ import annotations

import doctest

import pytest

from fairdash.models.registry import MODELS


@pytest.mark.parametrize("name", list(MODELS))
def test_the_examples_section_runs(name):
    cls = MODELS[name].load_class()
    assert "\n    Examples\n    --------\n" in cls.__doc__, name
    tests = doctest.DocTestFinder(recurse=False).find(cls, cls.__name__, globs={})
    assert tests and tests[0].examples, name
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    for test in tests:
        runner.run(test)
    assert runner.summarize(verbose=False).failed == 0, name
