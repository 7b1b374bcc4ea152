"""The package version and the versions of what it runs on (a leaf: any module, the benchmarks too, can
read them without importing the package)."""
from __future__ import annotations

__version__ = "0.1.0"

PACKAGES = ("numpy", "pandas", "scikit-learn", "scipy", "torch", "gpytorch", "fairlearn", "safetensors")


def software_versions(extra: tuple = ()) -> dict:
    """FairDash's, Python's and the installed versions of the packages its numbers depend on
    (``PACKAGES`` and ``extra``), for model files, reports and benchmark records."""
    import sys
    from importlib import metadata

    out = {"fairdash": __version__, "python": ".".join(map(str, sys.version_info[:3]))}
    for pkg in (*PACKAGES, *extra):
        try:
            out[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            pass
    return out
