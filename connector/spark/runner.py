"""Running task assignments as Spark partitions.

Each assignment becomes one partition of an RDD whose map function is
:func:`connector.channel.worker.run_task`; only the small commit messages come back to
the driver (the data goes straight from the executors to Parquet files). This
is the fastest of the Spark paths measured for icefloe (one Python step per
task, no rows crossing the Python/JVM boundary).
"""

from __future__ import annotations

import logging
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any, Sequence

from connector.api.errors import ConnectException, RetriableException
from connector.channel.messages import TaskAssignment, TaskResult
from connector.channel.worker import run_task, run_task_isolated
from connector.spark.on_demand import OnDemandSession

log = logging.getLogger(__name__)

#: Spark's text when an executor's Python worker process died (killed, out of memory, a crash)
WORKER_CRASHED = "Python worker exited unexpectedly"


def runs_in_driver(assignments: Sequence[TaskAssignment]) -> bool:
    """Whether a round of tasks is small enough to run in the driver (``icefloe.driver.max-records``).

    Starting a Spark job costs more than reading a few thousand records, and the
    first one waits for the session to start: a small cycle is done sooner here.
    """
    return fits_in_driver(sum(r.count for a in assignments for r in a.ranges),
                          assignments[0].config.icefloe.driver_max_records)


def fits_in_driver(records: int, limit: int) -> bool:
    """Whether tasks over ``records`` offsets run in the driver, given ``icefloe.driver.max-records``."""
    return limit > 0 and records <= limit


class SparkTaskRunner:
    """Runs assignments on a Spark cluster (or ``local[*]``), one Spark partition each.

    Takes a SparkSession, a Future of one that is still starting, or an
    :class:`~connector.spark.on_demand.OnDemandSession` that starts one only when a
    cycle too large for the driver is coming (:meth:`expect_cycle`): the job
    prepares its first cycle meanwhile, and waits for the session only to run tasks.
    With ``isolate_failures`` (the REST worker) a task that raises comes back as a
    failed :class:`TaskResult` instead of failing the Spark job of its siblings.
    A round small enough (:func:`runs_in_driver`) runs in the driver process instead.
    """

    def __init__(self, spark: Any, *, isolate_failures: bool = False):
        self._spark = spark
        self.isolate_failures = isolate_failures
        self.driver_rounds = 0  # rounds of tasks run in the driver (small cycles, runs_in_driver)

    @property
    def spark(self) -> Any:
        if isinstance(self._spark, OnDemandSession):
            return self._spark.start().result()
        return self._spark.result() if isinstance(self._spark, Future) else self._spark

    def session_ready(self, timeout: float) -> bool:
        """Whether the session is up, waiting at most ``timeout`` seconds; raises if it failed to start."""
        starting = self._spark.start() if isinstance(self._spark, OnDemandSession) else self._spark
        if isinstance(starting, Future):
            try:
                starting.result(timeout=timeout)
            except FutureTimeout:
                return False
        return True

    def expect_cycle(self, records: int, driver_limit: int) -> None:
        """A cycle over ``records`` offsets is about to be planned: one too large for the driver
        starts an on-demand session now, in the background, so it comes up while the driver
        probes the first records and creates tables."""
        if isinstance(self._spark, OnDemandSession) and not self._spark.started \
                and not fits_in_driver(records, driver_limit):
            log.info("Starting Spark: the cycle covers %d offsets, more than icefloe.driver.max-records (%d)",
                     records, driver_limit)
            self._spark.start()

    @property
    def default_parallelism(self) -> int:
        return self.spark.sparkContext.defaultParallelism

    def __call__(self, assignments: Sequence[TaskAssignment]) -> list[TaskResult]:
        if not assignments:
            return []
        task = run_task_isolated if self.isolate_failures else run_task
        if runs_in_driver(assignments):
            self.driver_rounds += 1
            return [task(assignment) for assignment in assignments]
        context = self.spark.sparkContext
        try:
            context.setJobDescription(f"icefloe tasks {assignments[0].task_id}..")
            return context.parallelize(list(assignments), len(assignments)).map(task).collect()
        except Exception as exc:
            exit_code = _jvm_exit_code(context) if isinstance(exc, ConnectionError) else None
            if exit_code is not None:  # not transient: retrying a dead gateway only delays the failure
                raise ConnectException(f"The Spark driver JVM exited (exit code {exit_code}); restart the job: "
                                       f"it resumes from the tables' offsets") from exc
            if WORKER_CRASHED not in str(exc):
                raise
            # nothing of the cycle is visible before its commit: the job may run it again (connector.channel.retry)
            raise RetriableException(f"A Spark executor's Python worker died during the tasks of "
                                     f"{assignments[0].task_id}.. ({WORKER_CRASHED})") from exc


def _jvm_exit_code(context: Any) -> int | None:
    """The exit code of the driver JVM this process launched, None while it runs (or if not ours)."""
    process = getattr(getattr(context, "_gateway", None), "proc", None)
    try:
        return process.poll() if process is not None else None
    except Exception:  # noqa: BLE001 - only a hint for the error message
        return None
