"""One connector on the worker: its continuous job in a thread, and the states it reports.

The job is ``connector.job.SinkJob`` in continuous mode over the worker's
shared Spark runner. Pausing, stopping, deleting and updating the config all
signal the job's ``StopSignal`` and wait for its thread: the cycle in flight
finishes and commits, then the job ends. Resuming starts a new job, which
resumes from the tables' offsets. A job that raises marks the connector
FAILED with the trace; a task that fails inside a cycle marks only that task
FAILED (the coordinator commits the others' output and leaves the failed
task's partitions alone until it is restarted).
"""

from __future__ import annotations

import logging
import threading
import traceback
from typing import Any, Callable

from connector.api.record import TopicPartition
from connector.commit.coordinator import CycleReport
from connector.config.icefloe_config import MAINTENANCE_ENABLED
from connector.config.sink_config import SinkConfig
from connector.herder.states import (
    FAILED,
    PAUSED,
    RESTARTING,
    RUNNING,
    STOPPED,
    UNASSIGNED,
    connector_state_info,
    state_info,
    task_state_info,
)
from connector.job import SinkJob, StopSignal
from connector.maintenance.status import MaintenanceStatus
from connector.metrics import JobMetrics
from connector.tolerance.transient import transient

log = logging.getLogger(__name__)

Resolver = Callable[[dict[str, str]], dict[str, str]]  # placeholders → values, when a job starts


class ObservedJob(SinkJob):
    """A SinkJob that hands each cycle's report to the runtime (task failures, topics read), and whose
    maintenance rounds update the connector's maintenance status."""

    def __init__(self, *args: Any, observer: Callable[[CycleReport], None], maintenance: MaintenanceStatus,
                 **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.observer = observer
        self.maintainer.watch(maintenance)

    def cycle(self, start: dict[TopicPartition, int], target: dict[TopicPartition, int]) -> CycleReport | None:
        report = super().cycle(start, target)
        if report is not None:
            self.observer(report)
        return report


RETRY_PAUSES_SECONDS = (1.0, 4.0, 15.0)  # a job that met a transient error starts again after these


def declared_tasks(config: dict[str, str]) -> int:
    """``tasks.max`` of a config that passed validation (1 if it cannot be read)."""
    try:
        return max(1, int(config.get("tasks.max", "1")))
    except ValueError:
        return 1


class ConnectorRuntime:
    """A connector's job thread and reported states. Lifecycle calls hold ``lock`` (one change at a time)."""

    def __init__(self, name: str, config: dict[str, str], target_state: str, *, worker: dict[str, str],
                 runner: Any, worker_id: str, resolve: Resolver,
                 on_topics: Callable[[set[str]], None] | None = None):
        self.name = name
        self.config = config  # as submitted, placeholders unresolved
        self.target_state = target_state
        self.worker = worker
        self.runner = runner
        self.worker_id = worker_id
        self.resolve = resolve
        self.lock = threading.RLock()
        self._status_lock = threading.Lock()
        self._connector: tuple[str, str | None] = (UNASSIGNED, None)
        self._tasks: dict[int, tuple[str, str | None]] = {}
        # Failed tasks (id → trace) stay failed across pause/resume and connector-only restarts;
        # the running coordinator shares this dict and skips their partitions.
        self.failed_tasks: dict[int, str] = {}
        self.topics: set[str] = set()  # active topics: read records from since the last reset
        self.on_topics = on_topics  # told about topics read for the first time (to persist them)
        self._thread: threading.Thread | None = None
        self._stop: StopSignal | None = None
        self.job: ObservedJob | None = None
        self.metrics: JobMetrics | None = None  # one per connector, kept across its jobs; closed on delete
        self.maintenance = MaintenanceStatus()  # kept across its jobs too: a resumed connector shows its last round

    # --- lifecycle (each call holds self.lock) --------------------------------------------------

    def apply(self, target_state: str) -> None:
        """Move to ``target_state``: end the current job after its in-flight commit, then start or park."""
        with self.lock:
            self.halt()
            self.target_state = target_state
            self._launch_or_park()

    def update_config(self, config: dict[str, str]) -> None:
        """Restart under ``config``; the old job has ended before the new one starts."""
        with self.lock:
            self.halt()
            self.config = config
            self.failed_tasks.clear()
            self._launch_or_park()

    def restart(self, connector: bool, tasks: set[int]) -> None:
        """Restart the job (``connector``) and/or clear the given tasks' failures so they run again."""
        with self.lock:
            for task in tasks:
                self.failed_tasks.pop(task, None)
            if connector or not self.alive or self.target_state != RUNNING:
                self.halt()
                self._launch_or_park()
                return
            with self._status_lock:
                for task in tasks:
                    if task in self._tasks:
                        self._tasks[task] = (RUNNING, None)

    def mark_restarting(self, connector: bool, tasks: set[int]) -> None:
        with self._status_lock:
            if connector:
                self._connector = (RESTARTING, None)
            for task in tasks:
                self._tasks[task] = (RESTARTING, None)

    def signal_stop(self) -> None:
        """Ask the job to end after its in-flight commit (without waiting)."""
        if self._stop is not None:
            self._stop.event.set()

    def halt(self) -> None:
        """End the job after its in-flight commit and wait for its thread."""
        self.signal_stop()
        if self._thread is not None:
            self._thread.join()
        self._thread = self._stop = self.job = None

    def close(self) -> None:
        """The connector was deleted: end its job and drop its metrics series."""
        self.halt()
        if self.metrics is not None:
            self.metrics.close()
            self.metrics = None

    @property
    def alive(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def _launch_or_park(self) -> None:
        if self.target_state == RUNNING:
            self._launch()
            return
        with self._status_lock:
            if self.target_state == STOPPED:
                self.failed_tasks.clear()  # a stopped connector has no tasks; resuming makes new ones
                self._connector, self._tasks = (STOPPED, None), {}
            else:
                self._connector = (PAUSED, None)
                self._tasks = {task: self._failed_or(task, PAUSED) for task in range(declared_tasks(self.config))}

    def _launch(self) -> None:
        with self._status_lock:
            self._connector = (UNASSIGNED, None)
            self._tasks = {task: self._failed_or(task, UNASSIGNED) for task in range(declared_tasks(self.config))}
        self._stop = StopSignal()
        self._thread = threading.Thread(target=self._run, args=(self._stop,), name=f"connector-{self.name}",
                                        daemon=True)
        self._thread.start()

    def _failed_or(self, task: int, state: str) -> tuple[str, str | None]:
        trace = self.failed_tasks.get(task)
        return (FAILED, trace) if trace is not None else (state, None)

    # --- the job thread ------------------------------------------------------------------------

    def _run(self, stop: StopSignal) -> None:
        try:
            sink = SinkConfig.parse(self.resolve(dict(self.config)), self.worker)
            for note in sink.warnings:  # e.g. a Java sink key with no effect here, as `icefloe run` warns
                log.warning("Connector %s: %s", self.name, note)
            while not self.runner.session_ready(timeout=0.5):  # UNASSIGNED until the worker's session is up
                if stop.requested:
                    return
            for pause in (*RETRY_PAUSES_SECONDS, None):
                if stop.requested:
                    return
                try:
                    self._run_job(sink, stop)
                    return
                except Exception as exc:
                    if pause is None or not transient(exc):
                        raise
                    log.warning("Connector %s: %s; starting again in %.0fs", self.name, exc, pause)
                    stop.event.wait(pause)
        except Exception:  # noqa: BLE001 - any failure of the job is the connector's FAILED state
            trace = traceback.format_exc()
            log.error("Connector %s failed:\n%s", self.name, trace)
            if not stop.requested:
                self._set_failed(trace)

    def _run_job(self, sink: SinkConfig, stop: StopSignal) -> None:
        """One continuous job until it is asked to stop (it resumes from the tables, like a restart)."""
        if self.metrics is None:
            self.metrics = JobMetrics(self.name)
        job = ObservedJob(sink, self.runner, stop=stop, observer=self._cycle_done, metrics=self.metrics,
                          maintenance=self.maintenance)
        job.coordinator.isolate_tasks = True
        job.coordinator.failed_tasks = self.failed_tasks
        self.job = job
        self._set_running(sink.connect.tasks_max)
        job.run()

    def _set_running(self, tasks: int) -> None:
        with self._status_lock:
            self._connector = (RUNNING, None)
            self._tasks = {task: self._failed_or(task, RUNNING) for task in range(tasks)}

    def mark_failed(self, trace: str) -> None:
        """FAILED without running (a connector this worker cannot run), until its config changes."""
        with self.lock:
            self.halt()
            with self._status_lock:
                self._connector = (FAILED, trace)
                self._tasks = {task: (FAILED, trace) for task in range(declared_tasks(self.config))}

    def _set_failed(self, trace: str) -> None:
        with self._status_lock:
            self._connector = (FAILED, trace)
            self._tasks = {task: (FAILED, self.failed_tasks.get(task, trace)) for task in self._tasks}

    def _cycle_done(self, report: CycleReport) -> None:
        with self._status_lock:
            new_topics = set(report.bytes_read) - self.topics
            self.topics.update(new_topics)
            for task, trace in report.failed_tasks.items():
                if self._tasks.get(task, (None,))[0] != FAILED and self.metrics is not None:
                    self.metrics.task_failed(task)
                self._tasks[task] = (FAILED, trace)
        if new_topics and self.on_topics is not None:
            self.on_topics(new_topics)

    # --- what the REST API shows ---------------------------------------------------------------

    def active_topics(self) -> list[str]:
        with self._status_lock:
            return sorted(self.topics)

    def reset_active_topics(self) -> None:
        with self._status_lock:
            self.topics.clear()

    def task_ids(self) -> list[int]:
        """The connector's task ids: none while STOPPED."""
        return [] if self.target_state == STOPPED else list(range(declared_tasks(self.config)))

    def status(self) -> dict:
        with self._status_lock:
            state, trace = self._connector
            tasks = [task_state_info(task, s, self.worker_id, t) for task, (s, t) in self._tasks.items()]
        connector = state_info(state, self.worker_id, trace)
        job = self.job
        lagging = job.coordinator.group_mirror.lagging() if job is not None else None
        if lagging is not None:  # icefloe's own, only while the consumer group is behind the tables
            connector["group_mirror_lag"] = lagging
        return connector_state_info(self.name, connector, tasks)

    def maintenance_status(self) -> dict:
        """icefloe's own ``GET /connectors/{name}/maintenance`` body (docs/rest-api.md)."""
        shown = self.maintenance.as_dict()
        if shown["enabled"] is None:  # no job ran yet: what the submitted config says
            shown["enabled"] = self.config.get(MAINTENANCE_ENABLED, "true").strip().lower() != "false"
        return {"name": self.name, **shown}

    def task_status(self, task: int) -> dict | None:
        with self._status_lock:
            if task not in self._tasks:
                return None
            state, trace = self._tasks[task]
        return task_state_info(task, state, self.worker_id, trace)
