"""FairDash: tune a classifier's fairness by choosing the positive rate you want.

Implements "Tuning Fairness by Balancing Target Labels" (docs/METHOD.md).
"""
from .errors import FairDashError

__version__ = "0.1.0"

__all__ = ["FairDashError", "__version__"]
