"""Where a run's fits go: this machine's processes (joblib), or a Dask cluster named by an address, checked
before any job is sent (workers joined, the job importable on each, the same FairDash version)."""
from __future__ import annotations

import os
import threading
import time
from contextlib import nullcontext

from .. import _version
from ..errors import FairDashError
from ..settings import env_number


def parallel_config(dask_address, job):
    """``(context, client)``: joblib's Dask backend and its client where an address is given (the argument or
    FAIRDASH_DASK_ADDRESS), else a context that changes nothing and ``None``; a FairDashError, before any job is
    sent, where the cluster cannot run ``job`` (the module-level function the run sends: each worker must import it,
    with FairDash's own version)."""
    import joblib  # lazy: only a run that goes parallel needs it

    address = dask_address or os.environ.get("FAIRDASH_DASK_ADDRESS")
    if not address:
        return nullcontext(), None
    try:
        from dask.distributed import Client
    except ImportError:
        raise FairDashError("A Dask address was given but dask.distributed is not installed "
                            "(pip install 'dask[distributed]').") from None
    timeout = env_number("FAIRDASH_DASK_TIMEOUT", 20.0, minimum=0.1)
    try:
        client = Client(address, timeout=timeout)
    except (OSError, TimeoutError, ValueError) as e:  # refused, unreachable, malformed address
        reason = _first_line(e) or type(e).__name__
        raise FairDashError(f"Could not reach the Dask scheduler at {address!r} within {timeout:g} s ({reason}). "
                            "Check the address (for example tcp://host:8786) and that the scheduler is running, or "
                            "leave the address out to run on this machine.") from None
    try:
        _check_workers(client, address, job, deadline=time.monotonic() + timeout, timeout=timeout)
    except BaseException:
        client.close()
        raise
    return joblib.parallel_config(backend="dask"), client


def _first_line(e: BaseException) -> str:
    return (str(e).strip().splitlines() or [""])[0][:160]


def _check_workers(client, address: str, job, *, deadline: float, timeout: float) -> None:
    """A FairDashError, before any job is sent, when the cluster cannot run ``job``: no worker joined
    the scheduler by the deadline, or a worker cannot import the job (FairDash and its requirements) or runs
    another version of FairDash. The probe is given the job's module and name as text, so a worker without
    FairDash reads its arguments and says so (a function sent by reference would fail before the probe ran)."""
    try:
        client.wait_for_workers(n_workers=1, timeout=max(0.5, deadline - time.monotonic()))
    except (TimeoutError, OSError):  # distributed's WorkerStartTimeoutError is a TimeoutError
        raise FairDashError(f"The Dask scheduler at {address!r} has no workers (none joined within {timeout:g} s). "
                            "Start workers for it (dask worker ADDRESS on each machine, with FairDash installed), "
                            "or leave the address out to run on this machine.") from None

    def probe(module: str, name: str):  # defined here, so it is pickled by value: a worker without FairDash runs it
        import importlib

        found = importlib.import_module(module)  # what the jobs need: FairDash and its requirements
        for part in name.split("."):
            found = getattr(found, part)
        return importlib.import_module("fairdash._version").__version__

    answers: dict = {}

    def ask():
        try:
            answers.update(client.run(probe, job.__module__, job.__qualname__, on_error="return"))
        except Exception as e:  # the cluster's own failure, reported below
            answers[None] = e

    asking = threading.Thread(target=ask, name="fairdash-dask-probe", daemon=True)
    asking.start()
    asking.join(max(0.5, deadline - time.monotonic()))
    if asking.is_alive() or not answers:
        raise FairDashError(f"The Dask workers at {address!r} did not answer within {timeout:g} s whether they can "
                            "run FairDash. Check that they are running and not busy, or raise FAIRDASH_DASK_TIMEOUT.")
    failed = {w: a for w, a in answers.items() if isinstance(a, BaseException)}
    if failed:
        e = next(iter(failed.values()))
        some = "" if len(failed) == len(answers) else f"{len(failed)} of the {len(answers)} "
        raise FairDashError(f"{some or 'The '}Dask workers at {address!r} cannot import fairdash "
                            f"({type(e).__name__}: {_first_line(e)}): install FairDash (pip install -e . or the same "
                            "requirements) on every worker.")
    other = sorted({str(v) for v in answers.values()} - {_version.__version__})
    if other:
        raise FairDashError(f"The Dask workers at {address!r} run FairDash {', '.join(other)}, this machine "
                            f"{_version.__version__}: install the same FairDash version on every worker.")
