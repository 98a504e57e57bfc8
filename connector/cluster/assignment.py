"""Which worker runs which connector: the leader's rule, a pure function of what it sees.

A connector runs on one worker at a time, with all its tasks: its tasks are
Spark partitions of one job, committed together by that job's coordinator, so
a connector and its tasks move together.

The rule, applied each time the leader looks (a member came or went, a
connector was created or deleted, a member stopped running something):

- a connector stays where it is while its worker is alive (sticky);
- a departed worker's connectors wait for it ``delay_ms`` after its last
  heartbeat (Connect's ``scheduled.rebalance.max.delay.ms``: a worker that
  restarts within the delay gets them back and nothing moves), then go to the
  least loaded live workers;
- no live worker holds two connectors more than another: the most loaded give
  up their newest ones, so a worker that joins takes its share, and the
  connectors without a worker go to the least loaded;
- a connector whose target worker changed runs there only once no other live
  worker reports running it: the old worker finishes its in-flight commit
  before the new one starts (waiting at most ``rebalance_timeout_ms``; after
  that the commit fence keeps the table exact).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class View:
    """What the leader sees when it assigns."""

    connectors: Sequence[str]  # in creation order
    live: Sequence[str]  # live worker ids
    previous: Mapping[str, str]  # connector -> worker id: the last targets
    running: Mapping[str, frozenset[str]]  # live worker id -> connectors it reports running
    last_seen_ms: Mapping[str, int]  # worker id -> time of its last heartbeat, for departed workers too
    waiting_since_ms: Mapping[str, int]  # connector -> since when it waits for its old worker to let it go
    now_ms: int
    delay_ms: int
    rebalance_timeout_ms: int


@dataclass(frozen=True)
class Assignment:
    targets: dict[str, str | None]  # connector -> the worker it belongs to (None: no live worker yet)
    run: dict[str, str | None]  # connector -> the worker that runs it now (None while it waits)


def assign(view: View) -> Assignment:
    """Where each connector belongs, and who runs it now (its target, once no other live worker runs it)."""
    targets = _targets(view)
    run: dict[str, str | None] = {}
    for name, target in targets.items():
        others = {worker for worker, names in view.running.items()
                  if name in names and worker in view.live and worker != target}
        run[name] = target if target in view.live and (not others or _waited_out(name, view)) else None
    return Assignment(targets, run)


def _targets(view: View) -> dict[str, str | None]:
    live = sorted(view.live)
    owners: dict[str, str | None] = {}
    for name in view.connectors:
        owner = view.previous.get(name)
        if owner in live:
            owners[name] = owner
        elif owner is not None and view.now_ms - view.last_seen_ms.get(owner, 0) < view.delay_ms:
            owners[name] = owner  # the departed worker may come back within the delay: keep its place
        else:
            owners[name] = None
    if live:
        _shed_excess(owners, live, view.connectors)
        _place(owners, live, view.connectors)
    return owners


def _loads(owners: Mapping[str, str | None], live: Sequence[str]) -> dict[str, list[str]]:
    loads: dict[str, list[str]] = {worker: [] for worker in live}
    for name, owner in owners.items():
        if owner in loads:
            loads[owner].append(name)
    return loads


def _shed_excess(owners: dict[str, str | None], live: Sequence[str], order: Sequence[str]) -> None:
    """Take connectors from workers above their share (their newest first), until no live worker runs two
    more than another: a worker that joins takes its share."""
    rank = {name: index for index, name in enumerate(order)}
    free = sum(1 for owner in owners.values() if owner is None)
    loads = {worker: len(names) for worker, names in _loads(owners, live).items()}
    held = _loads(owners, live)
    for _ in range(free):  # the free ones will go to the lightest: count them there first
        loads[min(live, key=lambda w: (loads[w], w))] += 1
    while True:
        heaviest = max(live, key=lambda w: (loads[w], w))
        lightest = min(live, key=lambda w: (loads[w], w))
        if loads[heaviest] - loads[lightest] <= 1 or not held[heaviest]:
            return
        name = max(held[heaviest], key=rank.__getitem__)
        held[heaviest].remove(name)
        owners[name] = None
        loads[heaviest] -= 1
        loads[lightest] += 1


def _place(owners: dict[str, str | None], live: Sequence[str], order: Sequence[str]) -> None:
    """Each connector without a worker goes to the least loaded live worker."""
    loads = {worker: len(names) for worker, names in _loads(owners, live).items()}
    for name in order:
        if owners[name] is None:
            target = min(live, key=lambda w: (loads[w], w))
            owners[name] = target
            loads[target] += 1


def _waited_out(name: str, view: View) -> bool:
    since = view.waiting_since_ms.get(name)
    return since is not None and view.now_ms - since >= view.rebalance_timeout_ms
