"""Config writes made on a worker that does not lead: forwarded, or Connect's 409 when no leader is known."""

from __future__ import annotations

import pytest
from starlette.testclient import TestClient

from connector.rest.app import create_app
from connector.rest.forwarding import NO_LEADER, install_forwarding
from tests.rest.fake_herder import FakeHerder


class NoLeader:
    def is_leader(self) -> bool:
        return False

    def leader_url(self) -> str | None:
        return None


@pytest.fixture
def follower():
    app = create_app(FakeHerder(), {})
    install_forwarding(app, NoLeader())
    with TestClient(app) as client:
        yield client


@pytest.mark.parametrize(("method", "path"), [
    ("POST", "/connectors"), ("PUT", "/connectors/a/config"), ("PATCH", "/connectors/a/config"),
    ("PUT", "/connectors/a/pause"), ("PUT", "/connectors/a/resume"), ("PUT", "/connectors/a/stop"),
    ("DELETE", "/connectors/a"), ("PATCH", "/connectors/a/offsets"), ("DELETE", "/connectors/a/offsets"),
])
def test_a_config_write_without_a_known_leader_is_connects_409(follower, method, path):
    response = follower.request(method, path, content=b"{}", headers={"Content-Type": "application/json"})
    assert response.status_code == 409
    assert response.json() == {"error_code": 409, "message": NO_LEADER}


@pytest.mark.parametrize(("method", "path"), [
    ("GET", "/connectors"), ("POST", "/connectors/a/restart"), ("POST", "/connectors/a/tasks/0/restart"),
    ("PUT", "/connectors/a/topics/reset"), ("PUT", "/connector-plugins/x/config/validate"),
])
def test_reads_and_what_any_worker_does_are_answered_locally(follower, method, path):
    response = follower.request(method, path, content=b"{}", headers={"Content-Type": "application/json"})
    assert response.status_code != 409 or response.json()["message"] != NO_LEADER


def test_a_request_already_forwarded_is_answered_here(follower):
    response = follower.request("PUT", "/connectors/nope/pause?forward=false")
    assert response.status_code == 404  # the herder's own answer, not forwarded again
