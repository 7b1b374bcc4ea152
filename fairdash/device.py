"""The one place that decides where torch computes: the device, the CPU thread budget of a fit and
the private random generators a fit draws from.

- ``resolve_device(device="auto")``: CUDA when available, else CPU; ``FAIRDASH_DEVICE`` overrides
  ``"auto"`` (e.g. ``FAIRDASH_DEVICE=cpu`` in tests).
- ``fit_threads()`` / ``torch_threads``: torch's CPU threads while a model fits (``FAIRDASH_THREADS``).
- ``seed_everything(seed)``: Python's ``random``, numpy and torch (CPU and CUDA), for scripts; the models
  never call it (each fit seeds its own generators).
"""
from __future__ import annotations

import os
import random
from pathlib import Path

import numpy as np

from .errors import FairDashError
from .settings import env_number

DEVICE_ENV = "FAIRDASH_DEVICE"
THREADS_ENV = "FAIRDASH_THREADS"


def resolve_device(device="auto"):
    """The torch device to use. ``"auto"`` (or ``None``) means the ``FAIRDASH_DEVICE`` environment
    variable if set, else CUDA when available, else the CPU. ``"cpu"``, ``"cuda"``, ``"cuda:1"`` and
    ``torch.device`` objects are accepted; asking for CUDA without a GPU is a ``FairDashError``."""
    import torch

    if isinstance(device, torch.device):
        name = str(device)
    else:
        name = "auto" if device is None else str(device).strip().lower()
    if name == "auto":
        name = os.environ.get(DEVICE_ENV, "auto").strip().lower() or "auto"
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name == "gpu":
        name = "cuda"
    if name == "cpu":
        return torch.device("cpu")
    if name.startswith("cuda"):
        if not torch.cuda.is_available():
            raise FairDashError(
                "A CUDA GPU was requested, but none is available on this machine. Use device 'cpu' or 'auto'."
            )
        dev = torch.device(name)
        if dev.index is not None and dev.index >= torch.cuda.device_count():
            raise FairDashError(
                f"GPU {dev.index} was requested, but this machine has {torch.cuda.device_count()} GPU(s)."
            )
        return dev
    raise FairDashError(f"Unknown device {device!r}: use 'auto', 'cpu' or 'cuda'.")


# NVIDIA compute capabilities whose float64 runs at half the float32 rate (P100, V100, A100, H100/H200, B200);
# the others (the GeForce and RTX cards, the workstation and edge chips) run it at 1/32 or 1/64
FAST_FLOAT64 = frozenset({(6, 0), (7, 0), (8, 0), (9, 0), (10, 0)})


def float64_is_fast(capability) -> bool:
    """Whether a GPU of this compute capability ``(major, minor)`` runs float64 at half its float32 rate or better."""
    return tuple(int(v) for v in capability) in FAST_FLOAT64


def training_dtype(dev):
    """The floating-point type a stochastic fit (GP, FairGP) trains in on the torch device ``dev``:
    float64 on the CPU and on a GPU whose float64 is fast (:data:`FAST_FLOAT64`), float32 on other GPUs. In float32
    the rounding of another CPU's vector width, grown over the epochs and the ELBO's stopping test, moved FairGP's
    probabilities on COMPAS by up to 1e-2; in float64 by about 1e-10, for about twice the fit time on a CPU
    (benchmarks/results/2026-11-28-convergence.md). On an NVIDIA H200 (issue 48) FairGP trained in float64 in 0.88 s
    (float32: 1.01 s) and came to 0.030 of the CPU's probabilities (float32: 0.154; README, "The same numbers on
    another machine"): where float64 is fast it costs nothing and brings the GPU's numbers close to the CPU's. Where it
    runs at 1/32 of float32 a GPU keeps float32."""
    import torch

    if dev.type != "cuda":
        return torch.float64
    if not torch.cuda.is_available():  # (asked about a GPU this machine does not have)
        return torch.float32
    return torch.float64 if float64_is_fast(torch.cuda.get_device_capability(dev)) else torch.float32


def device_description(device="auto") -> str:
    """``"CPU"`` or the GPU's name, for the UI and the results table."""
    import torch

    dev = resolve_device(device)
    if dev.type == "cuda":
        return torch.cuda.get_device_name(dev)
    return "CPU"


def device_hint() -> str | None:
    """:func:`device_description` if torch is already loaded; else ``"CPU"`` where no GPU can be
    present (``FAIRDASH_DEVICE=cpu``, or no NVIDIA device node), and ``None`` where only loading torch
    can tell. Lets a first page show the device without paying for torch's import (about 2 s)."""
    import sys

    if "torch" in sys.modules:
        return device_description()
    if os.environ.get(DEVICE_ENV, "auto").strip().lower() == "cpu" or not Path("/dev/nvidia0").exists():
        return "CPU"
    return None


def seed_everything(seed: int | None) -> None:
    """Seed Python's ``random``, numpy's global generator and torch (CPU and all GPUs)."""
    if seed is None:
        return
    import torch

    seed = int(seed)
    random.seed(seed)
    np.random.seed(seed % (2**32))
    torch.manual_seed(seed)
    if torch.cuda.is_available():
        torch.cuda.manual_seed_all(seed)


def fit_threads() -> int:
    """Torch CPU threads for one fit: ``FAIRDASH_THREADS`` if set, else 1.

    One thread is the default because fits usually run side by side (a sweep's joblib workers, the
    dashboard beside other work), and on a busy machine torch's multi-threaded kernels slow down
    four- to six-fold (measured on 2 cores: FairLR on Adult 4.8 s with 1 thread, 28 s with 2, under
    load). Set ``FAIRDASH_THREADS`` to use more on an idle machine.
    """
    return env_number(THREADS_ENV, 1, minimum=1, whole=True)


class torch_threads:
    """Context manager: run torch on ``n`` CPU threads (default ``fit_threads()``), then restore."""

    def __init__(self, n: int | None = None):
        self.n = n

    def __enter__(self):
        import torch

        self._old = torch.get_num_threads()
        torch.set_num_threads(self.n or fit_threads())
        return self

    def __exit__(self, *exc):
        import torch

        torch.set_num_threads(self._old)
        return False


def torch_generator(seed: int | None, device=None):
    """A private ``torch.Generator`` for shuffling minibatches (CPU generator; indices are moved)."""
    import torch

    g = torch.Generator()
    g.manual_seed(0 if seed is None else int(seed))
    return g
