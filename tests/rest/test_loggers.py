"""``/admin/loggers`` drives Python's logging with Connect's level names and answers."""

from __future__ import annotations

import logging

import pytest
from starlette.testclient import TestClient

from connector.rest.app import create_app
from connector.rest.loggers import LEVELS, level_name
from tests.rest.fake_herder import FakeHerder
from tests.rest.log_levels import log_levels_restored


@pytest.fixture
def client():
    # PUT root changes every logger with a level of its own: put them all back afterwards.
    names = ["icefloe.test", "icefloe.test.child", "icefloe.testing"]
    for name in names:
        logging.getLogger(name).setLevel(logging.NOTSET)
    with log_levels_restored(), TestClient(create_app(FakeHerder(), {})) as test_client:
        yield test_client


@pytest.mark.parametrize("name", list(LEVELS))
def test_every_connect_level_round_trips(name):
    assert level_name(LEVELS[name]) == name


def test_put_sets_the_namespace_and_its_children_as_connect_does(client):
    logging.getLogger("icefloe.test.child")
    logging.getLogger("icefloe.testing")
    response = client.put("/admin/loggers/icefloe.test", json={"level": "debug"})
    assert response.status_code == 200
    # Connect matches children by plain prefix, so icefloe.testing is one too.
    assert response.json() == ["icefloe.test", "icefloe.test.child", "icefloe.testing"]
    assert logging.getLogger("icefloe.test.child").level == logging.DEBUG
    entry = client.get("/admin/loggers/icefloe.test").json()
    assert entry["level"] == "DEBUG" and isinstance(entry["last_modified"], int)


def test_get_all_lists_loggers_with_their_own_level_and_root_sorted(client):
    client.put("/admin/loggers/icefloe.test", json={"level": "ERROR"})
    levels = client.get("/admin/loggers").json()
    assert "root" in levels and levels["icefloe.test"]["level"] == "ERROR"
    assert list(levels) == sorted(levels)


def test_a_logger_without_its_own_level_reports_the_effective_one(client):
    logging.getLogger("icefloe.test").setLevel(logging.WARNING)
    logging.getLogger("icefloe.test.child").setLevel(logging.NOTSET)
    assert client.get("/admin/loggers/icefloe.test.child").json() == {"level": "WARN", "last_modified": None}


def test_cluster_scope_is_204_and_applies_here(client):
    response = client.put("/admin/loggers/icefloe.test?scope=cluster", json={"level": "FATAL"})
    assert response.status_code == 204 and response.text == ""
    assert logging.getLogger("icefloe.test").level == logging.CRITICAL


def test_an_unknown_scope_is_the_worker(client):
    response = client.put("/admin/loggers/icefloe.test?scope=galaxy", json={"level": "OFF"})
    assert response.status_code == 200 and "icefloe.test" in response.json()


def test_root_is_the_root_logger_and_resets_every_explicit_level(client):
    logging.getLogger("icefloe.test").setLevel(logging.ERROR)
    changed = client.put("/admin/loggers/root", json={"level": "TRACE"}).json()
    assert "root" in changed and "icefloe.test" in changed and changed == sorted(changed)
    assert logging.getLogger("icefloe.test").level == LEVELS["TRACE"]
    assert logging.getLogger().level == LEVELS["TRACE"]
    assert client.get("/admin/loggers/root").json()["level"] == "TRACE"
