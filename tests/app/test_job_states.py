"""Issue 48, item 3: a training's state is an enum and why it failed a named record (not strings and ("", ""))."""
from __future__ import annotations

from fairdash.app.server import state
from fairdash.app.training import queue
from fairdash.app.training.queue import Failure, JobState, TrainingJob, failure_reason


def test_a_jobs_state_is_an_enum_equal_to_its_old_word():
    assert [s.value for s in JobState] == ["running", "done", "failed", "cancelled"]
    assert JobState.DONE == "done" and f"{JobState.CANCELLED}" == "cancelled"
    job = TrainingJob(lambda progress: None, "t")
    assert job.state is JobState.RUNNING and job.running and job.why_failed == Failure() == ("", "")
    assert set(queue.END_EVENTS) == set(JobState) - {JobState.RUNNING}  # every end is logged under its own event
    assert state.JobNote(JobState.DONE, "x").kind is JobState.DONE


def test_why_a_training_failed_is_a_named_record():
    class Refused(Exception):
        reason = "memory_guard"

    refused, oom, other = failure_reason(Refused()), failure_reason(MemoryError()), failure_reason(KeyError("k"))
    assert (refused.reason, refused.outcome) == ("memory_guard", "refused")
    assert oom == Failure("out_of_memory", "error") and other == Failure("keyerror", "error")
    assert refused.logged() == {"reason": "memory_guard", "outcome": "refused"}  # the event log's fields
