"""Constructor parameters checked as scikit-learn's own estimators check theirs: each estimator declares
``_parameter_constraints`` (one entry per parameter of ``__init__``: a list of the constraints a value
may meet) and ``fit`` calls :func:`check_params` first, before any data is looked at. A value that meets
none of its constraints is refused with one plain :class:`~fairdash.errors.FairDashError` (a
``ValueError``) naming the parameter, what it must be and what it got, e.g. ``The 'C' parameter of
FairLR must be a number > 0; got -1.``

scikit-learn's own constraint classes live in a private module (``sklearn.utils._param_validation``),
so FairDash declares its constraints with the small classes below (same idea, public code).
"""
from __future__ import annotations

import numbers
from dataclasses import dataclass

from ...errors import FairDashError

NO_VALIDATION = "no_validation"  # as scikit-learn: any value (e.g. a callback checked where it is called)


@dataclass(frozen=True)
class Interval:
    """A real number (``kind=numbers.Real``) or a whole number (``numbers.Integral``) between ``low`` and
    ``high`` (``None``: unbounded); ``closed`` is ``"both"``, ``"left"``, ``"right"`` or ``"neither"``."""

    kind: type
    low: float | None
    high: float | None
    closed: str = "both"

    def accepts(self, value) -> bool:
        if isinstance(value, bool) or not isinstance(value, self.kind):
            return False
        if self.kind is numbers.Real and value != value:  # NaN
            return False
        lo_ok = self.low is None or (value >= self.low if self.closed in ("both", "left") else value > self.low)
        hi_ok = self.high is None or (value <= self.high if self.closed in ("both", "right") else value < self.high)
        return bool(lo_ok and hi_ok)

    def words(self) -> str:
        what = "a whole number" if self.kind is numbers.Integral else "a number"
        lo = "" if self.low is None else f"{self.low:g} {'<=' if self.closed in ('both', 'left') else '<'} "
        hi = "" if self.high is None else f" {'<=' if self.closed in ('both', 'right') else '<'} {self.high:g}"
        if lo and hi:
            return f"{what} with {lo}value{hi}"
        if lo:
            return f"{what} {'>=' if self.closed in ('both', 'left') else '>'} {self.low:g}"
        if hi:
            return f"{what}{hi}"
        return what


@dataclass(frozen=True)
class Options:
    """One of the given strings."""

    values: tuple

    def accepts(self, value) -> bool:
        return isinstance(value, str) and value in self.values

    def words(self) -> str:
        return "one of " + ", ".join(repr(v) for v in self.values)


@dataclass(frozen=True)
class InstanceOf:
    """An instance of ``kind`` (e.g. :class:`~fairdash.targeting.target_spec.TargetSpec`)."""

    kind: type
    what: str = ""

    def accepts(self, value) -> bool:
        return isinstance(value, self.kind)

    def words(self) -> str:
        return self.what or f"a {self.kind.__name__}"


class _NoneConstraint:
    def accepts(self, value) -> bool:
        return value is None

    def words(self) -> str:
        return "None"


class _CallableConstraint:
    def accepts(self, value) -> bool:
        return callable(value)

    def words(self) -> str:
        return "a function"


class _DeviceConstraint:
    """What ``fairdash.device.resolve_device`` reads: a name (``"auto"``, ``"cpu"``, ``"cuda"``, ``"cuda:1"``)
    or a ``torch.device``; whether the device exists is decided there, when the fit starts."""

    def accepts(self, value) -> bool:
        import torch

        return isinstance(value, (str, torch.device))

    def words(self) -> str:
        return "a device name ('auto', 'cpu', 'cuda')"


class _BooleanConstraint:
    def accepts(self, value) -> bool:
        import numpy as np

        return isinstance(value, (bool, np.bool_))

    def words(self) -> str:
        return "True or False"


class _ArrayConstraint:
    """A list, tuple or numpy array (of numbers; their count and values are checked where they are used)."""

    def accepts(self, value) -> bool:
        import numpy as np

        return isinstance(value, (list, tuple, np.ndarray))

    def words(self) -> str:
        return "a list of numbers"


NONE = _NoneConstraint()
BOOLEAN = _BooleanConstraint()
ARRAY = _ArrayConstraint()
CALLABLE = _CallableConstraint()
DEVICE = _DeviceConstraint()
SEED = Interval(numbers.Integral, 0, None)


def check_params(est) -> None:
    """Refuse the first parameter of ``est`` that meets none of its class's ``_parameter_constraints``."""
    constraints = type(est)._parameter_constraints
    for name, value in est.get_params(deep=False).items():
        allowed = constraints.get(name, NO_VALIDATION)
        if allowed == NO_VALIDATION or any(c.accepts(value) for c in allowed):
            continue
        words = " or ".join(c.words() for c in allowed)
        shown = repr(value) if isinstance(value, (str, numbers.Number, type(None))) else f"a {type(value).__name__}"
        raise FairDashError(f"The {name!r} parameter of {type(est).__name__} must be {words}; got {shown}.")
