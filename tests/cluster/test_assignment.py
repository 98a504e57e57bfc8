"""The leader's assignment rule (connector.cluster.assignment), as properties over what it may see."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from connector.cluster.assignment import Assignment, View, assign

WORKERS = [f"w{i}" for i in range(5)]
NOW = 1_000_000


def view(connectors, live, previous=None, running=None, last_seen=None, waiting=None, delay=0) -> View:
    return View(list(connectors), list(live), previous or {}, running or {}, last_seen or {}, waiting or {},
                NOW, delay, 60_000)


def _loads(result: Assignment, live) -> list[int]:
    return [sum(1 for owner in result.targets.values() if owner == worker) for worker in live]


@st.composite
def situations(draw):
    connectors = [f"c{i}" for i in range(draw(st.integers(0, 12)))]
    live = draw(st.lists(st.sampled_from(WORKERS), min_size=1, max_size=5, unique=True))
    previous = {name: draw(st.sampled_from(WORKERS)) for name in connectors if draw(st.booleans())}
    running = {worker: frozenset(n for n in connectors if previous.get(n) == worker and draw(st.booleans()))
               for worker in live}
    return view(connectors, live, previous, running, {w: NOW - 60_000 for w in WORKERS})


@given(situations())
def test_every_connector_has_one_live_target_and_the_load_is_balanced(situation):
    result = assign(situation)
    assert set(result.targets) == set(situation.connectors)
    assert all(owner in situation.live for owner in result.targets.values())
    loads = _loads(result, situation.live)
    assert max(loads) - min(loads) <= 1


@given(situations())
def test_a_connector_runs_only_where_no_other_live_worker_still_runs_it(situation):
    result = assign(situation)
    for name, worker in result.run.items():
        if worker is None:
            continue
        assert worker == result.targets[name]
        assert not any(name in names for other, names in situation.running.items() if other != worker)


@given(situations())
def test_assigning_again_what_was_assigned_moves_nothing(situation):
    first = assign(situation)
    running = {w: frozenset(n for n, o in first.run.items() if o == w) for w in situation.live}
    again = assign(view(situation.connectors, situation.live, dict(first.targets), running))
    assert again.targets == first.targets
    assert all(again.run[name] == again.targets[name] for name in situation.connectors)


@given(st.integers(1, 12), st.integers(2, 5))
def test_a_worker_that_leaves_gives_up_only_its_own_connectors(count, workers):
    connectors = [f"c{i}" for i in range(count)]
    live = WORKERS[:workers]
    before = assign(view(connectors, live)).targets
    survivors = live[1:]
    after = assign(view(connectors, survivors, before, last_seen={live[0]: NOW - 10_000})).targets
    for name, owner in before.items():
        if owner != live[0]:
            assert after[name] == owner  # sticky: a survivor's connectors do not move
        else:
            assert after[name] in survivors


@given(st.integers(1, 12), st.integers(1, 4))
def test_a_worker_that_joins_takes_its_share_and_only_that_moves(count, workers):
    connectors = [f"c{i}" for i in range(count)]
    live = WORKERS[:workers]
    before = assign(view(connectors, live)).targets
    joined = [*live, WORKERS[workers]]
    after = assign(view(connectors, joined, before)).targets
    moved = [name for name in connectors if after[name] != before[name]]
    assert all(after[name] == WORKERS[workers] for name in moved)
    assert len(moved) == count // len(joined)


def test_a_departed_workers_connectors_wait_for_it_for_the_scheduled_delay():
    before = {"a": "w0", "b": "w1"}
    waiting = assign(view(["a", "b"], ["w1"], before, last_seen={"w0": NOW - 5_000}, delay=10_000))
    assert waiting.targets == before and waiting.run == {"a": None, "b": "w1"}
    moved = assign(view(["a", "b"], ["w1"], before, last_seen={"w0": NOW - 10_000}, delay=10_000))
    assert moved.targets == {"a": "w1", "b": "w1"} and moved.run == moved.targets
    back = assign(view(["a", "b"], ["w0", "w1"], before, last_seen={"w0": NOW - 5_000}, delay=10_000))
    assert back.targets == before  # it came back in time: nothing moved


def test_a_moved_connector_waits_for_its_old_worker_then_for_the_rebalance_timeout_at_most():
    previous = {"a": "w0", "b": "w0", "c": "w0"}
    running = {"w0": frozenset("abc"), "w1": frozenset()}
    result = assign(view("abc", ["w0", "w1"], previous, running))
    moved = [name for name, owner in result.targets.items() if owner == "w1"]
    assert len(moved) == 1 and result.run[moved[0]] is None
    waited = assign(view("abc", ["w0", "w1"], result.targets, running, waiting={moved[0]: NOW - 60_000}))
    assert waited.run[moved[0]] == "w1"
