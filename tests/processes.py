"""Processes and trainings in the tests: whether one still runs (a zombie does not), how long a test waits for one to
end, a wait on a condition, and a training's work that holds until a gate opens."""
import os
import threading
import time

WAIT_S = 120  # generous: the machine may be busy; no assertion is about time


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie (ended, not yet reaped by its parent, the fork server) is not running
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def wait_for(cond, what: str, timeout: float = WAIT_S) -> None:
    """Poll ``cond()`` until it is true; fail with ``what`` after ``timeout`` seconds."""
    end = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < end, what
        time.sleep(0.02)


def held_work(gate: threading.Event, started: list):
    """A training's work for the queue's tests: notes when it starts, reports progress while ``gate`` is shut, and
    returns ``"a run"`` once it opens."""
    def work(progress):
        started.append(time.monotonic())
        while not gate.wait(0.05):
            progress(0.5, "held")  # a training that reports progress while it works
        return "a run"
    return work
