"""Connect's connector and task states, and the JSON shapes that report them (``ConnectorStateInfo``)."""

from __future__ import annotations

UNASSIGNED = "UNASSIGNED"
RUNNING = "RUNNING"
PAUSED = "PAUSED"
STOPPED = "STOPPED"  # connectors only: a stopped connector has no tasks
FAILED = "FAILED"
RESTARTING = "RESTARTING"

TARGET_STATES = (RUNNING, PAUSED, STOPPED)


def state_info(state: str, worker_id: str, trace: str | None = None) -> dict:
    """``{"state", "worker_id", "trace"?}``: Connect leaves an empty trace out."""
    info = {"state": state, "worker_id": worker_id}
    if trace:
        info["trace"] = trace
    return info


def task_state_info(task: int, state: str, worker_id: str, trace: str | None = None) -> dict:
    return {"id": task, **state_info(state, worker_id, trace)}


def connector_state_info(name: str, connector: dict, tasks: list[dict]) -> dict:
    return {"name": name, "connector": connector, "tasks": sorted(tasks, key=lambda t: t["id"]), "type": "sink"}
