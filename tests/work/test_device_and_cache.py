"""Device choice and seeding (fairdash/device.py), progress (fairdash/progress.py) and the fit cache
(fairdash/work/fit_cache.py)."""
import json
import random

import numpy as np
import pytest
import torch

from fairdash import device as D
from fairdash import progress as P
from fairdash.errors import FairDashError
from fairdash.models.fair_lr import LR, FairLR
from fairdash.targeting.target_spec import make_target_spec
from fairdash.work import fit_cache as C


def test_resolve_device_auto_and_override(monkeypatch):
    monkeypatch.delenv(D.DEVICE_ENV, raising=False)
    expected = "cuda" if torch.cuda.is_available() else "cpu"
    assert D.resolve_device("auto").type == expected
    assert D.resolve_device(None).type == expected
    assert D.resolve_device("cpu") == torch.device("cpu")
    assert D.resolve_device(torch.device("cpu")) == torch.device("cpu")
    monkeypatch.setenv(D.DEVICE_ENV, "cpu")
    assert D.resolve_device("auto") == torch.device("cpu")
    assert D.device_description("cpu") == "CPU"
    with pytest.raises(FairDashError):
        D.resolve_device("tpu")


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the message shown when no GPU is present")
def test_asking_for_cuda_without_gpu_is_a_clear_error():
    with pytest.raises(FairDashError, match="GPU"):
        D.resolve_device("cuda")


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA GPU on this machine; the CUDA path is exercised "
                                                          "where one is")
def test_cuda_device_description():
    assert D.resolve_device("cuda").type == "cuda"
    assert D.device_description("cuda") == torch.cuda.get_device_name(0)


def test_seed_everything_repeats():
    D.seed_everything(123)
    a = (random.random(), np.random.rand(), torch.rand(1).item())
    D.seed_everything(123)
    b = (random.random(), np.random.rand(), torch.rand(1).item())
    assert a == b


def test_progress_helpers():
    seen = []
    P.as_progress(None)(0.5, "x")  # no-op
    P.as_progress(lambda f, m: seen.append((f, m)))(1.5, "over")
    P.scaled_progress(lambda f, m: seen.append((f, m)), 0.5, 1.0)(0.5, "half")
    assert seen == [(1.0, "over"), (0.75, "half")]


def test_cache_key_depends_on_content_config_and_version():
    X = np.arange(12.0).reshape(4, 3)
    y = np.array([0, 1, 0, 1])
    k = C.cache_key(X, y, None, config={"a": 1, "b": [0.1, 2]})
    assert k == C.cache_key(X.copy(), y.copy(), None, config={"b": [0.1, 2], "a": 1})
    assert k != C.cache_key(X + 1e-9, y, None, config={"a": 1, "b": [0.1, 2]})
    assert k != C.cache_key(X.astype(np.float32), y, None, config={"a": 1, "b": [0.1, 2]})
    assert k != C.cache_key(X.reshape(3, 4), y, None, config={"a": 1, "b": [0.1, 2]})
    assert k != C.cache_key(X, y, None, config={"a": 2, "b": [0.1, 2]})
    assert k != C.cache_key(X, y, None, config={"a": 1, "b": [0.1, 2]}, code_version="other")
    assert C.code_version().startswith(__import__("fairdash").__version__)


def _toy(n=600, seed=0):
    rng = np.random.default_rng(seed)
    s = rng.integers(0, 2, n)
    X = rng.normal(size=(n, 4)) + s[:, None] * 0.5
    y = (X[:, 0] + 0.5 * rng.normal(size=n) > 0.3).astype(int)
    return X, y, s


def test_fit_cache_trains_once_and_reloads_from_disk(tmp_path):
    X, y, s = _toy()
    cache = C.FitCache(tmp_path)
    calls = []

    def fit(m):
        calls.append(1)
        m.fit(X, y, s)

    key = C.model_cache_key(FairLR(), X, y, s)
    m1, hit1 = cache.get_or_fit(key, FairLR, fit)
    m2, hit2 = cache.get_or_fit(key, FairLR, fit)
    assert (hit1, hit2) == (False, True) and len(calls) == 1 and m2 is m1
    files = sorted(p.suffix for p in tmp_path.glob("*/*"))
    assert files == [".json", ".safetensors"]  # the one safe format, as in the model file
    json.loads(next(tmp_path.glob("*/*.json")).read_text())
    # a fresh cache (new process) answers from disk with the same predictions, without fitting: the fit
    # function is not called again and the model is the one read back (how fast: benchmarks/bench_models.py)
    fresh = C.FitCache(tmp_path)
    m3, hit3 = fresh.get_or_fit(key, FairLR, fit)
    assert hit3 and len(calls) == 1 and (fresh.hits, fresh.misses) == (1, 0)
    assert m3 is not m1 and isinstance(m3, FairLR)
    np.testing.assert_array_equal(m3.predict_proba(X), m1.predict_proba(X))


def test_fit_cache_fit_helper_and_key_changes(tmp_path):
    X, y, s = _toy()
    cache = C.FitCache(tmp_path)
    a, hit_a = cache.fit(FairLR(target=make_target_spec(target_rate=0.3)), X, y, s)
    b, hit_b = cache.fit(FairLR(target=make_target_spec(target_rate=0.3)), X, y, s)
    c, hit_c = cache.fit(FairLR(target=make_target_spec(target_rate=0.4)), X, y, s)
    d, hit_d = cache.fit(LR(), X, y, s)
    assert (hit_a, hit_b, hit_c, hit_d) == (False, True, False, False)
    assert cache.hits == 1 and cache.misses == 3


def test_fit_cache_memory_only_and_corrupt_entry(tmp_path):
    X, y, s = _toy()
    mem = C.FitCache(False, memory_items=1)
    mem.fit(LR(), X, y, s)
    mem.fit(FairLR(), X, y, s)
    assert len(mem) == 1
    cache = C.FitCache(tmp_path)
    key = C.model_cache_key(LR(), X, y, s)
    cache.get_or_fit(key, LR, lambda m: m.fit(X, y, s))
    for p in tmp_path.glob("*/*.safetensors"):
        p.write_bytes(b"not a safetensors file")
    fresh = C.FitCache(tmp_path)
    _, hit = fresh.get_or_fit(key, LR, lambda m: m.fit(X, y, s))
    assert not hit  # corrupt entry -> refit, never a crash
    with pytest.raises(FairDashError):
        cache.get("../../etc/passwd")


def test_default_cache_dir_env(monkeypatch, tmp_path):
    monkeypatch.setenv(C.CACHE_ENV, str(tmp_path / "c"))
    assert C.FitCache().directory == tmp_path / "c"


def test_array_digest_memoised_only_for_read_only_arrays():
    a = np.random.default_rng(0).normal(size=(200, 5))
    d1 = C.array_digest(a)
    a[0, 0] += 1.0  # writable arrays are re-hashed every time
    assert C.array_digest(a) != d1
    a.setflags(write=False)
    d2 = C.array_digest(a)
    assert C.array_digest(a) == d2 and id(a) in C._DIGESTS
    view = a[:100]
    assert C.array_digest(view) != d2
    b = a.copy()  # same bytes, new (writable) array: same digest
    assert C.array_digest(b) == d2
    assert C.cache_key(a, config={}) == C.cache_key(b, config={})


def test_fit_cache_results_are_computed_once_and_survive_a_restart(tmp_path):
    cache = C.FitCache(tmp_path)
    key = C.cache_key(np.arange(3), config={"what": "test"})
    calls = []

    def compute():
        calls.append(1)
        return {"accuracy": 0.9, "pr_ratio": "nan", "n": 10}

    assert cache.result(key, compute) == ({"accuracy": 0.9, "pr_ratio": "nan", "n": 10}, False)
    assert cache.result(key, compute)[1] is True
    assert C.FitCache(tmp_path).result(key, compute) == ({"accuracy": 0.9, "pr_ratio": "nan", "n": 10}, True)
    assert len(calls) == 1
    # a damaged file is computed again, never an error
    (next(tmp_path.glob("*/*.result.json"))).write_text("{not json")
    assert C.FitCache(tmp_path).result(key, compute)[1] is False and len(calls) == 2
    cache.clear(disk=True)
    assert not list(tmp_path.glob("*/*.result.json"))
    assert C.FitCache(False).result(key, compute)[1] is False  # memory-only cache works too


def test_code_version_follows_every_form_of_relative_import(tmp_path):
    """Issue 14: the import tracer reads every import of the compiled code, so parenthesised and in-function imports
    count."""
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "a.py").write_text("from .b import (\n    one,\n    two,\n)\n\ndef f():\n    from .c import three\n")
    (pkg / "b.py").write_text("one = two = 1\n")
    (pkg / "c.py").write_text("from . import d\nfrom .sub import e\n")
    (pkg / "d.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "e.py").write_text("")
    (pkg / "unused.py").write_text("")
    seen = set()
    C._module_sources((pkg / "a.py").resolve(), pkg.resolve(), seen)
    assert {p.relative_to(pkg.resolve()).as_posix() for p in seen} == {"a.py", "b.py", "c.py", "d.py",
                                                                       "sub/__init__.py", "sub/e.py"}
