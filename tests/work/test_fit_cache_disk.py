"""A fit cache whose disk refuses a write (full: ENOSPC, read-only: EROFS, no permission: EACCES) says so
once, as a warning and in ``cache.write_error``, leaves no temporary file or half entry behind, and keeps
fitting and answering from memory."""
from __future__ import annotations

import errno
import os
import re
import warnings
from pathlib import Path

import numpy as np
import pytest

from fairdash.models.fair_lr import LR, FairLR
from fairdash.targeting.target_spec import make_target_spec
from fairdash.work import fit_cache as C

MESSAGE = (r"The fit cache could not write to .+ \(No space left on device\): "
           r"fits are kept in memory only until it can\.")


def _toy(n=200, seed=0):
    rng = np.random.default_rng(seed)
    s = rng.integers(0, 2, n)
    X = rng.normal(size=(n, 3)) + s[:, None] * 0.5
    y = (X[:, 0] + 0.5 * rng.normal(size=n) > 0.3).astype(int)
    return X, y, s


def _full(*_args, **_kwargs):
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def _half_then_full(original):
    """A write that gets a few bytes onto the disk, then finds it full (a half-written temporary file)."""
    def write(self, data, *args, **kwargs):
        original(self, data[:3], *args, **kwargs)
        _full()
    return write


def _leftovers(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.rglob("*") if p.is_file() and ".tmp" in p.name)


def _disk_warnings(record) -> list[str]:
    return [str(w.message) for w in record if "The fit cache could not write" in str(w.message)]


@pytest.mark.parametrize("where", ["write_bytes", "write_text"])
def test_a_full_disk_is_warned_once_and_leaves_no_temporary_file(tmp_path, monkeypatch, where):
    X, y, s = _toy()
    monkeypatch.setattr(Path, where, _half_then_full(getattr(Path, where)))
    cache = C.FitCache(tmp_path)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        fits = [cache.fit(model, X, y, s) for model in (LR(), FairLR(target=make_target_spec(target_rate=0.3)),
                                                     FairLR(target=make_target_spec(target_rate=0.4)))]
        assert cache.write_error is not None
        results = [cache.result(C.cache_key(config={"n": i}), lambda i=i: {"accuracy": i / 10}) for i in range(3)]
    assert len(_disk_warnings(record)) == 1, _disk_warnings(record)  # several failed writes, one warning
    assert re.fullmatch(MESSAGE, _disk_warnings(record)[0]) and str(tmp_path) in _disk_warnings(record)[0]
    assert _leftovers(tmp_path) == []
    assert not list(tmp_path.rglob("*.safetensors")) and not list(tmp_path.rglob("*[0-9a-f].json"))
    assert cache.write_error == _disk_warnings(record)[0]  # still: no model's state could be written
    # the small results (fit times, test metrics) are text: they fail with write_text, not with write_bytes
    assert len(list(tmp_path.rglob("*.result.json"))) == (0 if where == "write_text" else 3 + 3)
    # the cache keeps working from memory: the same requests are hits, with the same models and values
    assert [hit for _, hit in fits] == [False, False, False]
    again = [cache.fit(model, X, y, s) for model in (LR(), FairLR(target=make_target_spec(target_rate=0.3)),
                                                     FairLR(target=make_target_spec(target_rate=0.4)))]
    assert [hit for _, hit in again] == [True, True, True]
    assert all(a is b for (a, _), (b, _) in zip(fits, again))
    np.testing.assert_array_equal(again[1][0].predict_proba(X), fits[1][0].predict_proba(X))
    assert [cache.result(C.cache_key(config={"n": i}), lambda: {"accuracy": -1}) for i in range(3)] == \
        [({"accuracy": i / 10}, True) for i in range(3)] and [hit for _, hit in results] == [False] * 3


def test_a_failed_rename_removes_the_half_entry_and_writing_resumes_when_the_disk_can(tmp_path, monkeypatch):
    X, y, s = _toy()
    real_replace = os.replace

    def replace(src, dst, *args, **kwargs):  # the model's arrays are renamed into place, then the disk is full
        if str(dst).endswith(".json"):
            _full()
        return real_replace(src, dst, *args, **kwargs)

    monkeypatch.setattr(os, "replace", replace)
    cache = C.FitCache(tmp_path)
    with pytest.warns(UserWarning, match=MESSAGE):
        _, hit = cache.fit(LR(), X, y, s)
    assert not hit and cache.write_error is not None
    assert _leftovers(tmp_path) == [] and not list(tmp_path.rglob("*.safetensors"))  # no entry without its .json
    monkeypatch.setattr(os, "replace", real_replace)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no second warning, and no error once the disk takes the write
        _, hit = cache.fit(FairLR(), X, y, s)
    assert not hit and cache.write_error is None
    (state,) = tmp_path.glob("*/*.safetensors")
    assert state.with_suffix(".json").exists() and _leftovers(tmp_path) == []
    _, hit = C.FitCache(tmp_path).fit(FairLR(), X, y, s)
    assert hit  # written to disk after all


def test_a_cache_directory_that_cannot_exist_is_a_warning_not_a_crash(tmp_path):
    """A real failure that root meets too: the cache's directory is under a regular file."""
    X, y, s = _toy()
    blocker = tmp_path / "a file"
    blocker.write_text("not a directory")
    cache = C.FitCache(blocker / "cache")
    with pytest.warns(UserWarning, match=r"The fit cache could not write to .+a file.cache \("):
        _, hit = cache.fit(LR(), X, y, s)
        cache.result(C.cache_key(config={}), lambda: {"accuracy": 1.0})
    assert not hit and cache.write_error and cache.fit(LR(), X, y, s)[1]


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0,
                    reason="running as root, which writes into a read-only (mode 0555) directory regardless")
def test_a_read_only_cache_directory_is_warned_once(tmp_path):
    X, y, s = _toy()
    directory = tmp_path / "cache"
    directory.mkdir()
    directory.chmod(0o555)
    try:
        cache = C.FitCache(directory)
        with warnings.catch_warnings(record=True) as record:
            warnings.simplefilter("always")
            cache.fit(LR(), X, y, s)
            cache.fit(FairLR(), X, y, s)
        assert len(_disk_warnings(record)) == 1 and "Permission denied" in cache.write_error
        assert _leftovers(directory) == [] and cache.fit(LR(), X, y, s)[1]
    finally:
        directory.chmod(0o755)


@pytest.mark.slow
def test_code_versions_never_build_python_parse_trees(monkeypatch):
    """Python 3.11 keeps the recursion depth of its parse-tree conversion in state that threads share: a
    training's code version computed while Streamlit parsed a page in another thread (its "magic") failed
    with "SystemError: AST constructor recursion depth mismatch" (CI: a FairGP training under AppTest; no
    lock of ours can cover Streamlit's parses). So the imports are read from compiled code: with
    ``ast.parse`` and the ``ast`` module's tree builder broken, every version is still computed, and the
    same as before."""
    import ast

    from fairdash.models.registry import MODELS
    from fairdash.work import fit_cache

    classes = [info.load_class() for info in MODELS.values()]
    fit_cache.code_version.cache_clear()
    fit_cache.source_version.cache_clear()
    want = [fit_cache.code_version(c) for c in classes] + [fit_cache.source_version("work/experiments.py")]

    def broken(*_a, **_k):
        raise SystemError("AST constructor recursion depth mismatch (before=48, after=21)")

    monkeypatch.setattr(ast, "parse", broken)
    fit_cache.code_version.cache_clear()
    fit_cache.source_version.cache_clear()
    try:
        got = [fit_cache.code_version(c) for c in classes] + [fit_cache.source_version("work/experiments.py")]
    finally:
        fit_cache.code_version.cache_clear()
        fit_cache.source_version.cache_clear()
    assert got == want and len(set(got)) > 2


@pytest.mark.slow
def test_code_versions_are_computed_safely_by_threads_at_once():
    """Trainings started together in the dashboard's threads each compute the code version of their models
    (one of six trainings at once once failed with "SystemError: AST constructor recursion depth mismatch",
    benchmarks/bench_team_load.py). Every thread gets the same answer, and none fails."""
    import threading

    from fairdash.work import fit_cache

    want = fit_cache.source_version("work/experiments.py")
    results, errors = [], []

    def work():
        try:
            for _ in range(5):
                fit_cache.source_version.cache_clear()
                fit_cache.code_version.cache_clear()
                results.append((fit_cache.source_version("work/experiments.py"), fit_cache.code_version()))
        except Exception as e:  # noqa: BLE001 - collected and asserted below
            errors.append(repr(e))

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not errors, errors[:3]
    assert len(results) == 40 and {r[0] for r in results} == {want} and len({r[1] for r in results}) == 1
