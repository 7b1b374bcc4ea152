"""The package version and the versions of what it runs on (a leaf: any module, the benchmarks too, can
read them without importing the package), and how close two machines' numbers are.

``SAME_NUMBERS_BOUND``: with the same versions, two machines (any CPU: another vector width, another BLAS
kernel) or two row orders of the same table give every probability of FairLR, LR, WeightedLR (so Kamiran &
Calders' and the reductions' inner fits), GP and FairGP within this of each other, since their fits run to
where the answer no longer depends on the order of the sums (``models.core.solver.solve_logistic``,
``device.training_dtype``). A decision can then differ only for a row whose probability lies within the
bound of its cut. Measured: benchmarks/results/2026-11-28-convergence.md. (A GPU's numbers are not bound to the
CPU's: measured on an H200, FairGP up to 0.154 away in float32 and 0.030 in float64, which such a GPU now trains
in: README, "The same numbers on another machine".)"""
from __future__ import annotations

__version__ = "0.1.0"

PACKAGES = ("numpy", "pandas", "scikit-learn", "scipy", "torch", "gpytorch", "fairlearn", "safetensors")

SAME_NUMBERS_BOUND = 1e-6


def processor() -> str:
    """The processor in words: vendor and model where the system says them (Linux's ``/proc/cpuinfo``),
    else what ``platform`` knows, with the architecture, e.g. ``"AMD EPYC 7B13 (x86_64)"``."""
    import platform

    name = ""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            name = next((line.split(":", 1)[1].strip() for line in f if line.lower().startswith("model name")), "")
    except OSError:
        pass
    return f"{name or platform.processor() or 'unknown processor'} ({platform.machine() or 'unknown architecture'})"


def software_versions(extra: tuple = ()) -> dict:
    """FairDash's, Python's and the installed versions of the packages its numbers depend on
    (``PACKAGES`` and ``extra``), and the processor they ran on (``processor``), for model files,
    reports, run records and benchmark records."""
    import sys
    from importlib import metadata

    out = {"fairdash": __version__, "python": ".".join(map(str, sys.version_info[:3]))}
    for pkg in (*PACKAGES, *extra):
        try:
            out[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            pass
    out["processor"] = processor()
    return out
