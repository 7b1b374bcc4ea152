"""Processes in the tests: whether one still runs (a zombie does not), and how long a test waits for one to end."""
import os

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
