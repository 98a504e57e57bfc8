"""Waiting until deployed connectors and all their tasks are RUNNING, through ``.../status``."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable

from connector.deploy.client import ConnectClient

# A connector an operator paused or stopped stays so: a deploy never resumes it.
HELD = ("PAUSED", "STOPPED")


@dataclass
class Outcome:
    name: str
    state: str  # RUNNING, FAILED, PAUSED, STOPPED, or TIMEOUT
    detail: list[str]


def wait_running(client: ConnectClient, names: list[str], timeout: float, poll: float = 0.5,
                 clock: Callable[[], float] = time.monotonic) -> list[Outcome]:
    """Poll every connector until each is settled (RUNNING, FAILED, held) or ``timeout`` passes."""
    deadline = clock() + timeout
    pending = list(names)
    outcomes: dict[str, Outcome] = {}
    last: dict[str, dict[str, Any] | None] = {}
    while pending:
        for name in list(pending):
            status = last[name] = client.status(name)
            outcome = settled(name, status)
            if outcome is not None:
                outcomes[name] = outcome
                pending.remove(name)
        if pending and clock() >= deadline:
            for name in pending:
                outcomes[name] = Outcome(name, "TIMEOUT", [f"not RUNNING after {timeout:g}s: {describe(last[name])}"])
            break
        if pending:
            time.sleep(poll)
    return [outcomes[n] for n in names]


def settled(name: str, status: dict[str, Any] | None) -> Outcome | None:
    """The final word on a connector's status, or None while it is still starting."""
    if status is None:
        return None
    connector = status.get("connector") or {}
    tasks = status.get("tasks") or []
    failed = [("connector", connector)] if connector.get("state") == "FAILED" else []
    failed += [(f"task {t.get('id')}", t) for t in tasks if t.get("state") == "FAILED"]
    if failed:
        detail = []
        for what, instance in failed:
            detail.append(f"{what} FAILED on {instance.get('worker_id', '?')}:")
            detail.extend("    " + line for line in str(instance.get("trace") or "(no trace)").splitlines())
        return Outcome(name, "FAILED", detail)
    state = connector.get("state")
    if state in HELD:
        return Outcome(name, state, [f"connector is {state}; deploy leaves it so (PUT .../resume to run it)"])
    # A sink has at least one task; until they are assigned the connector is still starting.
    if state == "RUNNING" and tasks and all(t.get("state") == "RUNNING" for t in tasks):
        return Outcome(name, "RUNNING", [f"RUNNING with {len(tasks)} task(s) RUNNING"])
    return None


def describe(status: dict[str, Any] | None) -> str:
    if status is None:
        return "no status yet"
    connector = (status.get("connector") or {}).get("state", "?")
    tasks = ", ".join(f"task {t.get('id')} {t.get('state')}" for t in status.get("tasks") or []) or "no tasks"
    return f"connector {connector}, {tasks}"
