"""Running task assignments as Spark partitions.

Each assignment becomes one partition of an RDD whose map function is
:func:`connector.task.run_task`; only the small commit messages come back to
the driver (the data goes straight from the executors to Parquet files). This
is the fastest of the Spark paths measured for icefloe (one Python step per
task, no rows crossing the Python/JVM boundary).
"""

from __future__ import annotations

import logging
import os
import uuid
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any, Callable, Sequence

from connector.api.errors import ConnectException, RetriableException
from connector.commit.messages import TaskAssignment, TaskResult
from connector.config.icefloe_config import IcefloeConfig
from connector.spark.on_demand import OnDemandSession
from connector.spark.session import configured_master, is_cluster_master
from connector.task import run_task, run_task_isolated

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

    Takes a SparkSession or SparkContext, a Future of one that is still starting, or an
    :class:`~connector.spark.on_demand.OnDemandSession` that starts one only when a
    cycle too large for the driver is coming (:meth:`expect_cycle`): the job
    prepares its first cycle meanwhile, and waits for the session only to run tasks.
    With ``isolate_failures`` (the REST worker) a task that raises comes back as a
    failed :class:`TaskResult` instead of failing the Spark job of its siblings.

    A round small enough (:func:`runs_in_driver`) runs in the driver process instead,
    and so does a cycle that :meth:`expect_cycle` found Spark still starting for
    (``icefloe.driver.while-spark-starts``): its tasks stop reading once Spark is up.
    """

    def __init__(self, spark: Any, *, isolate_failures: bool = False, master: str | None = None):
        """``master``: the master the session runs on, when it may still be starting (else it is asked
        from the running session, or from the environment's Spark settings while it starts)."""
        self._spark = spark
        self._master = master
        self.isolate_failures = isolate_failures
        self.driver_rounds = 0  # rounds of tasks run in the driver (small cycles, runs_in_driver)
        self.bridging = False  # the coming cycle runs in the driver until Spark is up (expect_cycle)
        self._handed_over = False  # a bridging cycle has seen Spark come up (logged once)

    @property
    def spark(self) -> Any:
        if isinstance(self._spark, OnDemandSession):
            return self._spark.start().result()
        return self._spark.result() if isinstance(self._spark, Future) else self._spark

    @property
    def context(self) -> Any:
        """The SparkContext the tasks run on (the runner may have been given a session)."""
        spark = self.spark
        return getattr(spark, "sparkContext", spark)

    def _starting(self) -> Any:
        """The session, or the Future of one still starting (an on-demand one is started now)."""
        return self._spark.start() if isinstance(self._spark, OnDemandSession) else self._spark

    def session_ready(self, timeout: float) -> bool:
        """Whether the session is up, waiting at most ``timeout`` seconds; raises if it failed to start."""
        starting = self._starting()
        if isinstance(starting, Future):
            try:
                starting.result(timeout=timeout)
            except FutureTimeout:
                return False
        return True

    def expect_cycle(self, records: int, config: IcefloeConfig) -> None:
        """Decide where the cycle about to be planned, over ``records`` offsets, runs its tasks.

        One too large for the driver starts an on-demand session now, in the background, so it
        comes up while the driver probes the first records and creates tables. If the session is
        not up yet, the cycle runs in the driver meanwhile (:attr:`bridging`) and stops reading
        once it is: the job plans it as a single task, and commits what it read.
        """
        self.bridging = self._handed_over = False
        if fits_in_driver(records, config.driver_max_records):
            return
        if isinstance(self._spark, OnDemandSession) and not self._spark.started:
            log.info("Starting Spark: the cycle covers %d offsets, more than icefloe.driver.max-records (%d)",
                     records, config.driver_max_records)
            self._spark.start()
        if not self.session_ready(0) and self._bridges(config):
            log.info("Spark is starting: the driver reads this cycle until it is up")
            self.bridging = True

    def _bridges(self, config: IcefloeConfig) -> bool:
        """Whether a large cycle runs in the driver while Spark starts (``icefloe.driver.while-spark-starts``;
        unset: only on a local master, since a cluster's driver host is not sized to read a backlog)."""
        if config.driver_max_records <= 0:
            return False
        if config.driver_while_spark_starts is not None:
            return config.driver_while_spark_starts
        return not is_cluster_master(self.master)

    @property
    def master(self) -> str:
        """The master tasks run on: as given, else what the environment's Spark settings name (asked while
        the session starts, so not from the session)."""
        return self._master or configured_master()

    @property
    def default_parallelism(self) -> int:
        return self.context.defaultParallelism

    def __call__(self, assignments: Sequence[TaskAssignment]) -> list[TaskResult]:
        if not assignments:
            return []
        task = run_task_isolated if self.isolate_failures else run_task
        if self.bridging:
            self.driver_rounds += 1
            return [task(assignment, self._spark_came_up) for assignment in assignments]
        if runs_in_driver(assignments):
            self.driver_rounds += 1
            return [task(assignment) for assignment in assignments]
        return self._on_spark(task, assignments)

    def _spark_came_up(self) -> bool:
        """A bridging task's signal to stop reading: the session is up (or failed to start, which the
        next cycle reports when it asks for the session)."""
        starting = self._starting()
        up = not isinstance(starting, Future) or starting.done()
        if up and not self._handed_over:
            self._handed_over = True
            log.info("Spark is up: the driver's cycle stops reading here, the next cycle runs on Spark")
        return up

    def _on_spark(self, task: Callable[[TaskAssignment], TaskResult],
                  assignments: Sequence[TaskAssignment]) -> list[TaskResult]:
        context = self.context
        first = assignments[0].task_id
        group = f"icefloe-{first}-{uuid.uuid4().hex[:8]}"
        executors = _executors(context)
        try:
            context.setJobGroup(group, f"icefloe tasks {first}..")
            results = context.parallelize(list(assignments), len(assignments)).map(task).collect()
            _report_retries(context, group, first, executors)
            return results
        except Exception as exc:
            _report_retries(context, group, first, executors)
            exit_code = _jvm_exit_code(context) if isinstance(exc, ConnectionError) else None
            if exit_code is not None:  # not transient: retrying a dead gateway only delays the failure
                raise ConnectException(f"The Spark driver JVM exited (exit code {exit_code}); restart the job: "
                                       f"it resumes from the tables' offsets") from exc
            if WORKER_CRASHED not in str(exc):
                raise
            # nothing of the cycle is visible before its commit: the job may run it again
            # (connector.tolerance.transient)
            raise RetriableException(f"A Spark executor's Python worker died during the tasks of "
                                     f"{assignments[0].task_id}.. ({WORKER_CRASHED})") from exc


def _executors(context: Any) -> set[str]:
    """``host:port`` of the executors the application has now (the driver's entry among them)."""
    try:
        return {f"{e.host}:{e.port}" for e in context.statusTracker().getExecutorInfos()}
    except Exception:  # noqa: BLE001 - only for a log line
        return set()


def _report_retries(context: Any, group: str, first: str, before: set[str]) -> None:
    """Say so when Spark ran some of a cycle's tasks again (an executor or its Python worker lost, a task
    failed) or lost executors meanwhile: Spark rides both out by itself, silently otherwise."""
    try:
        tracker = context.statusTracker()
        failed = 0
        for job_id in tracker.getJobIdsForGroup(group):
            job = tracker.getJobInfo(job_id)
            for stage_id in (job.stageIds if job is not None else []):
                stage = tracker.getStageInfo(stage_id)
                failed += stage.numFailedTasks if stage is not None else 0
        lost = sorted(before - _executors(context))
    except Exception:  # noqa: BLE001 - only for a log line
        return
    if lost:
        log.warning("Spark lost executor(s) %s during the tasks of %s..; Spark runs their tasks on the "
                    "executors left (or waits for new ones)", ", ".join(lost), first)
    if failed:
        log.warning("Spark ran %d failed task attempt(s) of %s.. again (an executor or its Python worker lost, "
                    "or a task failed); the cycle commits once every task succeeded", failed, first)


def warm_up(context: Any) -> Any:
    """``context`` once every executor core has a Python worker that has imported a task's modules.

    Spark starts its Python workers at the first task, and each then imports pyarrow,
    confluent-kafka, pyiceberg and icefloe: seconds of a cold start that would otherwise
    fall inside the first cycle. A tiny job, one task per core, pays them up front;
    the workers are reused (``spark.python.worker.reuse``) by the cycles after it.
    """
    slots = context.defaultParallelism
    context.setJobDescription("icefloe: starting the executors' Python workers")
    context.parallelize(range(slots), slots).map(import_task_modules).collect()
    return context


def import_task_modules(_slot: int) -> int:
    """Runs on an executor: imports what :func:`connector.task.run_task` needs."""
    import connector.task  # noqa: F401 - the import is the point

    return os.getpid()


def _jvm_exit_code(context: Any) -> int | None:
    """The exit code of the driver JVM this process launched, None while it runs (or if not ours)."""
    process = getattr(getattr(context, "_gateway", None), "proc", None)
    try:
        return process.poll() if process is not None else None
    except Exception:  # noqa: BLE001 - only a hint for the error message
        return None
