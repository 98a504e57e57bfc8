"""Bad input and failures come back in Connect's error shape, never as FastAPI's 422 and never as a 5xx."""

from __future__ import annotations

import json
import logging

import pytest
from starlette.testclient import TestClient

from connector.herder.errors import ConflictError, StartingError
from connector.rest.app import create_app
from tests.rest.fake_herder import FakeHerder

SINK = "org.apache.iceberg.connect.IcebergSinkConnector"
CONFIG = {"connector.class": SINK, "topics": "t", "iceberg.tables": "db.t", "iceberg.catalog.type": "rest",
          "iceberg.catalog.uri": "http://localhost:8181"}
NULL_VALUE = ("Connector configuration is invalid and contains the following 1 error(s):\n"
              "Null value can not be supplied as the configuration value.\n"
              "You can also find the above list of errors at the endpoint "
              "`/connector-plugins/{connectorType}/config/validate`")


@pytest.fixture
def herder():
    herder = FakeHerder()
    herder.create_connector("c", {**CONFIG, "name": "c"}, None)
    return herder


@pytest.fixture
def client(herder):
    with TestClient(create_app(herder, {}), raise_server_exceptions=False) as client:
        yield client


def error_of(response) -> tuple[int, str]:
    body = response.json()
    assert list(body) == ["error_code", "message"]
    assert body["error_code"] == response.status_code
    return response.status_code, body["message"]


BODY_ERRORS = [
    ("POST", "/connectors", b'{"name": "x", "config": {', "Malformed JSON in request body: "),
    ("POST", "/connectors", b"\xff\xfe not utf-8", "Malformed JSON in request body: "),
    ("POST", "/connectors", b"", "Request body is empty"),
    ("POST", "/connectors", b'"just a string"', "Request body must be a JSON object, not a string"),
    ("POST", "/connectors", b'{"config": {}}', "Connector configuration is invalid and contains the following"),
    ("POST", "/connectors", b'{"name": ["a"], "config": {}}', "Invalid connector name in the request body"),
    ("POST", "/connectors", b'{"name": "x", "config": null}', "Missing connector config in the request body"),
    ("POST", "/connectors", b'{"name": "x", "config": ["a"]}', "The connector config must be a JSON object"),
    ("POST", "/connectors", b'{"name": "x", "config": {"topics": {"a": 1}}}',
     "Invalid value for configuration topics: expected a string, not an object"),
    ("POST", "/connectors", b'{"name": "x", "config": {"topics": null}}', NULL_VALUE),
    ("POST", "/connectors", b'{"name": "x", "config": {}, "initial_state": 3}', "Invalid initial_state 3"),
    ("PUT", "/connectors/c/config", b"[1, 2]", "Request body must be a JSON object, not an array"),
    ("PUT", "/connectors/c/config", b"{nope", "Malformed JSON in request body: "),
    ("PUT", "/connectors/c/config", b'{"topics": null}', NULL_VALUE),
    ("PATCH", "/connectors/c/config", b"null", "Request body must be a JSON object, not null"),
    ("PATCH", "/connectors/c/config", b'{"topics": [1]}',
     "Invalid value for configuration topics: expected a string, not an array"),
    ("PATCH", "/connectors/c/offsets", b"[]", "Request body must be a JSON object, not an array"),
    ("PATCH", "/connectors/c/offsets", b'{"offsets": null}',
     "Partitions / offsets need to be provided for an alter offsets request"),
    ("PATCH", "/connectors/c/offsets", b'{"offsets": [1]}', '"offsets" must be a list of'),
    ("PATCH", "/connectors/c/offsets", b'{"offsets": [{"offset": {}}]}', 'Each entry of "offsets" needs a "partition"'),
    ("PUT", f"/connector-plugins/{SINK}/config/validate", b"[]", "Request body must be a JSON object"),
    ("PUT", "/admin/loggers/root", b"[]", "Request body must be a JSON object"),
    ("PUT", "/admin/loggers/root", b'{"level": {"a": 1}}', "The 'level' parameter must be a string"),
]


@pytest.mark.parametrize(("method", "path", "body", "message"), BODY_ERRORS)
def test_bad_bodies_are_400_saying_what_is_wrong(client, method, path, body, message):
    response = client.request(method, path, content=body, headers={"Content-Type": "application/json"})
    status, text = error_of(response)
    assert status == 400
    assert text.startswith(message), text


def test_json_scalars_in_a_config_are_read_as_connect_reads_them(client, herder):
    response = client.put("/connectors/c/config", json={**CONFIG, "tasks.max": 2, "iceberg.tables.auto-create-enabled":
                                                        True})
    assert response.status_code == 200, response.text
    assert herder.configs["c"]["tasks.max"] == "2"
    assert herder.configs["c"]["iceberg.tables.auto-create-enabled"] == "true"


def test_create_sets_the_configs_name_and_trims_the_body_name(client, herder):
    response = client.post("/connectors", json={"name": "  d  ", "config": CONFIG, "initial_state": "paused"})
    assert response.status_code == 201, response.text
    assert response.headers["location"] == "http://testserver/connectors/d"
    assert herder.configs["d"]["name"] == "d"
    assert herder.targets["d"] == "PAUSED"


def test_an_invalid_config_on_update_is_400_and_leaves_the_old_config(client, herder):
    before = dict(herder.configs["c"])
    status, message = error_of(client.put("/connectors/c/config", json={**CONFIG, "tasks.max": "0"}))
    assert status == 400
    assert message.startswith("Connector configuration is invalid and contains the following 1 error(s):\n"
                              "Invalid value 0 for configuration tasks.max: Value must be at least 1")
    assert herder.configs["c"] == before


@pytest.mark.parametrize(("method", "path", "status", "message"), [
    ("GET", "/connectors/nope", 404, "Connector nope not found"),
    ("GET", "/connectors/nope/config", 404, "Connector nope not found"),
    ("DELETE", "/connectors/nope", 404, "Connector nope not found"),
    ("GET", "/connectors/nope/status", 404, "No status found for connector nope"),
    ("GET", "/connectors/nope/tasks/0/status", 404, "No status found for task nope-0"),
    ("PUT", "/connectors/nope/pause", 404, "Unknown connector nope"),
    ("PUT", "/connectors/nope/resume", 404, "Unknown connector nope"),
    ("PUT", "/connectors/nope/stop", 404, "Unknown connector nope"),
    ("GET", "/no/such/route", 404, "HTTP 404 Not Found"),
    ("GET", "/connectors/", 404, "HTTP 404 Not Found"),
    ("GET", "/connectors/c/tasks/x/status", 404, "HTTP 404 Not Found"),
    ("GET", "/connectors/c/tasks/99999999999/status", 404, "HTTP 404 Not Found"),
    ("GET", "/docs", 404, "HTTP 404 Not Found"),
    ("GET", "/openapi.json", 404, "HTTP 404 Not Found"),
    ("DELETE", "/connectors", 405, "HTTP 405 Method Not Allowed"),
    ("POST", "/connectors/c", 405, "HTTP 405 Method Not Allowed"),
    ("GET", "/connectors/c/pause", 405, "HTTP 405 Method Not Allowed"),
    ("POST", "/connector-plugins", 405, "HTTP 405 Method Not Allowed"),
    ("GET", "/connector-plugins/x/config/validate", 405, "HTTP 405 Method Not Allowed"),
    ("GET", "/connector-plugins/com.example.Nope/config", 404, "Unknown plugin com.example.Nope."),
])
def test_unknown_things_answer_connects_texts(client, method, path, status, message):
    assert error_of(client.request(method, path)) == (status, message)


def test_health_is_503_starting_until_the_herder_is_ready():
    with TestClient(create_app(FakeHerder(ready=False), {})) as client:
        response = client.get("/health")
    assert response.status_code == 503
    assert response.text == '{"status":"starting","message":"Worker is still starting up."}'


@pytest.mark.parametrize(("exception", "status"), [
    (StartingError("The worker is still starting up; try again shortly"), 503),
    (ConflictError("Cannot complete request momentarily due to stale configuration (typically caused by a "
                   "concurrent config change)"), 409),
])
def test_herder_errors_keep_their_status_and_text(client, herder, monkeypatch, exception, status):
    def fail(*args):
        raise exception

    monkeypatch.setattr(herder, "connector_names", fail)
    assert error_of(client.get("/connectors")) == (status, exception.message)


def test_an_unexpected_failure_is_a_500_in_connects_shape_and_logged(client, herder, monkeypatch, caplog):
    def fail(*args):
        raise RuntimeError("store is gone")

    monkeypatch.setattr(herder, "connector_info", fail)
    with caplog.at_level(logging.ERROR, logger="connector.rest.errors"):
        assert error_of(client.get("/connectors/c")) == (500, "store is gone")
    assert any(record.exc_info and "store is gone" in str(record.exc_info[1]) for record in caplog.records)


def test_a_connector_deleted_during_an_expanded_listing_is_skipped(client, herder, monkeypatch):
    herder.create_connector("gone", {**CONFIG, "name": "gone"}, None)
    real = herder.connector_status

    def status(name):
        if name == "gone":
            herder.delete_connector("gone")
        return real(name)

    monkeypatch.setattr(herder, "connector_status", status)
    assert list(client.get("/connectors?expand=status").json()) == ["c"]


def test_restart_only_failed_with_nothing_failed_is_202_with_the_status(client):
    response = client.post("/connectors/c/restart?onlyFailed=true")
    assert response.status_code == 202
    assert response.json()["connector"]["state"] == "RUNNING"


@pytest.mark.parametrize(("query", "expected"), [("", True), ("?connectorsOnly=true", True),
                                                 ("?connectorsOnly=TRUE", True), ("?connectorsOnly=false", False),
                                                 ("?connectorsOnly=no", False)])
def test_plugins_listing_and_connectors_only(client, query, expected):
    plugins = client.get("/connector-plugins" + query).json()
    kinds = [p["type"] for p in plugins]
    assert (set(kinds) == {"sink"}) is expected
    if not expected:
        order = ["sink", "transformation", "predicate", "converter", "header_converter"]
        assert kinds == sorted(kinds, key=order.index)
        assert {"class": "org.apache.kafka.connect.storage.SimpleHeaderConverter", "type": "header_converter",
                "version": plugins[0]["version"]} in plugins
        assert not any(p["class"].endswith("SimpleHeaderConverter") and p["type"] == "converter" for p in plugins)
        for kind in order:
            names = [p["class"] for p in plugins if p["type"] == kind]
            assert names == sorted(names)


def test_plugin_config_by_alias(client):
    response = client.get("/connector-plugins/IcebergSink/config")
    assert response.status_code == 200
    assert response.json()[0]["name"] == "iceberg.tables"


def test_validate_answers_200_even_when_invalid(client):
    response = client.put("/connector-plugins/IcebergSinkConnector/config/validate",
                          content=json.dumps({"connector.class": SINK, "tasks.max": "0"}))
    assert response.status_code == 200
    assert response.json()["error_count"] >= 1


def test_health_is_500_unhealthy_when_the_worker_could_not_start():
    app = create_app(FakeHerder(ready=False), {})
    app.state.startup_error = "RuntimeError: Java gateway process exited"
    with TestClient(app) as client:
        response = client.get("/health")
    assert response.status_code == 500
    assert response.json() == {"status": "unhealthy", "message": "Worker was unable to handle this request and may "
                               "be unable to handle other requests. RuntimeError: Java gateway process exited"}
