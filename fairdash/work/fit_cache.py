"""Fitted models kept so that the same request twice trains once.

``FitCache``: fitted models keyed by data content, configuration and code version (``cache_key``),
kept as safe state (``.safetensors`` + ``.json``, no pickle) on disk with an in-memory LRU in front.
It sits above the models (it stores and rebuilds them through ``fairdash.models.core.state``).
"""
from __future__ import annotations

import dis
import hashlib
import json
import os
import threading
import time
import types
from collections import OrderedDict
from functools import lru_cache
from pathlib import Path
from typing import Callable

import numpy as np

from .. import _version
from ..device import resolve_device
from ..errors import FairDashError
from ..jsonable import to_jsonable
from ..models.core.state import class_path, load_state, model_from_state, params_meta, save_state
from ..progress import utc_now

CACHE_ENV = "FAIRDASH_CACHE_DIR"


# --------------------------------------------------------------------------------------------------
# Cache keys
# --------------------------------------------------------------------------------------------------
_SHARED_SOURCES = ("models/core/state.py", "targeting/targets.py", "targeting/target_spec.py")


def _relative_imports(path: Path) -> list[tuple[int, str, tuple]]:
    """The relative imports in ``path`` as ``(level, module, names)``, every form of them (parenthesised
    names, imports inside functions and classes, ``from . import module``), read from the compiled code:
    each import is an ``IMPORT_NAME`` whose two operands before it are its level and its names.

    Not ``ast.parse``: Python 3.11's conversion of a parse tree to Python objects keeps its recursion
    depth in state that threads share, so a parse here at the same time as one in another thread (a
    training's cache key beside Streamlit's own parse of a page for its "magic") failed with
    "SystemError: AST constructor recursion depth mismatch" (seen in the dashboard's trainings, in
    benchmarks/bench_team_load.py and in CI). Compiling to code does not build those objects."""
    code = compile(path.read_text(encoding="utf-8"), str(path), "exec", dont_inherit=True)
    found, todo = [], [code]
    while todo:
        c = todo.pop()
        ins = list(dis.get_instructions(c))
        for i, x in enumerate(ins):
            if x.opname == "IMPORT_NAME" and i >= 2 and isinstance(ins[i - 2].argval, int) and ins[i - 2].argval > 0:
                found.append((ins[i - 2].argval, x.argval or "", tuple(ins[i - 1].argval or ())))
        todo.extend(k for k in c.co_consts if isinstance(k, types.CodeType))
    return found


def _module_sources(path: Path, root: Path, seen: set) -> None:
    """``path`` and, transitively, the fairdash modules it imports relatively (``_relative_imports``),
    packages included (their ``__init__.py``)."""
    if path in seen or not path.exists():
        return
    seen.add(path)
    for level, module, names in _relative_imports(path):
        base = path.parent
        for _ in range(level - 1):
            base = base.parent
        if module:
            base = base.joinpath(*module.split("."))
            candidates = [base.with_suffix(".py"), base / "__init__.py"]
            candidates += [base / f"{n}.py" for n in names]  # from .pkg import module
        else:
            candidates = [base / f"{n}.py" for n in names] + [base / n / "__init__.py" for n in names]
        for c in candidates:
            if c.exists() and root in c.resolve().parents:
                _module_sources(c.resolve(), root, seen)


@lru_cache(maxsize=None)
def code_version(model_class=None) -> str:
    """``fairdash.__version__`` plus a short hash of model source: for ``model_class``, its own module
    and the fairdash modules it imports (so a change to one model retrains only that model); without
    it, every model module. Edited model code never answers from a stale cache."""
    import inspect

    root = Path(__file__).resolve().parent.parent  # the fairdash package
    seen: set = set()
    if model_class is not None:
        _module_sources(Path(inspect.getfile(model_class)).resolve(), root, seen)
    else:
        for p in sorted((root / "models").rglob("*.py")):
            _module_sources(p.resolve(), root, seen)
    for rel in _SHARED_SOURCES:
        _module_sources((root / rel).resolve(), root, seen)
    return _sources_version(seen, root)


def _sources_version(paths, root: Path) -> str:
    """``fairdash.__version__`` plus a short hash of these source files (names and contents)."""
    h = hashlib.sha256()
    for p in sorted(paths):
        h.update(str(p.relative_to(root)).encode())
        h.update(p.read_bytes())
    return f"{_version.__version__}+{h.hexdigest()[:12]}"


@lru_cache(maxsize=None)
def source_version(*modules: str) -> str:
    """Like ``code_version`` for code that is not a model: ``fairdash.__version__`` plus a hash of the
    named modules (paths relative to the package, e.g. ``"evaluation/metrics.py"``) and what they import."""
    root = Path(__file__).resolve().parent.parent  # the fairdash package
    seen: set = set()
    for rel in modules:
        _module_sources((root / rel).resolve(), root, seen)
    return _sources_version(seen, root)


def _canonical(obj):
    """Config values as JSON-able data for a cache key (``jsonable.to_jsonable``; other objects by ``repr``;
    the key's JSON sorts the dict keys and writes floats exactly)."""

    return to_jsonable(obj, other=repr)


_DIGESTS: dict = {}  # id(array) -> (weakref, fingerprint, digest), read-only arrays only
_DIGESTS_LOCK = threading.Lock()


def _frozen(a: np.ndarray) -> bool:
    """True when neither ``a`` nor any array it is a view of can be written through."""
    while isinstance(a, np.ndarray):
        if a.flags.writeable:
            return False
        a = a.base
    return True


def array_digest(a) -> str:
    """sha256 of an array's dtype, shape and bytes. Hashing Adult's 36k x 101 matrix takes about
    0.1 s on a busy 2-core machine, so digests of read-only arrays (``a.setflags(write=False)``,
    base included) are remembered for as long as the array lives: mark prepared matrices read-only
    to answer repeated cache requests in milliseconds."""
    import weakref

    a = np.asarray(a)
    if a.dtype == object:
        raise FairDashError("Cannot compute a cache key for an array of Python objects.")
    frozen = _frozen(a)
    fp = (a.__array_interface__["data"][0], a.shape, a.strides, str(a.dtype))
    if frozen:
        with _DIGESTS_LOCK:
            hit = _DIGESTS.get(id(a))
        if hit is not None and hit[0]() is a and hit[1] == fp:
            return hit[2]
    c = np.ascontiguousarray(a)
    h = hashlib.sha256()
    h.update(str(c.dtype).encode())
    h.update(repr(c.shape).encode())
    h.update(memoryview(c).cast("B") if c.size else b"")
    digest = h.hexdigest()
    if frozen:
        try:
            ref = weakref.ref(a, lambda _r, k=id(a): _DIGESTS.pop(k, None))
        except TypeError:
            return digest
        with _DIGESTS_LOCK:
            _DIGESTS[id(a)] = (ref, fp, digest)
    return digest


def cache_key(*arrays, config: dict, code_version: str | None = None) -> str:
    """sha256 over each array's digest (dtype, shape and bytes: ``array_digest``), the canonical JSON
    of ``config`` and the code version (default: ``code_version()``). ``None`` arrays (e.g. no strata)
    are allowed."""
    h = hashlib.sha256()
    for a in arrays:
        if a is None:
            h.update(b"<none>")
            continue
        h.update(array_digest(a).encode())
    h.update(json.dumps(_canonical(config), sort_keys=True, separators=(",", ":")).encode())
    h.update((code_version if code_version is not None else globals()["code_version"]()).encode())
    return h.hexdigest()


def model_cache_key(model, X, y, s=None, strata=None, extra: dict | None = None) -> str:
    """The key of ``model.fit(X, y, s, strata)``: data, the model class and its parameters."""

    config = {"class": class_path(type(model)), "params": params_meta(model), "extra": extra or {}}
    # the device actually used can change numbers slightly; it is part of the request
    if "device" in config["params"]:
        config["params"]["device"] = str(resolve_device(config["params"]["device"]))
    return cache_key(X, y, s, strata, config=config, code_version=code_version(type(model)))


# --------------------------------------------------------------------------------------------------
# The fit cache
# --------------------------------------------------------------------------------------------------
def default_cache_dir() -> Path:
    env = os.environ.get(CACHE_ENV)
    if env:
        return Path(env).expanduser()
    return Path.home() / ".cache" / "fairdash"


class FitCache:
    """Fitted models by key: an in-memory LRU (``memory_items`` models) in front of a directory of
    ``<key>.safetensors`` + ``<key>.json`` safe states. ``directory=False`` keeps it in memory only.

    ``get_or_fit(key, build, fit)`` returns ``(model, hit)``: on a miss it calls ``model = build()``,
    ``fit(model)``, stores ``model.get_state()`` and returns the fitted model; on a hit the model
    comes from the memory LRU, or is rebuilt from disk by its class's ``from_state``.
    """

    def __init__(self, directory=None, memory_items: int = 64):
        if directory is False:
            self.directory = None
        else:
            self.directory = Path(directory).expanduser() if directory is not None else default_cache_dir()
        self.memory_items = int(memory_items)
        self._memory: OrderedDict[str, object] = OrderedDict()
        self._results: OrderedDict[str, dict] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0
        # why a disk write failed (a full or read-only disk), for the dashboard to show; None until one fails
        # and again once a model's state is written. The first failure is also a warning, once per cache.
        self.write_error: str | None = None
        self._warned = False

    # -- paths ------------------------------------------------------------------------------------
    def _stem(self, key: str) -> Path | None:
        if self.directory is None:
            return None
        if not all(c in "0123456789abcdef" for c in key) or not key:
            raise FairDashError("Cache keys must be hexadecimal digests (use fairdash.work.fit_cache.cache_key).")
        return self.directory / key[:2] / key

    # -- memory -----------------------------------------------------------------------------------
    def _remember(self, key: str, model) -> None:
        with self._lock:
            self._memory[key] = model
            self._memory.move_to_end(key)
            while len(self._memory) > self.memory_items:
                self._memory.popitem(last=False)

    def _remember_result(self, key: str, value: dict) -> None:
        with self._lock:
            self._results[key] = value
            self._results.move_to_end(key)
            while len(self._results) > 16 * self.memory_items:
                self._results.popitem(last=False)

    def _write_failed(self, e: OSError) -> None:
        """A disk write failed (``ENOSPC``, ``EROFS``, ``EACCES``, ...): the fits stay in memory only, said once."""
        import warnings

        reason = e.strerror or type(e).__name__
        self.write_error = (f"The fit cache could not write to {self.directory} ({reason}): fits are kept in "
                            "memory only until it can.")
        with self._lock:
            first, self._warned = not self._warned, True
        if first:
            warnings.warn(self.write_error, stacklevel=3)

    # -- public -----------------------------------------------------------------------------------
    def get(self, key: str):
        """The cached fitted model for ``key``, or ``None``."""
        with self._lock:
            if key in self._memory:
                self._memory.move_to_end(key)
                return self._memory[key]
        stem = self._stem(key)
        if stem is None or not stem.with_name(stem.name + ".json").exists():
            return None

        try:
            model = model_from_state(load_state(stem))
        except Exception:  # a corrupt or outdated entry is a miss, never a crash
            return None
        self._remember(key, model)
        return model

    def put(self, key: str, model) -> None:
        """Store a fitted model (memory, and disk when the cache has a directory)."""
        self._remember(key, model)
        stem = self._stem(key)
        if stem is not None:
            try:
                save_state(stem, model.get_state())  # removes its own temporary files when it fails
            except OSError as e:
                self._write_failed(e)  # a read-only or full disk only costs the disk copy
            else:
                self.write_error = None  # a model's state is written again (a small result is no sign of that)

    def get_or_fit(self, key: str, build: Callable[[], object], fit: Callable[[object], object]):
        """``(model, hit)``: the cached model, or ``build()`` fitted by ``fit(model)`` and stored."""
        model = self.get(key)
        if model is not None:
            self.hits += 1
            return model, True
        self.misses += 1
        model = build()
        fit(model)
        self.put(key, model)
        return model, False

    def fit(self, model, X, y, s=None, strata=None, **fit_params):
        """Convenience: ``(fitted model, hit)`` for ``model.fit(X, y, s, ...)`` through the cache.
        The model given is cloned (unfitted copy) on a miss, so it is never mutated."""
        from sklearn.base import clone

        key = model_cache_key(model, X, y, s, strata, extra={k: _canonical(v) for k, v in fit_params.items()})
        kwargs = dict(fit_params)
        if strata is not None:
            kwargs["strata"] = strata
        t0 = time.perf_counter()
        fitted, hit = self.get_or_fit(key, lambda: clone(model), lambda m: m.fit(X, y, s, **kwargs))
        record = {"fit_seconds": time.perf_counter() - t0,
                  "fitted_at": utc_now()}
        # when and how long the original fit took, so that a model served from the cache reports them
        record, _ = self.result(hashlib.sha256((key + ":fit").encode()).hexdigest(), lambda: record)
        fitted.fit_seconds_ = float(record.get("fit_seconds", 0.0))
        fitted.fitted_at_ = str(record.get("fitted_at", ""))
        return fitted, hit

    def result(self, key: str, compute: Callable[[], dict]) -> tuple[dict, bool]:
        """``(value, hit)`` for a small JSON-able result derived from a cached model (its test metrics,
        say), by key: from memory, else from ``<key>.result.json`` on disk, else ``compute()``, stored.
        So a repeated request costs neither the fit nor the scoring."""
        with self._lock:
            if key in self._results:
                self._results.move_to_end(key)
                return dict(self._results[key]), True
        stem = self._stem(key)
        path = None if stem is None else stem.with_name(stem.name + ".result.json")
        if path is not None and path.exists():
            try:
                value = json.loads(path.read_text())
                if isinstance(value, dict):
                    self._remember_result(key, value)
                    return dict(value), True
            except (OSError, ValueError):
                pass  # unreadable: computed again
        value = compute()
        self._remember_result(key, dict(value))
        try:
            text = None if path is None else json.dumps(value)
        except (TypeError, ValueError):
            text = None  # not JSON: kept in memory only
        if path is not None and text is not None:
            tmp = path.with_name(path.name + f".{os.getpid()}.{threading.get_ident()}.tmp")
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                tmp.write_text(text)
                os.replace(tmp, path)
            except OSError as e:
                try:
                    tmp.unlink(missing_ok=True)
                except OSError:
                    pass  # the directory refuses even that
                self._write_failed(e)  # only the disk copy is lost
        return value, False

    def clear(self, disk: bool = False) -> None:
        """Forget the memory LRU (and, with ``disk=True``, delete this cache's files)."""
        with self._lock:
            self._memory.clear()
            self._results.clear()
        if disk and self.directory is not None and self.directory.exists():
            for p in self.directory.glob("*/*"):
                if p.suffix in (".safetensors", ".json"):  # models' states and results (<key>.result.json)
                    p.unlink(missing_ok=True)

    def __len__(self) -> int:
        return len(self._memory)

    # -- across processes (a training in a worker process, fairdash.app.training.worker) ----------------------
    def __getstate__(self) -> dict:
        """A copy for a worker process: no lock; a cache with a directory travels without its memory
        LRU (the worker reads the disk), a memory-only one with it (that is all it has)."""
        state = dict(self.__dict__)
        del state["_lock"]
        if self.directory is not None:
            state["_memory"] = OrderedDict()
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()

    def keys_now(self) -> tuple:
        """The keys held in memory now (models, results) and the counts: what :meth:`new_since` compares with."""
        with self._lock:
            return frozenset(self._memory), frozenset(self._results), self.hits, self.misses

    def new_since(self, before: tuple) -> dict:
        """The fits and results added since ``before`` (:meth:`keys_now`), to :meth:`merge` into the cache
        this one was copied from."""
        with self._lock:
            return {"models": {k: v for k, v in self._memory.items() if k not in before[0]},
                    "results": {k: v for k, v in self._results.items() if k not in before[1]},
                    "hits": self.hits - before[2], "misses": self.misses - before[3],
                    "write_error": self.write_error}

    def merge(self, new: dict) -> None:
        """Take the fits a worker process made with a copy of this cache (:meth:`new_since`)."""
        for k, model in new.get("models", {}).items():
            self._remember(k, model)
        for k, value in new.get("results", {}).items():
            self._remember_result(k, value)
        self.hits += int(new.get("hits", 0))
        self.misses += int(new.get("misses", 0))
        if new.get("write_error"):
            self.write_error = new["write_error"]
