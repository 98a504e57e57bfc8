"""SparkTaskRunner: a dead Python worker is retriable; a dead driver JVM fails at once with one line."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from connector.api.errors import ConnectException, RetriableException
from connector.commit.messages import TaskAssignment
from connector.spark.runner import SparkTaskRunner


class _Context:
    def __init__(self, error: Exception, exit_code: int | None):
        self.error = error
        self._gateway = SimpleNamespace(proc=SimpleNamespace(poll=lambda: exit_code))

    def setJobGroup(self, group, text):  # noqa: N802 - PySpark's name
        pass

    def parallelize(self, items, slices):
        raise self.error


def _run(error: Exception, exit_code: int | None = None):
    runner = SparkTaskRunner(SimpleNamespace(sparkContext=_Context(error, exit_code)))
    config = SimpleNamespace(icefloe=SimpleNamespace(driver_max_records=0))  # on Spark, never in the driver
    return runner([TaskAssignment("sink-1-1-0", (), config)])  # type: ignore[arg-type]


def test_a_python_worker_that_died_makes_the_cycle_retriable():
    with pytest.raises(RetriableException, match="Python worker died during the tasks of sink-1-1-0"):
        _run(RuntimeError("... org.apache.spark.SparkException: Python worker exited unexpectedly (crashed) ..."))


def test_a_dead_driver_jvm_fails_with_one_line_instead_of_being_retried():
    with pytest.raises(ConnectException, match=r"The Spark driver JVM exited \(exit code -9\)") as failure:
        _run(ConnectionRefusedError(111, "Connection refused"), exit_code=-9)
    assert not isinstance(failure.value, RetriableException)


def test_a_connection_error_while_the_jvm_runs_is_left_as_it_is():
    with pytest.raises(ConnectionRefusedError):
        _run(ConnectionRefusedError(111, "Connection refused"), exit_code=None)
