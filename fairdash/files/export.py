"""The portable model file (``.fairdash``).

A ``.fairdash`` file is one zip archive with exactly three members:

- ``manifest.json``: ``{"format": "fairdash-model", "format_version": 1, "members": {name: {"size",
  "sha256"}}, "created", "fairdash_version"}``. The loader checks the format name and version first,
  then every member's size and SHA-256, so a damaged, truncated or edited file is refused.
- ``meta.json``: plain JSON. The task (``TaskSpec.to_dict``), feature columns, group and label names,
  criterion, ``PR_t``, the transition table (``t_s``, transition probabilities, Theorem 2's ceiling),
  training metrics, data fingerprint, seed, package versions, creation time, the fitted preprocessing
  (imputer medians, scaler mean/scale, one-hot categories and which of them are "infrequent"), the
  estimator's JSON metadata (``get_state()["meta"]``) and, from issue 27 on, the training table's record
  for the scoring contract (``scoring``: each feature's kind, missing values and range, the values of s;
  :mod:`fairdash.files.scoring`). Files without it still load; their tables are compared by what their
  preprocessing knows.
- ``arrays.safetensors``: every numeric array (preprocessing numbers under ``pre.``, the estimator's
  arrays under ``model.``), read with ``safetensors.numpy.load``: no pickle, no code.

Loading never executes anything from the file: there is no pickle, no ``torch.load`` and no class
name taken from the file that is not one of the registry's own model classes. The zip itself is
checked before it is read (member names, sizes, compression ratio, no encryption, no path parts:
:mod:`fairdash.files.archive`).
The hashes guard against accidents and casual edits; they are not a signature (someone who rewrites a
file can rewrite its manifest too), so load files only from people you trust to give you a model.

Public API: :func:`save_model`, :func:`model_bytes`, :func:`load_model` (returns a
:class:`LoadedModel` whose ``predict``/``predict_proba`` take a raw table). Tables as CSV without formulas are
:mod:`fairdash.files.safe_csv`.
"""
from __future__ import annotations

import hashlib
import io
import json
import os
import re
import zipfile
from pathlib import Path

import numpy as np

from .._version import software_versions
from ..data import TaskSpec
from ..data.preprocess import PlainPreprocessor
from ..data.reading import isolated
from ..errors import FairDashError
from ..jsonable import to_jsonable
from ..models.core.state import RENAMED_PARAMS, RETIRED_PARAMS, class_path, join_arrays, split_arrays
from ..models.registry import MODELS, model_info
from ..progress import utc_now
from ..targeting.decision import FittedDecision, carried_decision, predicts_with_s, rule_info
from .archive import (
    MANIFEST,
    ArchiveKind,
    digests_of,
    json_member,
    matches,
    member_digests,
    open_archive,
    read_source,
)
from .scoring import ScoresRawTables

# What reading a model file imports as it goes (each model's module, safetensors): imported by the reading process
# before its limits are set, and by the fork server once where it starts after this import.
LOAD_MODULES = (*sorted({f"fairdash.models.{m.target.split(':')[0]}" for m in MODELS.values()}), "safetensors.numpy")
isolated.preload(__name__, *LOAD_MODULES)

FORMAT_NAME = "fairdash-model"
FORMAT_VERSION = 1
SUFFIX = ".fairdash"

META = "meta.json"
ARRAYS = "arrays.safetensors"
MEMBERS = (MANIFEST, META, ARRAYS)

MAX_FILE_BYTES = 1 << 30  # 1 GiB: far above any model FairDash trains (an SVM on Adult is ~30 MB)
MAX_MEMBER_BYTES = 1 << 30
MAX_MANIFEST_BYTES = 1 << 20
MAX_META_BYTES = 256 << 20



# --------------------------------------------------------------------------------------------------
# JSON helpers
# --------------------------------------------------------------------------------------------------
def _jsonable(value):
    return to_jsonable(value)  # non-finite numbers as text, which the loader reads back


def _table_dict(table):
    if table is None:
        return None
    if hasattr(table, "to_dict"):
        return _jsonable(table.to_dict())
    tables = getattr(table, "tables", None)
    if tables is not None:  # conditional parity: one table per stratum
        return {"strata": _jsonable(list(table.strata)), "tables": [_table_dict(t) for t in tables],
                "warnings": list(getattr(table, "warnings", ()))}
    return None


# --------------------------------------------------------------------------------------------------
# Saving
# --------------------------------------------------------------------------------------------------
def model_bytes(trained) -> bytes:
    """The ``.fairdash`` file of a trained model (a :class:`fairdash.work.fitting.TrainedModel`), as bytes."""
    import safetensors.numpy

    state = _safe_state(trained)
    pre = trained.preprocessor  # a model read from a file (a session file's) already holds the plain one
    pre = pre if isinstance(pre, PlainPreprocessor) else PlainPreprocessor.from_sklearn(pre)
    pre_arrays, pre_meta = pre.to_state()

    model_arrays, text_arrays = split_arrays(state["arrays"], prefix="model.")
    arrays: dict[str, np.ndarray] = {**pre_arrays, **model_arrays}

    created = utc_now()
    meta = _meta(trained, state, text_arrays, pre_meta, created)
    meta_bytes = json.dumps(_jsonable(meta), sort_keys=True, allow_nan=False, ensure_ascii=False).encode("utf-8")
    array_bytes = safetensors.numpy.save(arrays, metadata={"format": FORMAT_NAME})
    return _archive(trained.name, created, meta["versions"]["fairdash"], {META: meta_bytes, ARRAYS: array_bytes})


def _safe_state(trained) -> dict:
    """The estimator's safe state (``get_state``), refused in one line where it has none or an unusable one."""
    est = trained.estimator
    if not hasattr(est, "get_state"):
        raise FairDashError(f"{type(est).__name__} cannot be exported: it has no safe state (get_state).")
    info = model_info(trained.name)
    state = est.get_state()
    if not isinstance(state, dict) or "arrays" not in state or "meta" not in state:
        raise FairDashError(f"{info.label} returned an unusable state; it cannot be exported.")
    return state


def _meta(trained, state: dict, text_arrays, pre_meta: dict, created: str) -> dict:
    """``meta.json``'s content: the model, its task, what it was asked, how it decides, what it measured, where it
    came from, its preprocessing and the training table's record (the module's docstring)."""
    est, info = trained.estimator, model_info(trained.name)
    spec = trained.spec.to_dict() if hasattr(trained.spec, "to_dict") else dict(trained.spec)
    table = (trained.transition_table if hasattr(trained, "transition_table")
             else getattr(est, "transition_table_", None))
    table_d = _table_dict(table)

    decision = carried_decision(est, getattr(trained, "decision", None))
    rule = rule_info(decision.rule)
    return {
        "model": {"name": trained.name, "label": info.label + rule.label_suffix, "class": state["meta"].get("class"),
                  "state_meta": state["meta"], "text_arrays": text_arrays},
        "task": {
            "spec": spec,
            "feature_columns": list(map(str, trained.feature_columns)),
            "categorical_features": list(map(str, trained.categorical_features)),
            "group_names": list(map(str, trained.group_names)),
            "label_names": list(map(str, trained.label_names)),
            "s_column": spec.get("s_column"),
            "y_column": spec.get("y_column"),
        },
        "criterion": trained.criterion,
        "target_rate": None if trained.target_rate is None else float(trained.target_rate),
        "target": None if getattr(trained, "target", None) is None else trained.target.to_dict(),
        "fitted_at": str(getattr(trained, "fitted_at", "") or ""),
        "decision": {**decision.to_dict(), "decides_with_s": rule.needs_s, "words": rule.words},
        "transition_table": table_d,
        "t": None if table_d is None else table_d.get("t"),
        "accuracy_ceiling": (None if table_d is None
                             else table_d.get("ceiling_at_target", table_d.get("accuracy_bound"))),
        "metrics": _jsonable(dict(trained.metrics or {})),
        "data_fingerprint": str(trained.data_fingerprint or ""),
        "seed": int(trained.seed),
        "fit_seconds": float(trained.fit_seconds or 0.0),
        "trained_on": str(trained.device or "CPU"),
        "versions": software_versions(),
        "created": created,
        "preprocessing": pre_meta,
        "scoring": getattr(trained, "schema", None),  # the training table as the scoring contract compares with it
    }


def _archive(model: str, created: str, version: str, members: dict) -> bytes:
    """The zip of ``members`` behind their manifest (each member's size and SHA-256)."""
    manifest = {
        "format": FORMAT_NAME,
        "format_version": FORMAT_VERSION,
        "created": created,
        "fairdash_version": version,
        "model": model,
        "members": {k: {"size": len(v), "sha256": hashlib.sha256(v).hexdigest()} for k, v in members.items()},
    }
    buf = io.BytesIO()
    # stored, not deflated: every byte of a member is then its content, held by the manifest's SHA-256 (the last
    # byte of a deflate stream has padding bits a flip leaves the content unchanged by; zip_layout holds the rest)
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_STORED) as z:
        z.writestr(MANIFEST, json.dumps(manifest, indent=1, sort_keys=True))  # first: identifies the file
        for k, v in members.items():
            z.writestr(k, v)
    return buf.getvalue()


def model_file_name(trained, run_number: int | None = None) -> str:
    """The download name of a trained model's file: model, target rate, repeat and the run it came from
    (``fair-lr_prt0.300_seed0_run2.fairdash``), so that two runs' files never share a name."""
    rate = "" if trained.target_rate is None or not np.isfinite(float(trained.target_rate)) \
        else f"_prt{float(trained.target_rate):.3f}"
    run = "" if run_number is None else f"_run{int(run_number)}"
    stem = re.sub(r"[^A-Za-z0-9._-]+", "-", f"{trained.name}{rate}_seed{trained.seed}{run}")
    return stem + SUFFIX


def save_model(trained, path) -> Path:
    """Write ``trained`` to ``path`` (``.fairdash`` is added when the name has no suffix), atomically."""
    path = Path(path)
    if path.suffix == "":
        path = path.with_suffix(SUFFIX)
    if path.is_dir():
        raise FairDashError(f"{path} is a folder; give a file name such as model{SUFFIX}.")
    data = model_bytes(trained)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_bytes(data)
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()
    return path


# --------------------------------------------------------------------------------------------------
# Loading
# --------------------------------------------------------------------------------------------------
def _read_source(source) -> tuple[bytes, str]:
    return read_source(source, what="model file", max_bytes=MAX_FILE_BYTES, caller="load_model",
                       too_big=lambda name: f"{name} is larger than {MAX_FILE_BYTES >> 20} MB; it is not a FairDash "
                                            "model file.")


MODEL_ARCHIVE = ArchiveKind(
    "FairDash model file", "save or download the model again", MEMBERS.__contains__,
    lambda n: MAX_MANIFEST_BYTES if n == MANIFEST else (MAX_META_BYTES if n == META else MAX_MEMBER_BYTES),
    MAX_FILE_BYTES)


def _open_archive(raw: bytes, name: str) -> dict[str, bytes]:
    """Check the model file's zip before reading it and return its three members' bytes."""
    return open_archive(raw, name, MODEL_ARCHIVE)


def _check_manifest(manifest_raw: bytes, digests: dict, name: str) -> dict:
    """The manifest, checked: this format, and every member's size and hash as recorded (``digests``:
    :func:`fairdash.files.archive.member_digests`)."""
    manifest = json_member(manifest_raw, "manifest", name)
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT_NAME:
        raise FairDashError(f"{name} is not a FairDash model file (its manifest names another format).")
    version = manifest.get("format_version")
    if not isinstance(version, int) or isinstance(version, bool):
        raise FairDashError(f"{name} is damaged: its manifest has no valid format version.")
    made_by = manifest.get("fairdash_version", "an unknown version")
    if version > FORMAT_VERSION:
        raise FairDashError(f"{name} was saved by a newer FairDash ({made_by}, model file format {version}); this "
                            f"FairDash reads format {FORMAT_VERSION}. Update FairDash to load it.")
    if version < FORMAT_VERSION:
        raise FairDashError(f"{name} uses the old model file format {version} (FairDash {made_by}); this FairDash "
                            f"reads format {FORMAT_VERSION}. Export the model again with this version.")
    listed = manifest.get("members")
    if not isinstance(listed, dict) or set(listed) != {META, ARRAYS}:
        raise FairDashError(f"{name} is damaged: its manifest does not list the model's parts.")
    for member in (META, ARRAYS):
        if member not in digests:
            raise FairDashError(f"{name} is incomplete: {member} is missing.")
        if not matches(listed[member], digests[member]):
            raise FairDashError(f"{name} has been altered or damaged: {member} does not match the checksum recorded "
                                "when it was saved. Refusing to load it.")
    return manifest


MAX_ARRAYS_HEADER_BYTES = 1 << 20  # a model's arrays' header (its JSON index: a few KB for the largest model)


def _check_arrays_header(data: bytes, name: str) -> None:
    """Refuse a safetensors member whose header (its JSON index, read whole by safetensors before anything else) is
    longer than :data:`MAX_ARRAYS_HEADER_BYTES` or runs past the member, before it is parsed."""
    if len(data) < 8:
        raise FairDashError(f"{name} is damaged: its arrays cannot be read (the member is too short).")
    length = int.from_bytes(data[:8], "little")
    if length > MAX_ARRAYS_HEADER_BYTES or length > len(data) - 8:
        raise FairDashError(f"{name} is refused: its arrays' index claims {length:,} bytes (a model's takes at most "
                            f"{MAX_ARRAYS_HEADER_BYTES:,}); it is not a model FairDash wrote.")


def _load_arrays(data: bytes, name: str) -> dict:
    import safetensors.numpy

    _check_arrays_header(data, name)
    try:
        return safetensors.numpy.load(data)
    except Exception as e:  # safetensors raises its own error types on malformed input
        raise FairDashError(f"{name} is damaged: its arrays cannot be read ({type(e).__name__}).") from None


def _estimator_from(meta: dict, arrays: dict, name: str):
    m = meta.get("model")
    if not isinstance(m, dict) or m.get("name") not in MODELS:
        raise FairDashError(f"{name} names a model this FairDash does not know ({(m or {}).get('name')!r}); it was "
                            f"written by {_written_by(meta)}. {_RETRAIN}")
    info = model_info(m["name"])
    try:
        cls = info.load_class()
    except ImportError as e:
        raise FairDashError(f"{info.label} models need a package that is not installed here ({e.name}).") from None
    state_meta = m.get("state_meta")
    if not isinstance(state_meta, dict):
        raise FairDashError(f"{name} is damaged: the model's settings are missing.")
    stored = str(state_meta.get("class", ""))
    if stored and stored != class_path(cls) and stored.split(":")[-1] not in {c.__qualname__ for c in cls.__mro__}:
        raise FairDashError(f"{name} is inconsistent: it says {info.label} but stores a {stored} model.")
    model_arrays = join_arrays(arrays, m.get("text_arrays"), prefix="model.")
    state_meta = _current_params(state_meta, cls, info, name, meta)
    try:
        return cls.from_state({"arrays": model_arrays, "meta": state_meta}), info
    except FairDashError:
        raise
    except Exception as e:
        raise FairDashError(f"{name} could not be turned back into a {info.label} model ({type(e).__name__}: "
                            f"{str(e)[:200]}); it was written by {_written_by(meta)}. {_RETRAIN}") from None


_RETRAIN = ("Train the model again with this FairDash (the same data and settings give the same model), or load it "
            "with the FairDash that wrote it.")


def _written_by(meta: dict) -> str:
    versions = meta.get("versions") if isinstance(meta.get("versions"), dict) else {}
    return f"FairDash {versions.get('fairdash', '(version unknown)')} on {meta.get('created') or '(date unknown)'}"


def _current_params(state_meta: dict, cls, info, name: str, meta: dict) -> dict:
    """The stored settings this FairDash's model class takes: a setting an earlier version stored and the
    class no longer has is dropped where its stored value made it do nothing (``RETIRED_PARAMS``), and
    refused in one line (which version wrote the file, what to do) where it did something."""
    import inspect

    from ..models.core.likelihood import FORMAT1_TARGET  # lazy: heavy, defers torch

    params = state_meta.get("params")
    if not isinstance(params, dict):
        return state_meta
    takes = (set(inspect.signature(cls).parameters) | set(FORMAT1_TARGET) | {"target", "target_rate"}
             | set(RENAMED_PARAMS))
    unknown = [k for k in params if k not in takes]
    for k in unknown:
        neutral, why = RETIRED_PARAMS.get(k, (object(), None))
        if params[k] != neutral:
            was = f"; {why}" if why else ""
            raise FairDashError(f"{name} was written by {_written_by(meta)}, whose {info.label} had the setting {k!r} "
                                f"(stored as {params[k]!r}), which this FairDash no longer has{was}. {_RETRAIN}")
    if not unknown:
        return state_meta
    return {**state_meta, "params": {k: v for k, v in params.items() if k not in unknown}}


class LoadedModel(ScoresRawTables):
    """A model read from a ``.fairdash`` file. ``predict``/``predict_proba`` take a raw table with the
    training feature columns (the sensitive attribute only for a model that decides with s), compared
    with the training table first (:mod:`fairdash.files.scoring`); everything else the file holds is in
    ``metadata`` and the attributes below."""

    def __init__(self, estimator, preprocessor: PlainPreprocessor, meta: dict, manifest: dict):
        task = meta["task"]
        self.estimator = estimator
        self.preprocessor = preprocessor
        self.metadata = meta
        self.manifest = manifest
        self.name = meta["model"]["name"]
        self.label = meta["model"]["label"]
        self.spec = TaskSpec.from_dict(task["spec"])
        self.feature_columns = tuple(task["feature_columns"])
        self.categorical_features = tuple(task["categorical_features"])
        self.group_names = tuple(task["group_names"])
        self.label_names = tuple(task["label_names"])
        self.criterion = meta.get("criterion")
        self.target_rate = meta.get("target_rate")
        self.seed = meta.get("seed")
        self.metrics = meta.get("metrics") or {}
        self.data_fingerprint = meta.get("data_fingerprint", "")
        self.fit_seconds = meta.get("fit_seconds", 0.0)
        self.device = "CPU"
        self.created = meta.get("created")  # when the file was written
        self.fitted_at = meta.get("fitted_at") or self.created  # when the model was fitted (older files: unknown)
        self.target = meta.get("target")
        self.versions = meta.get("versions") or {}
        self.transition = meta.get("transition_table")
        self.schema = meta.get("scoring")  # None in files written before the scoring contract (issue 27)

        self.decision = FittedDecision.from_dict(meta.get("decision"))  # older files: the paper's rule

    @property
    def decides_with_s(self) -> bool:
        return self.decision.needs_s or predicts_with_s(self.estimator)

    def describe(self) -> str:
        t = "" if self.target_rate is None else f", PR_t = {self.target_rate:.4f}"
        rule = f"; decides by {self.decision.rule}" + (" (decides with s: the table needs "
                                                        f"{self.spec.s_column!r})" if self.decides_with_s else "")
        return (f"{self.label} ({self.criterion}{t}), trained {self.fitted_at} on data {self.data_fingerprint}; "
                f"predicts {self.spec.y_column!r} = {self.label_names[1]!r} from {len(self.feature_columns)} columns"
                + rule)

    def __repr__(self) -> str:
        return f"<LoadedModel {self.describe()}>"


def load_model(source) -> LoadedModel:
    """Read a ``.fairdash`` file (a path, bytes, or a binary file object such as an upload).

    Every problem (not a model file, damaged, truncated, edited, from a newer or older format) is a
    :class:`FairDashError` with a message that says which. Nothing in the file is executed. It is parsed in a
    reading process under the table's memory and time limits (:func:`fairdash.data.reading.isolated.call_limited`).
    """
    raw, name = _read_source(source)
    digests, manifest_raw = member_digests(raw, name, MODEL_ARCHIVE)  # streamed: an altered byte is refused here
    _check_manifest(manifest_raw, digests, name)
    return isolated.call_limited(model_from_bytes, (raw, name), name, what="model file", imports=LOAD_MODULES)


def model_from_bytes(raw: bytes, name: str) -> LoadedModel:
    """:func:`load_model`'s reading, in this process: only where its limits are already set (a reading process)."""
    members = _open_archive(raw, name)
    manifest = _check_manifest(members[MANIFEST], digests_of(members), name)
    meta = json_member(members[META], "metadata", name)
    if not isinstance(meta, dict):
        raise FairDashError(f"{name} is damaged: its metadata is not an object.")
    arrays = _load_arrays(members[ARRAYS], name)
    try:
        pre = PlainPreprocessor.from_state(arrays, meta["preprocessing"])
        estimator, _ = _estimator_from(meta, arrays, name)
        model = LoadedModel(estimator, pre, meta, manifest)
    except FairDashError:
        raise
    except (KeyError, TypeError, ValueError, IndexError, AttributeError) as e:
        raise FairDashError(f"{name} is damaged or incomplete ({type(e).__name__}: {str(e)[:200]}).") from None
    expected = getattr(estimator, "n_features_in_", None)
    if expected is not None and int(expected) != pre.n_features_out:
        raise FairDashError(f"{name} is inconsistent: its preprocessing makes {pre.n_features_out} features but the "
                            f"model expects {expected}.")
    return model
