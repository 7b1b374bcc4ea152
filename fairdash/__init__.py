"""FairDash: tune a classifier's fairness by choosing the positive rate you want.

Implements "Tuning Fairness by Balancing Target Labels" (docs/METHOD.md).
"""
from ._version import __version__
from .errors import FairDashError

__all__ = ["FairDashError", "__version__"]


def __getattr__(name):  # lazy: ``fairdash.load_model`` without importing numpy/pandas on ``import fairdash``
    if name == "load_model":
        from .files.export import load_model  # lazy: heavy, keeps numpy and pandas out of `import fairdash`
        return load_model
    raise AttributeError(f"module 'fairdash' has no attribute {name!r}")
