"""What every benchmark records with its figures, in one place: the commit, the software versions, the
machine, the load average before and after, the date; and where the record goes.

A benchmark runs from the repository root as a module (``python -m benchmarks.bench_models``, or through
the runner: ``python -m benchmarks models``), so ``fairdash`` and ``benchmarks`` import without any
``sys.path`` edit. Its ``main`` wraps the work in :class:`Recording`::

    with Recording("bench_models", options=vars(args)) as rec:
        ...
        rec.results["lr"] = {"FairLR_s": 1.2}
        rec.markdown = text            # the table it printed / wrote, kept in the record too
        rec.outputs.append(args.out)   # files it wrote (markdown, CSV)

and on leaving, ``benchmarks/results/<name>.json`` holds (json, indent 2)::

    {"benchmark", "status" ("ok" or the exception's one line), "options", "started_utc", "finished_utc",
     "seconds", "commit": {"sha", "dirty"}, "software": {...}, "machine": {...},
     "load_average": {"before": [1, 5, 15 min], "after": [...]}, "results": {...}, "markdown", "outputs"}

``FAIRDASH_BENCH_RESULTS`` (a folder) sends the records elsewhere, e.g. for a smoke run that should not
replace the recorded one. The machine is also given as one line for the markdown (:func:`machine_line`).
"""
from __future__ import annotations

import datetime as dt
import json
import math
import os
import platform
import subprocess
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
CHROMIUM = "/usr/bin/chromium"  # Debian's, as the browser tests use it


# --------------------------------------------------------------------------------------------------
# The facts
# --------------------------------------------------------------------------------------------------
def utc_now() -> str:
    return dt.datetime.now(dt.timezone.utc).replace(microsecond=0).isoformat()


def commit() -> dict:
    """``{"sha", "dirty"}``: ``git rev-parse HEAD`` of the repository and whether tracked files differ
    from it (``None`` for both outside a git checkout)."""
    def git(*args):
        return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, timeout=30)

    try:
        head = git("rev-parse", "HEAD")
        status = git("status", "--porcelain", "--untracked-files=no")
    except (OSError, subprocess.SubprocessError):
        return {"sha": None, "dirty": None}
    if head.returncode != 0:
        return {"sha": None, "dirty": None}
    return {"sha": head.stdout.strip(), "dirty": bool(status.stdout.strip()) if status.returncode == 0 else None}


def software(extra: tuple = ()) -> dict:
    """FairDash's, Python's and the packages' versions (``fairdash._version.software_versions``; an older
    fairdash without it, measured for a before/after, gets the same from the installed metadata)."""
    try:
        from fairdash._version import software_versions
    except ImportError:
        import sys
        from importlib import metadata

        from fairdash._version import __version__

        out = {"fairdash": __version__, "python": ".".join(map(str, sys.version_info[:3]))}
        for pkg in ("numpy", "pandas", "scikit-learn", "scipy", "torch", "gpytorch", "fairlearn", "safetensors",
                    *extra):
            try:
                out[pkg] = metadata.version(pkg)
            except metadata.PackageNotFoundError:
                pass
        return out
    return software_versions(extra=tuple(extra))


def load_average() -> list | None:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except (AttributeError, OSError):
        return None


def cpu_model() -> str:
    """The CPU's model name: ``lscpu``'s "Model name", else /proc/cpuinfo's, else the platform's."""
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, timeout=30).stdout
        for line in out.splitlines():
            if line.strip().startswith("Model name:"):
                return line.split(":", 1)[1].strip()
    except (OSError, subprocess.SubprocessError):
        pass
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "?"


def memory_gib() -> float | None:
    try:
        return round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1)
    except (AttributeError, ValueError, OSError):
        return None


def machine(torch_device: str = "auto") -> dict:
    """CPU model, cores (all, and those this process may use), memory, OS, the GPU torch sees (or
    ``None``), the torch device a fit would use for ``torch_device`` and the torch threads per fit."""
    info = {"cpu": cpu_model(), "cores": os.cpu_count(),
            "cores_usable": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count(),
            "memory_gib": memory_gib(), "os": f"{platform.system()} {platform.release()}",
            "gpu": None, "torch_device": None, "torch_fit_threads": None}
    try:
        import torch

        if torch.cuda.is_available():
            info["gpu"] = torch.cuda.get_device_name(0)
            info["gpu_count"] = torch.cuda.device_count()
        from fairdash.device import fit_threads, resolve_device

        info["torch_device"] = str(resolve_device(torch_device))
        info["torch_fit_threads"] = fit_threads()
    except Exception as e:  # noqa: BLE001 (a machine without torch still gets its record)
        info["torch_device"] = f"? ({type(e).__name__})"
    return info


def chromium_version(path: str = CHROMIUM) -> str | None:
    """``chromium --version`` (the browser benchmarks' browser), or ``None`` where there is none."""
    try:
        return subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30).stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        return None


def machine_line(info: dict | None = None, load: list | None = None) -> str:
    """The machine as one line for a markdown result (and the load average at the start)."""
    m = info or machine()
    parts = [f"{m['cpu']}, {m['cores']} cores"
             + (f" ({m['cores_usable']} usable)" if m.get("cores_usable") not in (None, m["cores"]) else ""),
             f"{m['memory_gib']:g} GiB" if m.get("memory_gib") else None,
             f"GPU {m['gpu']}" if m.get("gpu") else "no GPU",
             f"torch device {m['torch_device']}, {m['torch_fit_threads']} torch thread(s) per fit"
             if m.get("torch_device") else None,
             f"{m['browser']} headless" if m.get("browser") else None]
    load = load if load is not None else load_average()
    if load:
        parts.append("load average " + " / ".join(f"{x:.2f}" for x in load) + " (1/5/15 min) at the start")
    return "; ".join(p for p in parts if p)


def software_line(versions: dict | None = None) -> str:
    """The versions as one line: ``fairdash 0.1.0, python 3.11.7, numpy 2.3.1, ...``."""
    return ", ".join(f"{k} {v}" for k, v in (versions or software()).items())


def timed(fn):
    """``(seconds, fn())`` by ``time.perf_counter``."""
    t = time.perf_counter()
    out = fn()
    return time.perf_counter() - t, out


# --------------------------------------------------------------------------------------------------
# The record
# --------------------------------------------------------------------------------------------------
def results_dir() -> Path:
    return Path(os.environ.get("FAIRDASH_BENCH_RESULTS") or RESULTS)


def dated(name: str) -> Path:
    """Where a benchmark's default file goes: ``<results_dir>/<today, UTC>-<name>``, one file per measurement
    (``benchmarks/README.md`` links the current one of each)."""
    return results_dir() / f"{dt.datetime.now(dt.timezone.utc).date().isoformat()}-{name}"


def _plain(obj):
    """JSON-ready: numpy scalars and arrays as numbers and lists, paths as text, NaN as None."""
    if isinstance(obj, dict):
        return {str(k): _plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple, set)):
        return [_plain(v) for v in obj]
    if isinstance(obj, Path):
        return str(obj)
    if hasattr(obj, "tolist") and not isinstance(obj, (str, bytes)):
        return _plain(obj.tolist())
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if obj is None or isinstance(obj, (str, int, float, bool)):
        return obj
    return str(obj)


class Recording:
    """Context manager: takes the facts at the start, the load average and the time at the end, and
    writes the record (also when the benchmark fails: ``status`` then says how)."""

    def __init__(self, name: str, options: dict | None = None, *, torch_device: str = "auto",
                 extra_software: tuple = (), browser: bool = False):
        self.name = name
        self.options = dict(options or {})
        self.results: dict = {}
        self.markdown: str | None = None
        self.outputs: list = []
        self.path = results_dir() / f"{name}.json"
        self._torch_device = torch_device
        self._extra = tuple(extra_software)
        self._browser = browser

    def __enter__(self) -> "Recording":
        self.started = utc_now()
        self.load_before = load_average()
        self.commit = commit()
        self.software = software(self._extra)
        self.machine = machine(self._torch_device)
        if self._browser:
            self.machine["browser"] = chromium_version()
        self._t0 = time.perf_counter()
        return self

    def machine_line(self) -> str:
        """The machine, the load average at the start and the versions, as one line for the markdown."""
        return f"{machine_line(self.machine, self.load_before)}; {software_line(self.software)}"

    def record(self, status: str = "ok") -> dict:
        return _plain({
            "benchmark": self.name, "status": status, "options": self.options,
            "started_utc": self.started, "finished_utc": utc_now(),
            "seconds": round(time.perf_counter() - self._t0, 3),
            "commit": self.commit, "software": self.software, "machine": self.machine,
            "load_average": {"before": self.load_before, "after": load_average()},
            "results": self.results, "markdown": self.markdown, "outputs": self.outputs,
        })

    def __exit__(self, exc_type, exc, tb) -> bool:
        status = "ok" if exc_type is None else f"failed: {exc_type.__name__}: {str(exc).strip()[:300]}"
        if exc_type is KeyboardInterrupt:
            status = "interrupted"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.write_text(json.dumps(self.record(status), indent=2) + "\n")
        print(f"[benchmarks] record: {self.path}", flush=True)
        return False
