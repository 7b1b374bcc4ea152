"""Safe model state: plain numpy arrays plus JSON-able metadata, never pickle.

Every model implements ``get_state() -> {"arrays": {name: ndarray}, "meta": {...}}`` and a
classmethod ``from_state(state)`` that returns a fitted model predicting identically (on the CPU).
The fit cache (``fairdash.work.fit_cache.FitCache``) and the model export store exactly this, in one format:
the numeric arrays in safetensors, text arrays and the metadata in JSON (``split_arrays``).

Helpers shared by all models:

- ``params_meta(estimator)``: the constructor parameters as JSON (callables such as ``progress``
  become ``None``; numpy scalars and arrays become numbers and lists).
- ``table_to_state`` / ``table_from_state``: a ``TransitionTable`` (or ``ConditionalTables``) split
  into arrays and metadata under a name prefix, and back.
- ``make_state`` / ``check_state``: the common envelope (model class, state format version).
- ``save_state`` / ``load_state``: write / read a state as ``<stem>.safetensors`` + ``<stem>.json``.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np

from ...errors import FairDashError
from ...jsonable import to_jsonable
from ...targeting.conditional import ConditionalTables
from ...targeting.targets import TransitionTable

# 2: a fair model's target is one parameter, ``target`` (the TargetSpec's ``to_dict()``); format 1 stored
# its loose ``criterion``, ``target_rate``, ``tpr_target``, ``tnr_target``, ``delta``, ``stratum_target_rates``
# (read back by ``likelihood.target_params_from_state``)
STATE_FORMAT = 2


def params_meta(estimator) -> dict:
    """An estimator's constructor parameters (``get_params(deep=False)``) as plain JSON."""
    return {k: to_jsonable(v) for k, v in estimator.get_params(deep=False).items()}


# --------------------------------------------------------------------------------------------------
# Transition tables
# --------------------------------------------------------------------------------------------------
_TABLE_ARRAYS = ("base_rates", "group_shares", "target_rates", "p_ybar1_given_y", "d", "t")


def table_to_state(table, prefix: str = "table") -> tuple[dict, dict]:
    """Split a ``TransitionTable`` or ``ConditionalTables`` into ``(arrays, meta)``.

    Array names are ``f"{prefix}.{field}"`` (and ``f"{prefix}.{k}.{field}"`` per stratum), so several
    tables can live in one state. ``table_from_state(arrays, meta, prefix)`` reverses it.
    """
    arrays: dict[str, np.ndarray] = {}
    if table is None:
        return arrays, {"kind": "none"}
    if isinstance(table, ConditionalTables):
        metas = []
        for k, tb in enumerate(table.tables):
            a, m = table_to_state(tb, f"{prefix}.{k}")
            arrays.update(a)
            metas.append(m)
        arrays[f"{prefix}.cell_counts"] = np.asarray(table.cell_counts, dtype=np.int64)
        return arrays, {
            "kind": "conditional",
            "strata": to_jsonable(list(table.strata)),
            "tables": metas,
            "warnings": list(table.warnings),
        }
    if not isinstance(table, TransitionTable):
        raise FairDashError(f"Not a transition table: {type(table).__name__}.")
    for name in _TABLE_ARRAYS:
        arrays[f"{prefix}.{name}"] = np.asarray(getattr(table, name), dtype=np.float64)
    meta = {
        "kind": "table",
        "accuracy_ceiling": to_jsonable(table.accuracy_ceiling),
        "criterion": table.criterion,
        "delta": float(table.delta),
        "group_names": to_jsonable(list(table.group_names)),
    }
    return arrays, meta


def table_from_state(arrays: dict, meta: dict, prefix: str = "table"):
    """Rebuild the table that ``table_to_state`` stored (``None`` if none was stored)."""
    kind = meta.get("kind")
    if kind == "none":
        return None
    if kind == "conditional":
        tables = tuple(
            table_from_state(arrays, m, f"{prefix}.{k}") for k, m in enumerate(meta["tables"])
        )
        return ConditionalTables(
            strata=tuple(meta["strata"]),
            tables=tables,
            cell_counts=np.asarray(arrays[f"{prefix}.cell_counts"]),
            warnings=tuple(meta.get("warnings", ())),
        )
    if kind != "table":
        raise FairDashError(f"Unknown transition table kind in a model's state: {kind!r}.")
    ceiling = meta["accuracy_ceiling"]
    return TransitionTable(
        **{name: np.asarray(arrays[f"{prefix}.{name}"], dtype=np.float64) for name in _TABLE_ARRAYS},
        accuracy_ceiling=float(ceiling),
        criterion=meta["criterion"],
        delta=float(meta["delta"]),
        group_names=tuple(meta.get("group_names") or ()),
    )


# --------------------------------------------------------------------------------------------------
# The envelope
# --------------------------------------------------------------------------------------------------
def class_path(cls) -> str:
    return f"{cls.__module__}:{cls.__qualname__}"


def make_state(estimator, arrays: dict, meta: dict | None = None) -> dict:
    """The common state: ``meta`` gets ``class``, ``format`` and ``params`` (``params_meta``)."""
    full_meta = {
        "class": class_path(type(estimator)),
        "format": STATE_FORMAT,
        "params": params_meta(estimator),
    }
    full_meta.update(meta or {})
    clean = {}
    for k, v in arrays.items():
        a = np.asarray(v)
        if a.dtype == object:
            raise FairDashError(f"State array {k!r} holds Python objects; only numeric arrays can be stored.")
        clean[str(k)] = a
    return {"arrays": clean, "meta": to_jsonable(full_meta)}


# Constructor parameters that earlier FairDash versions stored and the models no longer take: each with the
# value under which it did nothing (a file that stored that value loads without it) and what replaced it.
RETIRED_PARAMS = {
    "use_s_as_feature": (False, "s as a feature is now the task's choice ('Let the model see s' on the Train "
                                "page, or the task's s-as-feature setting); removed in commit 836afa2"),
}

# Constructor parameters an earlier FairDash stored under another name: the old name and today's.
RENAMED_PARAMS = {"seed": "random_state"}


def renamed_params(params: dict) -> dict:
    """Stored constructor parameters with the names of :data:`RENAMED_PARAMS` read as today's."""
    out = {}
    for k, v in params.items():
        out[RENAMED_PARAMS.get(k, k)] = v
    return out


def check_state(state: dict, cls=None) -> tuple[dict, dict]:
    """Validate a state dict and return ``(arrays, meta)``. With ``cls``, the stored class must be
    ``cls`` or a subclass/superclass of it (FairLR and LR share a state layout)."""
    if not isinstance(state, dict) or "arrays" not in state or "meta" not in state:
        raise FairDashError("This is not a FairDash model state (it needs 'arrays' and 'meta').")
    meta = state["meta"]
    if int(meta.get("format", -1)) > STATE_FORMAT:
        raise FairDashError(
            "This model was saved by a newer FairDash; update FairDash to load it."
        )
    if cls is not None and "class" in meta:
        stored = meta["class"].split(":")[-1]
        names = {c.__qualname__ for c in cls.__mro__} | {c.__qualname__ for c in cls.__subclasses__()}
        if stored not in names:
            raise FairDashError(f"This state belongs to a {stored} model, not a {cls.__qualname__} model.")
    return state["arrays"], meta


def load_class(meta: dict):
    """The class named in a state's metadata (only classes under ``fairdash.``)."""
    import importlib

    module, _, name = meta["class"].partition(":")
    if not module.startswith("fairdash."):
        raise FairDashError(f"Refusing to load a model class from outside FairDash: {meta['class']!r}.")
    return getattr(importlib.import_module(module), name)


def model_from_state(state: dict):
    """Rebuild any FairDash model from its state, using the class named in it."""
    _, meta = check_state(state)
    return load_class(meta).from_state(state)


# --------------------------------------------------------------------------------------------------
# Files: <stem>.safetensors + <stem>.json (no pickle)
# --------------------------------------------------------------------------------------------------
NUMERIC_KINDS = "biuf"  # bool, signed/unsigned integers, floats: what safetensors holds


def split_arrays(arrays: dict, prefix: str = "") -> tuple[dict, dict]:
    """The one safe array format (the fit cache's files and the model file alike): numeric arrays for
    safetensors (keys prefixed with ``prefix``) and text arrays as JSON ``{"shape", "values"}``."""
    numeric, text = {}, {}
    for k, v in arrays.items():
        a = np.asarray(v)
        if a.dtype.kind in NUMERIC_KINDS:
            numeric[prefix + k] = np.ascontiguousarray(a)
        elif a.dtype.kind == "U":
            text[k] = {"shape": list(a.shape), "values": a.ravel().tolist()}
        else:
            raise FairDashError(f"The state array {k!r} has type {a.dtype}, which a safe file cannot hold.")
    return numeric, text


def join_arrays(numeric: dict, text: dict, prefix: str = "") -> dict:
    """The inverse of :func:`split_arrays`."""
    out = {k[len(prefix):]: v for k, v in numeric.items() if k.startswith(prefix)}
    for k, v in (text or {}).items():
        out[k] = np.asarray(v["values"], dtype=str).reshape(v["shape"])
    return out


def save_state(stem, state: dict) -> tuple[Path, Path]:
    """Write ``state`` as ``<stem>.safetensors`` and ``<stem>.json`` (atomically: temp file then rename).
    A failed write (a full or read-only disk: ``OSError``) leaves no temporary file and no half entry behind
    (a ``.safetensors`` without its ``.json``), and raises."""
    import threading

    import safetensors.numpy

    stem = Path(stem)
    st_path, js = stem.with_name(stem.name + ".safetensors"), stem.with_name(stem.name + ".json")
    own = f"{os.getpid()}.{threading.get_ident()}"  # two threads writing the same key never share a temp file
    tmp_st = stem.with_name(f".{stem.name}.{own}.tmp.safetensors")
    tmp_js = stem.with_name(f".{stem.name}.{own}.tmp.json")
    numeric, text = split_arrays(state["arrays"])
    replaced = False
    try:
        stem.parent.mkdir(parents=True, exist_ok=True)
        tmp_st.write_bytes(safetensors.numpy.save(numeric))
        tmp_js.write_text(json.dumps({"meta": state["meta"], "text_arrays": text}, sort_keys=True))
        os.replace(tmp_st, st_path)
        replaced = True
        os.replace(tmp_js, js)
    except BaseException:
        for p in (tmp_st, tmp_js) + ((st_path,) if replaced else ()):
            try:
                p.unlink(missing_ok=True)
            except OSError:
                pass  # the directory itself refuses: nothing more can be done here
        raise
    return st_path, js


def load_state(stem) -> dict:
    """Read a state written by ``save_state`` (safetensors and JSON: no pickle, no code)."""
    import safetensors.numpy

    stem = Path(stem)
    st_path, js = stem.with_name(stem.name + ".safetensors"), stem.with_name(stem.name + ".json")
    if not st_path.exists() or not js.exists():
        raise FairDashError(f"No saved model at {stem} (expected {st_path.name} and {js.name}).")
    stored = json.loads(js.read_text())
    arrays = join_arrays(safetensors.numpy.load(st_path.read_bytes()), stored.get("text_arrays"))
    return {"arrays": arrays, "meta": stored["meta"]}
