"""A training runs in a worker process of its own (fairdash.app.training.worker), so that the server's pages never
wait for it (issue 25: a slider's readout with six trainings on the server). These run real worker
processes; the functions they run are this module's, imported by the worker by name."""
from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from fairdash.app.server.limits import process_rss_bytes, server_rss_bytes
from fairdash.app.training import worker
from fairdash.errors import FairDashError

from processes import WAIT_S, alive

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]


def _where(*, progress, tag):
    progress(0.5, f"half of {tag}")
    return {"pid": os.getpid(), "nice": os.getpriority(os.PRIO_PROCESS, 0), "tag": tag,
            "env": os.environ.get("FAIRDASH_TEST_WORKER_ENV")}


def _fails(*, progress):
    progress(0.1, "starting")
    raise FairDashError("The optimiser gave up.")


def _forever(*, progress, pid_file):
    with open(pid_file, "w") as f:
        f.write(str(os.getpid()))
    while True:
        progress(0.2, "working")
        time.sleep(0.05)


def _dies(*, progress):
    progress(0.1, "about to die")
    os.kill(os.getpid(), signal.SIGKILL)


def _holds_memory(*, progress, mib, flag_file):
    block = np.ones(mib * 2**20 // 8)  # touched: resident
    with open(flag_file, "w") as f:
        f.write("held")
    while True:
        progress(float(block[0]) * 0.5, "holding")
        time.sleep(0.05)


def test_the_work_runs_in_another_process_at_a_lower_priority_with_the_servers_settings(monkeypatch):
    monkeypatch.setenv("FAIRDASH_TEST_WORKER_ENV", "set after the fork server started")
    seen = []
    out = worker.ProcessWork(_where, tag="first", nice=5)(lambda f, m: seen.append((f, m)))
    assert out["pid"] != os.getpid() and out["tag"] == "first"
    assert out["nice"] == os.getpriority(os.PRIO_PROCESS, 0) + 5  # (the fork server is at the caller's)
    assert ("half of first" in [m for _, m in seen]) and (0.5, "half of first") in seen
    assert out["env"] == "set after the fork server started"
    again = worker.ProcessWork(_where, tag="second")(lambda f, m: None)
    assert again["pid"] != out["pid"]  # one process per training: nothing of one stays in the next


def test_an_error_in_the_worker_is_raised_again_with_its_words():
    with pytest.raises(FairDashError, match="The optimiser gave up."):
        worker.ProcessWork(_fails)(lambda f, m: None)


def test_a_cancel_ends_the_worker_process(tmp_path):
    class Cancelled(Exception):
        pass

    pid_file = tmp_path / "pid"
    calls = []

    def progress(f, m):
        calls.append(m)
        if pid_file.exists() and pid_file.read_text() and len(calls) > 3:
            raise Cancelled

    with pytest.raises(Cancelled):
        worker.ProcessWork(_forever, pid_file=str(pid_file))(progress)
    pid = int(pid_file.read_text())
    deadline = time.monotonic() + WAIT_S
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not alive(pid)


def test_a_worker_that_dies_is_a_plain_error():
    with pytest.raises(FairDashError, match="ended without a result.*killed"):
        worker.ProcessWork(_dies)(lambda f, m: None)


@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="reads /proc (Linux)")
def test_the_memory_guard_counts_the_workers(tmp_path):
    class Enough(Exception):
        pass

    flag = tmp_path / "flag"
    measured = {}

    def progress(f, m):
        if flag.exists():
            measured["tree"], measured["own"] = server_rss_bytes(), process_rss_bytes()
            raise Enough

    with pytest.raises(Enough):
        worker.ProcessWork(_holds_memory, mib=300, flag_file=str(flag))(progress)
    assert measured["tree"] - measured["own"] >= 250 * 2**20, measured


def test_a_real_training_comes_back_with_its_task_and_its_fits_join_the_sessions_cache():
    from fairdash.data import TaskSpec, build_task
    from fairdash.files.run_spec import RunSpec
    from fairdash.targeting.target_spec import make_target_spec
    from fairdash.work.fit_cache import FitCache
    from fairdash.work.runs import train_run

    rng = np.random.default_rng(0)
    n = 400
    table = pd.DataFrame({"s": rng.integers(0, 2, n), "x1": rng.normal(size=n), "x2": rng.normal(size=n)})
    table["y"] = ((table["x1"] + 0.5 * table["s"] + rng.normal(scale=0.5, size=n)) > 0.3).astype(int)
    task = build_task(table, TaskSpec(s_column="s", y_column="y", s1_values=("1",), y1_values=("1",)))
    spec = RunSpec(data="test", task=task.spec, target=make_target_spec(target_rate=0.4), models=("fair-lr", "lr"),
                   seeds=(0,))
    cache = FitCache(directory=False)  # an upload's: the session's memory only
    run = worker.attach_task(worker.ProcessWork(worker.train_run_detached, task, spec, data_name="t", cache=cache)(
        lambda f, m: None), task)
    assert run.task is task and len(cache) == 2 and cache.misses == 2
    here = train_run(task, spec, data_name="t", cache=FitCache(directory=False))
    cols = ["model", "accuracy", "pr_0", "pr_1"]
    pd.testing.assert_frame_equal(run.results[cols], here.results[cols])  # the same numbers as in this process
    again = worker.attach_task(worker.ProcessWork(worker.train_run_detached, task, spec, data_name="t", cache=cache)(
        lambda f, m: None), task)
    assert again.results["cached"].all() and cache.hits == 2


def test_a_worker_never_runs_the_dashboards_script_again(tmp_path, monkeypatch):
    """Under ``streamlit run`` the script run's module is ``__main__``, known only by its file (app.py);
    multiprocessing would run that file again in every worker. The worker starts without running it."""
    import sys
    import types

    marker = tmp_path / "ran"
    script = tmp_path / "app_like.py"
    script.write_text(f"open({str(marker)!r}, 'w').write('the script ran in the worker')\n")
    fake = types.ModuleType("__main__")
    fake.__file__ = str(script)  # as Streamlit's script runner makes it: a file, no spec
    monkeypatch.setitem(sys.modules, "__main__", fake)
    out = worker.ProcessWork(_where, tag="no script")(lambda f, m: None)
    assert out["tag"] == "no script" and out["pid"] != os.getpid()
    assert not marker.exists()


def test_a_worker_started_by_a_lowered_thread_is_lowered_once(tmp_path):
    """A training's thread may be lowered already when it starts the fork server (it was, in the server): the
    fork server then runs lowered, and a worker forked from it must end at the server's niceness + ``nice``,
    not lowered again (it ran at 19). In a fresh process, so that its fork server is started by that thread."""
    import subprocess
    import sys

    script = (
        "import os, sys, threading\n"
        f"sys.path[:0] = [{str(ROOT)!r}, {str(Path(__file__).parent)!r}, {str(ROOT / 'tests')!r}]\n"
        "from fairdash.app.training import worker\n"
        "from fairdash.app.server.limits import lower_thread_priority\n"
        "import test_worker_process as t\n"
        "out = {}\n"
        "def run():\n"
        "    lower_thread_priority(10)\n"
        "    out['r'] = worker.ProcessWork(t._where, tag='x', nice=10)(lambda f, m: None)\n"
        "th = threading.Thread(target=run); th.start(); th.join()\n"
        "print(os.getpriority(os.PRIO_PROCESS, os.getpid()), out['r']['nice'])\n")
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=WAIT_S, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    base, nice = map(int, proc.stdout.split())
    assert nice == min(19, base + 10), (base, nice)
