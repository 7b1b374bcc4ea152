"""The one conversion to plain JSON values, used by model states, cached results, the command line's
JSON output and cache keys. A leaf: it imports nothing from FairDash but its error type."""
from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from .errors import FairDashError


def to_jsonable(value: Any, *, nonfinite: str = "text", other=None) -> Any:
    """The one conversion to plain JSON values (model states, cached results, the command line's JSON,
    cache keys): numpy scalars and arrays, tuples, dicts with non-string keys.

    A dataclass with a ``to_dict`` method (a :class:`~fairdash.targeting.target_spec.TargetSpec`) is stored as that
    dict.
    Callables (e.g. a progress callback) become ``None``: they are not part of a model's state.
    Non-finite floats become the strings ``"nan"``, ``"inf"``, ``"-inf"`` (``nonfinite="text"``, which
    round-trips) or ``null`` (``nonfinite="null"``, for output read by other programs). A value of any
    other type goes through ``other`` (e.g. ``repr`` for a cache key), else it is an error.
    """
    def again(v):
        return to_jsonable(v, nonfinite=nonfinite, other=other)

    if value is None or isinstance(value, (bool, str)):
        return value
    if dataclasses.is_dataclass(value) and not isinstance(value, type) and callable(getattr(value, "to_dict", None)):
        return again(value.to_dict())  # a value with its own plain form, e.g. a TargetSpec
    if isinstance(value, (np.bool_,)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        v = float(value)
        if np.isfinite(v):
            return v
        if nonfinite == "null":
            return None
        return "nan" if np.isnan(v) else ("inf" if v > 0 else "-inf")
    if isinstance(value, np.ndarray):
        return [again(v) for v in value.tolist()]
    if isinstance(value, dict):
        return {str(k): again(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [again(v) for v in value]
    if callable(value):
        return None
    if other is not None:
        return other(value)
    raise FairDashError(f"Cannot store a value of type {type(value).__name__} in a model's state.")


def int_keyed(d: dict | None) -> dict | None:
    """Undo JSON's string keys for dicts keyed by integer codes (e.g. ``stratum_target_rates``)."""
    if d is None:
        return None
    out = {}
    for k, v in d.items():
        try:
            out[int(k)] = v
        except (TypeError, ValueError):
            out[k] = v
    return out
