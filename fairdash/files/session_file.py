"""The session file (``.fairdash-session``): a dashboard session's work, kept by its owner, not by the server.

"Save this session" downloads one file that holds the current table, task and target and every run of the
session's history with its results and fitted models; "Open a session file" (the Data page) or
``fairdash report session.fairdash-session`` reads it back on any server, after a restart or on a colleague's
machine. The server keeps nothing of it.

The file is a zip archive written and checked with the model file's machinery (:func:`fairdash.files.archive.
open_archive`, :mod:`fairdash.files.zip_layout`): members stored, not deflated, the layout walked byte by byte,
every member's size and SHA-256 in the manifest, so a file with any byte altered is refused in one line. Its
members:

- ``manifest.json``: ``{"format": "fairdash-session", "format_version": 2, "members": {name: {"size",
  "sha256"}}, "created", "fairdash_version"}``;
- ``session.json``: plain JSON: the table's name and description, the current task (``TaskSpec.to_dict``) and
  its fingerprint, the target (``TargetSpec.to_dict``), each run's task (its parts and fingerprint), each run
  (``RunSpec.to_dict``, data name, number, time, leaks, skipped models), the members of its results and models,
  and its sides (``sides``: each fit as the price of deciding without s over several runs sees it,
  :class:`fairdash.evaluation.matched_price.Side`: label, seed, PR_t, with or without s, the blind rule's rates,
  counts, targets and accuracy on the training rows (``train_accuracy``: which of several blind rules is priced;
  files before it have none); a with-s rule's estimator as the place of its model in ``models``);
- ``table.parquet``: the current table (read back as every upload is:
  :func:`fairdash.data.reading.isolated.read_table`);
- ``task-<i>-x.parquet`` and ``task-<i>-codes.parquet``: a run's task (its feature columns; y, s and strata codes);
- ``run-<n>-results.parquet``: a run's results rows as they were (Parquet: every number and type as it was);
- ``run-<n>-model-<j>.fairdash``: a fitted model, the model file's own bytes (:func:`fairdash.files.export.
  model_bytes`), loaded with its own checks (:func:`fairdash.files.export.load_model`);
- ``run-<n>-sides.parquet``: the decisions on the test rows of a run's sides that decide without s (``side``: the
  side's place in the run's ``sides``, ``pred``: 0 or 1), where it has any.

No pickle anywhere. A newer format version is refused ("update FairDash"); this version's files open in later
versions, which read every older format (format 1, before the sides: its runs open without them, so the price of
deciding without s over several runs is not measured for them). The hashes guard against accidents and edits, not
against someone who rewrites the manifest too: open session files only from people you trust.

Public API: :func:`session_bytes`, :func:`session_file_name`, :func:`load_session` (a :class:`SessionFile`).
"""
from __future__ import annotations

import contextlib
import hashlib
import io
import json
import re
import zipfile
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .._version import software_versions
from ..data import Task, TaskSpec, build_task
from ..data.reading import budget, isolated, read
from ..data.split import split_task
from ..errors import FairDashError
from ..evaluation.matched_price import Side
from ..jsonable import to_jsonable
from ..progress import utc_now
from ..targeting.target_spec import TargetSpec
from . import archive, export
from .results_file import check_results
from .run_spec import RunSpec

isolated.preload(__name__)  # the reading process that opens a session file starts with this module imported

FORMAT_NAME = "fairdash-session"
FORMAT_VERSION = 2  # 2: the runs' sides (format 1 files have none)
SUFFIX = ".fairdash-session"
SESSION = "session.json"
TABLE = "table.parquet"
MAX_FILE_BYTES = read.MAX_BYTES  # a session file is an upload: the uploader's cap, also on the command line
MAX_SESSION_JSON_BYTES = 64 << 20
_MEMBER = re.compile(r"manifest\.json|session\.json|table\.parquet|task-\d{1,5}-(x|codes)\.parquet"
                     r"|run-\d{1,6}-(results\.parquet|sides\.parquet|model-\d{1,6}\.fairdash)")
KIND = archive.ArchiveKind(
    "FairDash session file", "save the session again", lambda n: _MEMBER.fullmatch(n) is not None,
    lambda n: export.MAX_MANIFEST_BYTES if n == archive.MANIFEST else (
        MAX_SESSION_JSON_BYTES if n == SESSION else MAX_FILE_BYTES),
    MAX_FILE_BYTES)


@dataclass(frozen=True)
class SavedRun:
    """One run as the session file holds it: what :class:`fairdash.work.runs.Run` is made of, its models as
    :class:`fairdash.files.export.LoadedModel` (keyed as the run keyed them)."""
    spec: RunSpec
    task: Task
    data_name: str
    results: pd.DataFrame
    models: dict
    skipped: list
    data_description: str
    seconds: float
    created: str
    number: int
    leaks: tuple
    same_as: int
    sides: tuple = ()  # of matched_price.Side, a with-s one's estimator that of one of ``models`` (format 1: none)


@dataclass(frozen=True)
class SessionFile:
    """A session file read back: the table (with its name and description), the current task built from it, the
    target and the runs (oldest first; runs of the current task share its :class:`Task`)."""
    table: pd.DataFrame
    table_name: str
    table_description: str
    task: Task
    target: TargetSpec
    runs: tuple
    created: str
    fairdash_version: str


# --------------------------------------------------------------------------------------------------
# Writing
# --------------------------------------------------------------------------------------------------
def _parquet(df: pd.DataFrame) -> bytes:
    buf = io.BytesIO()
    df.to_parquet(buf, index=False)
    return buf.getvalue()


def _task_parts(task: Task, i: int) -> tuple[dict, dict]:
    """A run's task as JSON and its two Parquet members."""
    codes = {"y": np.asarray(task.y), "s": np.asarray(task.s)}
    if task.strata is not None:
        codes["strata"] = np.asarray(task.strata)
    members = {f"task-{i}-x.parquet": _parquet(task.X.reset_index(drop=True)),
               f"task-{i}-codes.parquet": _parquet(pd.DataFrame(codes))}
    meta = {"spec": task.spec.to_dict(), "fingerprint": task.fingerprint, "group_names": list(task.group_names),
            "label_names": list(task.label_names), "numeric_features": list(task.numeric_features),
            "categorical_features": list(task.categorical_features), "strata_names": list(task.strata_names),
            "n_rows_read": task.n_rows_read, "n_dropped_missing_sy": task.n_dropped_missing_sy,
            "n_dropped_missing_features": task.n_dropped_missing_features, "warnings": list(task.warnings),
            "paper_setup": task.paper_setup, "s_values": list(task.s_values)}
    return meta, members


def _run_parts(run, task_index: int) -> tuple[dict, dict]:
    """A run (a :class:`fairdash.work.runs.Run`) as JSON and its members: results, one model file per model."""
    n = int(run.number)
    members = {f"run-{n}-results.parquet": _parquet(run.results)}
    models = []
    for j, (key, trained) in enumerate(run.models.items()):
        member = f"run-{n}-model-{j}.fairdash"
        members[member] = export.model_bytes(trained)
        models.append({"key": [None if isinstance(k, float) and np.isnan(k) else k for k in key], "member": member})
    meta = {"number": n, "task": task_index, "spec": run.spec.to_dict(), "data_name": str(run.data_name),
            "data_description": str(run.data_description or ""), "seconds": float(run.seconds),
            "created": str(run.created), "leaks": list(run.leaks), "same_as": int(run.same_as),
            "skipped": list(run.skipped), "results": f"run-{n}-results.parquet", "models": models}
    meta["sides"], sides_member = _sides_parts(run, n)
    meta["sides_member"] = next(iter(sides_member), None)
    members.update(sides_member)
    return meta, members


def _real(v) -> float | None:
    """A number as the file writes it: ``None`` for NaN (as the models' keys)."""
    return None if v is None or not np.isfinite(float(v)) else float(v)


def _sides_parts(run, n: int) -> tuple[list, dict]:
    """A run's sides (:class:`fairdash.evaluation.matched_price.Side`) as JSON, and the blind ones' decisions on the
    test rows as one Parquet member (``side``, ``pred``) where there are any. A with-s side's estimator is saved as
    the place in ``run.models`` of the model that holds it (``model``; the run keeps both from the same fit). One
    that is none of the run's models (not kept with the run) is not saved: ``model`` None, the side kept without
    it, as a rule with s whose scores the price does not cut (the fitted scorers with s are still its candidates)."""
    estimators = [m.estimator for m in run.models.values()]
    sides, blocks = [], []
    for i, x in enumerate(run.sides):
        model = next((j for j, e in enumerate(estimators) if x.estimator is not None and e is x.estimator), None)
        pred = None if x.pred_test is None else np.asarray(x.pred_test).astype(np.int8).ravel()
        if pred is not None:
            blocks.append(pd.DataFrame({"side": np.full(len(pred), i, dtype=np.int32), "pred": pred}))
        tnr = [[_real(v) for v in x.tnr[0]], [int(v) for v in x.tnr[1]], [_real(v) for v in x.tnr[2]]] if x.tnr else []
        sides.append({"label": str(x.label), "seed": int(x.seed), "target_rate": _real(x.target_rate),
                      "with_s": bool(x.with_s), "train_rates": [_real(v) for v in x.train_rates],
                      "counts": [int(v) for v in x.counts], "targets": [_real(v) for v in x.targets], "tnr": tnr,
                      "model": model, "rows": None if pred is None else int(len(pred)),
                      "train_accuracy": _real(x.train_accuracy)})
    return sides, ({f"run-{n}-sides.parquet": _parquet(pd.concat(blocks, ignore_index=True))} if blocks else {})


def session_bytes(*, table: pd.DataFrame, table_name: str, table_description: str, task: Task,
                  target: TargetSpec, runs=()) -> bytes:
    """The session file of the current ``table`` (its ``task`` and ``target``) and the history ``runs`` (each a
    :class:`fairdash.work.runs.Run`), as bytes. A session larger than :data:`MAX_FILE_BYTES` is refused in one line
    (it could not be opened again)."""
    members = {TABLE: _parquet(table)}
    tasks, runs_meta, seen = [], [], {}
    for run in runs:
        if id(run.task) not in seen:
            seen[id(run.task)] = len(tasks)
            meta, parts = _task_parts(run.task, len(tasks))
            tasks.append(meta)
            members.update(parts)
        meta, parts = _run_parts(run, seen[id(run.task)])
        runs_meta.append(meta)
        members.update(parts)
    created = utc_now()
    session = {"table": {"name": str(table_name), "description": str(table_description or ""), "member": TABLE},
               "task": task.spec.to_dict(), "task_fingerprint": task.fingerprint, "target": target.to_dict(),
               "tasks": tasks, "runs": runs_meta, "created": created}
    members = {SESSION: json.dumps(to_jsonable(session), sort_keys=True, allow_nan=False,
                                   ensure_ascii=False).encode("utf-8"), **members}
    manifest = {"format": FORMAT_NAME, "format_version": FORMAT_VERSION, "created": created,
                "fairdash_version": software_versions()["fairdash"],
                "members": {k: {"size": len(v), "sha256": hashlib.sha256(v).hexdigest()} for k, v in members.items()}}
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_STORED) as z:  # stored: as the model file (zip_layout)
        z.writestr(archive.MANIFEST, json.dumps(manifest, indent=1, sort_keys=True))  # first: identifies the file
        for k, v in members.items():
            z.writestr(k, v)
    raw = buf.getvalue()
    if len(raw) > MAX_FILE_BYTES:
        raise FairDashError(f"This session would make a file of {budget.size_text(len(raw))}, more than the "
                            f"{budget.size_text(MAX_FILE_BYTES)} a session file may hold: remove runs you do not need "
                            "(or keep their model files from Export) and save again.")
    return raw


def session_file_name(table_name: str) -> str:
    """The download name: the table's name made safe, ``fairdash-<table>.fairdash-session``."""
    stem = re.sub(r"[^A-Za-z0-9._-]+", "-", str(table_name)).strip("-.")[:60] or "session"
    return f"fairdash-{stem}{SUFFIX}"


# --------------------------------------------------------------------------------------------------
# Reading
# --------------------------------------------------------------------------------------------------
def _read_source(source) -> tuple[bytes, str]:
    return archive.read_source(source, what="session file", max_bytes=MAX_FILE_BYTES, too_big=_too_big,
                              caller="load_session")


def _too_big(name: str) -> str:
    return f"{name} is larger than {budget.size_text(MAX_FILE_BYTES)}; it is not a FairDash session file."


def _model_file(raw: bytes) -> bool:
    """Whether ``raw`` has a model file's members (for the refusal's words only; nothing of it is read)."""
    try:
        with zipfile.ZipFile(io.BytesIO(raw)) as z:
            return set(z.namelist()) == set(export.MEMBERS)
    except (zipfile.BadZipFile, OSError, ValueError, EOFError, RuntimeError):
        return False


@contextlib.contextmanager
def _as_session_file(raw: bytes, name: str):
    """A refusal of the archive says so where the file is a model file."""
    try:
        yield
    except FairDashError:
        if _model_file(raw):
            raise FairDashError(f"{name} is not a FairDash session file: it is a model file (open it with "
                                "fairdash.load_model, fairdash predict or the Score new data page).") from None
        raise


def _check_manifest(manifest_raw: bytes, digests: dict, name: str) -> dict:
    """The manifest, checked: this format or an older one, and every member listed with its size and hash as
    recorded (``digests``: :func:`fairdash.files.archive.member_digests`)."""
    manifest = archive.json_member(manifest_raw, "manifest", name)
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT_NAME:
        raise FairDashError(f"{name} is not a FairDash session file (its manifest names another format).")
    version = manifest.get("format_version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise FairDashError(f"{name} is damaged: its manifest has no valid format version.")
    if version > FORMAT_VERSION:
        raise FairDashError(f"{name} was saved by a newer FairDash ({manifest.get('fairdash_version', 'unknown')}, "
                            f"session file format {version}); this FairDash reads formats up to {FORMAT_VERSION}. "
                            "Update FairDash to open it.")
    listed = manifest.get("members")
    if not isinstance(listed, dict) or set(listed) != set(digests) - {archive.MANIFEST}:
        raise FairDashError(f"{name} has been altered or damaged: its manifest does not list its parts.")
    for member, digest in digests.items():
        if member != archive.MANIFEST and not archive.matches(listed.get(member), digest):
            raise FairDashError(f"{name} has been altered or damaged: {member} does not match the checksum recorded "
                                "when it was saved. Refusing to open it.")
    return manifest


def _frame(members: dict, member, name: str) -> pd.DataFrame:
    """A Parquet member of the file (results, a run's task), its memory estimated first (``budget``)."""
    raw = members.get(member) if isinstance(member, str) else None
    if raw is None:
        raise FairDashError(f"{name} is incomplete: a part it names ({member!r}) is missing.")
    budget.check_parquet(raw, f"{name} ({member})", budget.table_budget())
    try:
        return pd.read_parquet(io.BytesIO(raw), use_threads=False)
    except Exception:  # noqa: BLE001 - pyarrow's own error types on a damaged member
        raise FairDashError(f"{name} is damaged: {member} cannot be read.") from None


def _task_of(meta: dict, i: int, members: dict, name: str) -> Task:
    """A run's task from its parts, checked against its fingerprint."""
    X, codes = _frame(members, f"task-{i}-x.parquet", name), _frame(members, f"task-{i}-codes.parquet", name)
    groups = tuple(meta["group_names"])
    y, s = codes["y"].to_numpy(), codes["s"].to_numpy()
    strata = codes["strata"].to_numpy() if "strata" in codes.columns else None
    if len(X) != len(y) or not np.isin(y, (0, 1)).all() or (len(s) and not (0 <= s.min() and s.max() < len(groups))):
        raise FairDashError(f"{name} is damaged: the task of a run does not hold together.")
    task = Task(spec=TaskSpec.from_dict(meta["spec"]), X=X, y=y, s=s, group_names=groups,
                label_names=tuple(meta["label_names"]), numeric_features=tuple(meta["numeric_features"]),
                categorical_features=tuple(meta["categorical_features"]), strata=strata,
                strata_names=tuple(meta["strata_names"]), n_rows_read=int(meta["n_rows_read"]),
                n_dropped_missing_sy=int(meta["n_dropped_missing_sy"]),
                n_dropped_missing_features=int(meta["n_dropped_missing_features"]), warnings=list(meta["warnings"]),
                paper_setup=meta["paper_setup"], s_values=tuple(meta["s_values"]))
    if task.fingerprint != meta["fingerprint"]:
        raise FairDashError(f"{name} is damaged: a run's task does not give the rows it was saved with.")
    return task


def _models(meta: dict, members: dict, name: str) -> dict:
    out = {}
    for m in meta["models"]:
        raw = members.get(m["member"]) if isinstance(m.get("member"), str) else None
        if raw is None or not m["member"].endswith(export.SUFFIX):
            raise FairDashError(f"{name} is incomplete: a model it names is missing.")
        try:
            model = export.load_model(raw)
        except FairDashError as e:
            raise FairDashError(f"{name}: its model {m['member']} cannot be loaded: {e}") from None
        out[tuple(float("nan") if k is None else k for k in m["key"])] = model
    return out


def _numbers(values, bad, *, whole: bool = False) -> tuple:
    """A list of the file's numbers: rates and targets in [0, 1] (``None``: NaN), or counts (``whole``)."""
    if not isinstance(values, list):
        raise bad("a list of numbers is not a list")
    out = []
    for v in values:
        if v is None and not whole:
            out.append(float("nan"))
        elif isinstance(v, bool) or not isinstance(v, int if whole else (int, float)) or not (
                v >= 0 if whole else 0 <= v <= 1):
            raise bad(f"{v!r:.40} is not a {'count' if whole else 'rate'}")
        else:
            out.append(int(v) if whole else float(v))
    return tuple(out)


def _side_of(x, models: list, bad) -> Side:
    """One side as the file holds it (:func:`_sides_parts`), checked; its decisions are added by :func:`_sides`."""
    if not isinstance(x, dict) or not isinstance(x.get("label"), str) or not isinstance(x.get("with_s"), bool):
        raise bad("a side has no label")
    seed, model, rows = x.get("seed"), x.get("model"), x.get("rows")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise bad("a side has no valid seed")
    if model is not None and (not x["with_s"] or isinstance(model, bool) or not isinstance(model, int)
                              or not 0 <= model < len(models)):
        raise bad(f"a side names a model the run does not have ({model!r:.40})")
    if rows is not None and (x["with_s"] or isinstance(rows, bool) or not isinstance(rows, int)):
        raise bad("a side's count of test rows is not valid")
    rates, counts, targets = (_numbers(x.get(k), bad, whole=k == "counts")
                              for k in ("train_rates", "counts", "targets"))
    tnr = x.get("tnr")
    if not isinstance(tnr, list) or len(tnr) not in (0, 3):
        raise bad("a side's TNRs are not valid")
    tnr = tuple(_numbers(part, bad, whole=k == 1) for k, part in enumerate(tnr))
    if len({len(rates), len(counts), len(targets)}) > 1 or (tnr and len({len(part) for part in tnr}) > 1):
        raise bad("a side's rates, counts and targets do not match")
    target_rate = _numbers([x.get("target_rate")], bad)[0]
    train_accuracy = _numbers([x.get("train_accuracy")], bad)[0]  # files before it: None, read as NaN
    return Side(x["label"], seed, target_rate, x["with_s"], rates, counts, targets, None,
                None if model is None else models[model].estimator, tnr, train_accuracy)


def _sides(meta: dict, task: Task, models: list, members: dict, name: str) -> tuple:
    """A run's sides (:func:`_sides_parts`), every part checked: a blind side's decisions are those of its split's
    test rows, a with-s side's estimator that of the run's model it names (``models``: the loaded models in the
    run's order). A run of a format 1 file has none."""
    listed = meta.get("sides", [])

    def bad(why: str) -> FairDashError:
        return FairDashError(f"{name} is damaged: the sides of run {meta.get('number')} do not hold together ({why}).")

    if not isinstance(listed, list):
        raise bad("not a list")
    sides = [_side_of(x, models, bad) for x in listed]
    counted = [x.get("rows") for x in listed]  # each side's count of decisions (None: it has none)
    rows = np.array([0 if r is None else r for r in counted], dtype=np.int64)
    tests = {seed: split_task(task, seed=seed).test.size
             for seed in {x.seed for x, r in zip(sides, counted) if r is not None}}
    if any(r is not None and r != tests[x.seed] for r, x in zip(counted, sides)):
        raise bad("a side's decisions are not its split's test rows")
    if not rows.sum():
        return tuple(sides)
    frame = _frame(members, meta.get("sides_member"), name)
    if (list(frame.columns) != ["side", "pred"] or not all(pd.api.types.is_integer_dtype(d) for d in frame.dtypes)
            or frame.isna().any().any()):
        raise bad("its decisions are not a table of sides and decisions")
    side, pred = frame["side"].to_numpy().astype(np.int64), frame["pred"].to_numpy()
    if not np.isin(pred, (0, 1)).all() or ((side < 0) | (side >= len(sides))).any() or not np.array_equal(
            np.bincount(side, minlength=len(sides)), rows):
        raise bad("its decisions are not each side's test rows")
    order = np.argsort(side, kind="stable")
    for i, block in enumerate(np.split(pred[order].astype(np.int8), np.cumsum(rows)[:-1])):
        if counted[i] is not None:
            sides[i].pred_test = block
    return tuple(sides)


def _run_of(meta: dict, tasks: list, members: dict, name: str) -> SavedRun:
    task, models = tasks[int(meta["task"])], _models(meta, members, name)
    sides = _sides(meta, task, list(models.values()), members, name)
    results = check_results(_frame(members, meta["results"], name), f"{name} ({meta['results']})")
    return SavedRun(RunSpec.from_dict(meta["spec"]), task, str(meta["data_name"]), results, models,
                    list(meta["skipped"]), str(meta["data_description"]), float(meta["seconds"]), str(meta["created"]),
                    int(meta["number"]), tuple(meta["leaks"]), int(meta["same_as"]), sides)


def load_session(source, *, name: str | None = None, watch=None) -> SessionFile:
    """Read a session file (a path, bytes, or a binary file object such as an upload). Every problem (not a
    session file, altered, damaged, too large, from a newer FairDash, over the memory or time limit) is a one-line
    :class:`FairDashError`; nothing in the file is executed. The whole file is read as every upload is, in a
    process of its own under the table's memory and time limits (:func:`fairdash.data.reading.isolated.
    call_limited`; ``watch``: the server's memory guard, called while it runs). ``name``: the file's name in
    messages (an upload's)."""
    raw, default_name = _read_source(source)
    name = name or default_name
    with _as_session_file(raw, name):
        digests, manifest_raw = archive.member_digests(raw, name, KIND)  # streamed: an altered byte is refused here
    _check_manifest(manifest_raw, digests, name)
    return isolated.call_limited(session_from_bytes, (raw, name), name, watch=watch, what="session file",
                                 imports=export.LOAD_MODULES)


def session_from_bytes(raw: bytes, name: str) -> SessionFile:
    """:func:`load_session`'s reading, in this process: only where its limits are already set (a reading
    process)."""
    with _as_session_file(raw, name):
        members = archive.open_archive(raw, name, KIND)
    manifest = _check_manifest(members[archive.MANIFEST], archive.digests_of(members), name)
    if SESSION not in members or TABLE not in members:
        raise FairDashError(f"{name} is incomplete: it holds no session.")
    meta = archive.json_member(members[SESSION], "session", name)
    try:
        table = isolated.read_table(members[TABLE], f"{name} (its table)")
        task = build_task(table, TaskSpec.from_dict(meta["task"]))
        if task.fingerprint != meta["task_fingerprint"]:
            raise FairDashError(f"{name} is damaged: its table does not give the task it was saved with.")
        tasks = [task if t["fingerprint"] == task.fingerprint and TaskSpec.from_dict(t["spec"]) == task.spec
                 else _task_of(t, i, members, name) for i, t in enumerate(meta["tasks"])]
        runs = tuple(_run_of(r, tasks, members, name) for r in meta["runs"])
        target = TargetSpec.from_dict(meta["target"])
        return SessionFile(table, str(meta["table"]["name"]), str(meta["table"]["description"]), task, target, runs,
                           str(manifest.get("created", "")), str(manifest.get("fairdash_version", "")))
    except FairDashError:
        raise
    except (KeyError, TypeError, ValueError, IndexError, AttributeError) as e:
        raise FairDashError(f"{name} is damaged or incomplete ({type(e).__name__}: {str(e)[:200]}).") from None
