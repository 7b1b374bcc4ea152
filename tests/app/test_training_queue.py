"""Issue 48, item 3: the training queue (``fairdash.app.training.queue``) is plain Python, without Streamlit, and
configured rather than steered by module globals: each registry is made with its own frozen ``QueueSettings``, two
registries share nothing, and the server process's one is read from the environment in one place."""
from __future__ import annotations

import dataclasses
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from fairdash.app.training import queue
from fairdash.app.training.queue import JobRegistry, QueueSettings, TrainingJob

from processes import WAIT_S, held_work, wait_for

ROOT = Path(__file__).resolve().parents[2]


def test_the_queue_imports_and_runs_a_training_without_streamlit():
    """In a process where ``import streamlit`` fails, the queue and the worker module import and a job runs its
    turn to the end; the Streamlit side (``fairdash.app.server.jobs``) does not import there, which shows that the
    process really has no Streamlit."""
    script = (
        "import sys\n"
        "sys.modules['streamlit'] = None  # import streamlit raises ImportError from here on\n"
        "from fairdash.app.training import queue, worker\n"
        "reg = queue.JobRegistry(queue.QueueSettings(max_running=1))\n"
        "job = reg.start('t', queue.TrainingJob(lambda progress: progress(1.0, 'done') or 'a run', 'plain'))\n"
        "job.thread.join(60)\n"
        "try:\n"
        "    import fairdash.app.server.jobs\n"
        "    ui = 'imported'\n"
        "except ImportError:\n"
        "    ui = 'refused'\n"
        "loaded = [m for m in sys.modules if m.startswith('streamlit.')]\n"
        "print(job.state, job.result, reg.take_finished('t') is job, ui, len(loaded))\n")
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=WAIT_S)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["done", "a", "run", "True", "refused", "0"], done.stdout


def test_two_registries_with_different_settings_share_nothing():
    one = JobRegistry(QueueSettings(max_running=1, keep_s=0.0))
    two = JobRegistry(QueueSettings(max_running=2))
    gate = threading.Event()
    started = {name: [] for name in ("1a", "1b", "2a", "2b")}
    a1 = one.start("a", TrainingJob(held_work(gate, started["1a"]), "one's a"))
    wait_for(lambda: started["1a"], "one's first job did not start")
    b1 = one.start("b", TrainingJob(held_work(gate, started["1b"]), "one's b"))
    a2 = two.start("a", TrainingJob(held_work(gate, started["2a"]), "two's a"))  # the same tokens, its own jobs
    b2 = two.start("b", TrainingJob(held_work(gate, started["2b"]), "two's b"))
    wait_for(lambda: one.place(b1) and started["2a"] and started["2b"], "the jobs did not take their turns")
    # one place in the first, so its second job waits; two in the second, so both of its jobs run
    assert (one.running_count, one.place(b1), not started["1b"]) == (1, (1, 1), True)
    assert (two.running_count, two.place(a2), two.place(b2)) == (2, None, None)
    assert one.get("a") is a1 and two.get("a") is a2 and a1.settings is one.settings and a2.settings is two.settings
    assert one.forget("b") is True  # forgetting a session in one leaves the other's job of that token alone
    assert two.get("b") is b2 and b2.running
    b1.thread.join(WAIT_S)
    assert b1.state == "cancelled" and not started["1b"]
    gate.set()
    for job in (a1, a2, b2):
        job.thread.join(WAIT_S)
    assert [j.state for j in (a1, a2, b2)] == ["done"] * 3 and one.running_count == two.running_count == 0
    # each keeps an uncollected finished job as long as its own settings say: the first drops it at its next start
    one.start("c", TrainingJob(lambda progress: None, "one's c"))
    two.start("c", TrainingJob(lambda progress: None, "two's c"))
    assert one.get("a") is None and two.take_finished("a") is a2
    with pytest.raises(dataclasses.FrozenInstanceError):
        one.settings.max_running = 2  # a registry's settings are fixed when it is made


def test_the_servers_registry_is_read_from_the_environment_once_and_configure_replaces_it(monkeypatch,
                                                                                        training_queue):
    monkeypatch.setenv("FAIRDASH_MAX_TRAININGS", "3")
    monkeypatch.setenv("FAIRDASH_CLOSED_TAB_GRACE_S", "42")
    monkeypatch.setenv("FAIRDASH_TRAINING_NICE", "4")
    made = training_queue()  # tests/conftest.py: the environment's settings, the script run waiting for its job
    assert made is queue.registry() is queue.registry()
    assert made.settings == QueueSettings(max_running=3, closed_tab_grace_s=42.0, training_nice=4, wait_in_script=True)
    assert queue.configure(None) is None  # the server's: made from the environment at its first use
    server = queue.registry()
    assert server is not made and server is queue.registry() and server.settings == QueueSettings.from_env()
    assert not server.settings.wait_in_script and server.settings.in_worker_process
    own = QueueSettings(max_running=5)
    assert queue.configure(own).settings is own and queue.registry().settings is own


def test_a_training_is_started_with_its_registrys_settings(monkeypatch):
    """``JobRegistry.train`` gives the job its registry's grace period and CPU priority; without a worker process
    (``in_worker_process=False``) the training runs in the job's thread, here a stand-in for ``runs.train_run``."""
    import fairdash.work.runs as runs

    monkeypatch.setattr(runs, "train_run", lambda task, spec, *, progress, **kw: ("a run of", task, spec, kw))
    reg = JobRegistry(QueueSettings(closed_tab_grace_s=7.0, training_nice=3, in_worker_process=False))
    job = reg.train("tok", "the task", "the spec", title="a training", data_name="d")
    job.thread.join(WAIT_S)
    assert job.state == "done" and job.result == ("a run of", "the task", "the spec", {"data_name": "d"})
    assert (job.grace_s, job.nice, job.worker, job.session, job.title) == (7.0, 3, None, "tok", "a training")
    assert reg.take_finished("tok") is job
