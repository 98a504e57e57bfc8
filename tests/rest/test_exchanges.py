"""The reference Connect 3.9 exchanges (../shared/reference/connect-3.9-rest-exchanges.json), replayed.

Each row is one request of the recorded sequence, adapted to icefloe's sink
class and config, with the status, body text (byte for byte: key order, compact
JSON, empty bodies) and ``Location`` Connect answered. Where Connect answered a
bad body with a 500, icefloe answers 400 with a message that says what is wrong.
Rows run in order against one app: later rows see what earlier ones did.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from starlette.testclient import TestClient

from connector.herder.plugins import version
from connector.rest.app import create_app
from tests.rest.fake_herder import WORKER_ID, FakeHerder
from tests.rest.log_levels import log_levels_restored

SINK = "org.apache.iceberg.connect.IcebergSinkConnector"
CONFIG = {
    "connector.class": SINK, "tasks.max": "1", "topics": "t",
    "key.converter": "org.apache.kafka.connect.storage.StringConverter",
    "value.converter": "org.apache.kafka.connect.json.JsonConverter",
    "value.converter.schemas.enable": "false",
    "iceberg.tables": "db.t", "iceberg.catalog.type": "rest", "iceberg.catalog.uri": "http://localhost:8181",
}


def compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))


def error(status: int, message: str) -> str:
    return compact({"error_code": status, "message": message})


def running(name: str, state: str = "RUNNING", tasks: int = 1) -> str:
    return compact({"name": name, "connector": {"state": state, "worker_id": WORKER_ID},
                    "tasks": [{"id": t, "state": state, "worker_id": WORKER_ID} for t in range(tasks)],
                    "type": "sink"})


def info(name: str, config: dict[str, str], tasks: int = 1) -> str:
    return compact({"name": name, "config": config, "tasks": [{"connector": name, "task": t} for t in range(tasks)],
                    "type": "sink"})


INVALID_TAIL = ("\nYou can also find the above list of errors at the endpoint "
                "`/connector-plugins/{connectorType}/config/validate`")

def _root_and_loggers_below(text: str) -> bool:
    """Connect lists every logger the change reached, sorted: root, and those below it with a level of their own
    (the recorded worker had none; in a test process py4j, sqlalchemy or uvicorn may have one)."""
    names = json.loads(text)
    return "root" in names and names == sorted(names)


Step = tuple[str, str, str, Any, int, Any, "str | None"]


def exchange_steps(config: dict[str, str], topic: str, root: Any) -> list[Step]:
    """The recorded sequence for a connector of ``config`` reading ``topic`` (3 records in partition 0).

    Each step: (name, method, path, body, status, expected text or a predicate of it, Location).
    """
    def named(name: str, **extra: str) -> dict[str, str]:
        return {**config, **extra, "name": name}

    offsets = ('{"offsets":[{"partition":{"kafka_partition":0,"kafka_topic":"' + topic + '"},'
               '"offset":{"kafka_offset":%d}}]}')
    task_config = {**named("rest-sbs"), "task.class": "org.apache.iceberg.connect.IcebergSinkTask"}
    alter = {"offsets": [{"partition": {"kafka_topic": topic, "kafka_partition": 0}, "offset": {"kafka_offset": 1}}]}
    return [
    ("root", "GET", "/", None, 200, root, None),
    ("health", "GET", "/health", None, 200,
     '{"status":"healthy","message":"Worker has completed startup and is ready to handle requests."}', None),
    ("list-empty", "GET", "/connectors", None, 200, "[]", None),
    ("create", "POST", "/connectors", {"name": "rest-sbs", "config": config}, 201,
     info("rest-sbs", named("rest-sbs")), "http://testserver/connectors/rest-sbs"),
    ("create-again", "POST", "/connectors", {"name": "rest-sbs", "config": config}, 409,
     '{"error_code":409,"message":"Connector rest-sbs already exists"}', None),
    ("create-malformed", "POST", "/connectors", '{"name": "x", "config": {"a": "b"', 400,
     lambda text: json.loads(text)["message"].startswith("Malformed JSON in request body: "), None),
    ("create-no-name", "POST", "/connectors", {"name": "", "config": config}, 400,
     error(400, "Connector configuration is invalid and contains the following 1 error(s):\n"
                "Invalid value  for configuration name: String may not be empty" + INVALID_TAIL), None),
    # Connect reads an absent name as the empty one (its recorded step sent none; the text is the same)
    ("create-no-name-key", "POST", "/connectors", {"config": config}, 400,
     error(400, "Connector configuration is invalid and contains the following 1 error(s):\n"
                "Invalid value  for configuration name: String may not be empty" + INVALID_TAIL), None),
    ("create-name-mismatch", "POST", "/connectors", {"name": "rest-sbs-a", "config": named("rest-sbs-b")}, 400,
     '{"error_code":400,"message":"Connector name configuration (rest-sbs-b) doesn\'t match connector name in '
     'the URL (rest-sbs-a)"}', None),
    ("create-not-object", "POST", "/connectors", [config], 400,
     error(400, 'Request body must be a JSON object, not an array: expected {"name": "...", "config": {...}}'), None),
    ("create-no-config", "POST", "/connectors", {"name": "rest-sbs-nc"}, 400,
     error(400, 'Missing connector config in the request body: expected {"name": "...", "config": {...}}'), None),
    ("create-unknown-class", "POST", "/connectors",
     {"name": "rest-sbs-u", "config": {**config, "connector.class": "com.example.NoSuchConnector"}}, 400,
     error(400, "Failed to find any class that implements Connector and which name matches "
                "com.example.NoSuchConnector, available connectors are: " + ", ".join(
                    f"PluginDesc{{klass=class {c}, name='{c}', version='{version()}', encodedVersion={version()}, "
                    "type=sink, typeName='sink', location='classpath'}"
                    for c in ("io.tabular.iceberg.connect.IcebergSinkConnector",
                              "org.apache.iceberg.connect.IcebergSinkConnector"))), None),
    ("status-running", "GET", "/connectors/rest-sbs/status", None, 200, running("rest-sbs"), None),
    ("info", "GET", "/connectors/rest-sbs", None, 200, info("rest-sbs", named("rest-sbs")), None),
    ("config", "GET", "/connectors/rest-sbs/config", None, 200, compact(named("rest-sbs")), None),
    ("tasks", "GET", "/connectors/rest-sbs/tasks", None, 200,
     compact([{"id": {"connector": "rest-sbs", "task": 0}, "config": task_config}]), None),
    ("tasks-config", "GET", "/connectors/rest-sbs/tasks-config", None, 200,
     compact({"rest-sbs-0": task_config}), None),
    ("task-status", "GET", "/connectors/rest-sbs/tasks/0/status", None, 200,
     compact({"id": 0, "state": "RUNNING", "worker_id": WORKER_ID}), None),
    ("task-status-unknown", "GET", "/connectors/rest-sbs/tasks/7/status", None, 404,
     '{"error_code":404,"message":"No status found for task rest-sbs-7"}', None),
    ("list", "GET", "/connectors", None, 200, '["rest-sbs"]', None),
    ("list-expand", "GET", "/connectors?expand=status&expand=info", None, 200,
     '{"rest-sbs":{"status":' + running("rest-sbs") + ',"info":' + info("rest-sbs", named("rest-sbs")) + "}}", None),
    ("list-expand-info-first", "GET", "/connectors?expand=info&expand=status", None, 200,
     '{"rest-sbs":{"status":' + running("rest-sbs") + ',"info":' + info("rest-sbs", named("rest-sbs")) + "}}", None),
    ("list-expand-unknown", "GET", "/connectors?expand=nope", None, 200, '{"rest-sbs":{}}', None),
    ("offsets-running", "GET", "/connectors/rest-sbs/offsets", None, 200,
     offsets % 3, None),
    ("topics", "GET", "/connectors/rest-sbs/topics", None, 200, '{"rest-sbs":{"topics":["' + topic + '"]}}', None),
    ("topics-reset", "PUT", "/connectors/rest-sbs/topics/reset", None, 202, "", None),
    ("topics-after-reset", "GET", "/connectors/rest-sbs/topics", None, 200, '{"rest-sbs":{"topics":[]}}', None),
    ("put-config-create", "PUT", "/connectors/rest-sbs-put/config", config, 201,
     info("rest-sbs-put", named("rest-sbs-put")), "http://testserver/connectors/rest-sbs-put"),
    ("put-config-update", "PUT", "/connectors/rest-sbs-put/config",
     {**named("rest-sbs-put"), "errors.log.enable": "true"}, 200,
     info("rest-sbs-put", {**named("rest-sbs-put"), "errors.log.enable": "true"}), None),
    ("put-config-mismatch", "PUT", "/connectors/rest-sbs-put/config", named("other"), 400,
     error(400, "Connector name configuration (other) doesn't match connector name in the URL (rest-sbs-put)"), None),
    ("patch-config", "PATCH", "/connectors/rest-sbs-put/config", {"errors.tolerance": "all", "errors.log.enable": None},
     200, info("rest-sbs-put", {**named("rest-sbs-put"), "errors.tolerance": "all"}), None),
    ("config-after-patch", "GET", "/connectors/rest-sbs-put/config", None, 200,
     compact({**named("rest-sbs-put"), "errors.tolerance": "all"}), None),
    ("patch-unknown", "PATCH", "/connectors/unknown/config", {"tasks.max": "2"}, 404,
     error(404, "Connector unknown not found"), None),
    ("pause", "PUT", "/connectors/rest-sbs/pause", None, 202, "", None),
    ("status-paused", "GET", "/connectors/rest-sbs/status", None, 200, running("rest-sbs", "PAUSED"), None),
    ("resume", "PUT", "/connectors/rest-sbs/resume", None, 202, "", None),
    ("status-resumed", "GET", "/connectors/rest-sbs/status", None, 200, running("rest-sbs"), None),
    ("offsets-alter-running", "PATCH", "/connectors/rest-sbs/offsets",
     alter, 400,
     '{"error_code":400,"message":"Connectors must be in the STOPPED state before their offsets can be modified. '
     "This can be done for the specified connector by issuing a 'PUT' request to the '/connectors/rest-sbs/stop' "
     'endpoint"}', None),
    ("stop", "PUT", "/connectors/rest-sbs/stop", None, 204, "", None),
    ("status-stopped", "GET", "/connectors/rest-sbs/status", None, 200, running("rest-sbs", "STOPPED", 0), None),
    ("offsets-stopped", "GET", "/connectors/rest-sbs/offsets", None, 200,
     offsets % 3, None),
    ("offsets-alter-empty", "PATCH", "/connectors/rest-sbs/offsets", {"offsets": []}, 400,
     '{"error_code":400,"message":"Partitions / offsets need to be provided for an alter offsets request"}', None),
    ("offsets-alter", "PATCH", "/connectors/rest-sbs/offsets",
     alter, 200,
     '{"message":"The offsets for this connector have been altered successfully"}', None),
    ("offsets-altered", "GET", "/connectors/rest-sbs/offsets", None, 200,
     offsets % 1, None),
    ("offsets-reset", "DELETE", "/connectors/rest-sbs/offsets", None, 200,
     '{"message":"The offsets for this connector have been reset successfully"}', None),
    ("offsets-after-reset", "GET", "/connectors/rest-sbs/offsets", None, 200, '{"offsets":[]}', None),
    ("resume-stopped", "PUT", "/connectors/rest-sbs/resume", None, 202, "", None),
    ("status-resumed-stopped", "GET", "/connectors/rest-sbs/status", None, 200, running("rest-sbs"), None),
    ("restart", "POST", "/connectors/rest-sbs/restart", None, 204, "", None),
    ("restart-tasks", "POST", "/connectors/rest-sbs/restart?includeTasks=true&onlyFailed=false", None, 202,
     running("rest-sbs", "RESTARTING"), None),
    ("restart-flags-not-true", "POST", "/connectors/rest-sbs/restart?includeTasks=yes&onlyFailed=1", None, 204,
     "", None),
    ("task-restart", "POST", "/connectors/rest-sbs/tasks/0/restart", None, 204, "", None),
    ("task-not-a-number", "GET", "/connectors/rest-sbs/tasks/abc/status", None, 404,
     '{"error_code":404,"message":"HTTP 404 Not Found"}', None),
    ("create-stopped", "POST", "/connectors", {"name": "rest-sbs-stopped", "config": config,
                                               "initial_state": "STOPPED"}, 201,
     info("rest-sbs-stopped", named("rest-sbs-stopped"), 0), "http://testserver/connectors/rest-sbs-stopped"),
    ("status-created-stopped", "GET", "/connectors/rest-sbs-stopped/status", None, 200,
     running("rest-sbs-stopped", "STOPPED", 0), None),
    ("create-bad-initial-state", "POST", "/connectors", {"name": "rest-sbs-b", "config": config,
                                                         "initial_state": "SLEEPING"}, 400,
     error(400, 'Invalid initial_state "SLEEPING": expected one of RUNNING, PAUSED, STOPPED'), None),
    ("delete-stopped", "DELETE", "/connectors/rest-sbs-stopped", None, 204, "", None),
    ("unknown", "GET", "/connectors/unknown", None, 404, '{"error_code":404,"message":"Connector unknown not found"}',
     None),
    ("unknown-status", "GET", "/connectors/unknown/status", None, 404,
     '{"error_code":404,"message":"No status found for connector unknown"}', None),
    ("unknown-pause", "PUT", "/connectors/unknown/pause", None, 404,
     '{"error_code":404,"message":"Unknown connector unknown"}', None),
    ("plugins", "GET", "/connector-plugins", None, 200,
     lambda text: [p["class"] for p in json.loads(text)] == ["io.tabular.iceberg.connect.IcebergSinkConnector", SINK]
     and all(list(p) == ["class", "type", "version"] and p["type"] == "sink" for p in json.loads(text)), None),
    ("validate-no-class", "PUT", f"/connector-plugins/{SINK}/config/validate",
     {"tasks.max": "1", "topics": "t", "name": "rest-sbs-v"}, 400,
     error(400, "Connector config {tasks.max=1, topics=t, name=rest-sbs-v} contains no connector type"), None),
    ("validate-mismatch", "PUT", "/connector-plugins/FileStreamSink/config/validate", named("v"), 400,
     error(400, f"Included connector type {SINK} does not match request type FileStreamSink"), None),
    ("validate-alias", "PUT", "/connector-plugins/IcebergSinkConnector/config/validate", named("v"), 200,
     lambda text: json.loads(text)["error_count"] == 0, None),
    ("logger-put", "PUT", "/admin/loggers/root", {"level": "WARN"}, 200, _root_and_loggers_below, None),
    ("logger-get", "GET", "/admin/loggers/root", None, 200,
     lambda text: list(json.loads(text)) == ["level", "last_modified"] and json.loads(text)["level"] == "WARN"
     and isinstance(json.loads(text)["last_modified"], int), None),
    ("logger-put-no-level", "PUT", "/admin/loggers/root", {}, 400,
     '{"error_code":400,"message":"Desired \'level\' parameter was not specified in request."}', None),
    ("logger-put-bad-level", "PUT", "/admin/loggers/root", {"level": "NOPE"}, 404,
     '{"error_code":404,"message":"invalid log level \'NOPE\'."}', None),
    ("logger-get-unknown", "GET", "/admin/loggers/no.such.logger", None, 404,
     '{"error_code":404,"message":"Logger no.such.logger not found."}', None),
    ("no-route", "GET", "/no/such/route", None, 404, '{"error_code":404,"message":"HTTP 404 Not Found"}', None),
    ("wrong-method", "DELETE", "/connectors", None, 405, '{"error_code":405,"message":"HTTP 405 Method Not Allowed"}',
     None),
    ("delete", "DELETE", "/connectors/rest-sbs", None, 204, "", None),
    ("get-deleted", "GET", "/connectors/rest-sbs", None, 404,
     '{"error_code":404,"message":"Connector rest-sbs not found"}', None),
    ("delete-2", "DELETE", "/connectors/rest-sbs-put", None, 204, "", None),
    ("list-end", "GET", "/connectors", None, 200, "[]", None),
    ]


STEPS = exchange_steps(CONFIG, "t", compact({"version": "3.9.0", "commit": "icefloe",
                                               "kafka_cluster_id": "tansu_cluster"}))


@pytest.fixture(scope="module")
def client():
    with log_levels_restored(), TestClient(create_app(FakeHerder(), {})) as test_client:
        yield test_client


def send(client: TestClient, method: str, path: str, body: Any):
    if body is None:
        return client.request(method, path)
    content = body if isinstance(body, str) else json.dumps(body)
    return client.request(method, path, content=content, headers={"Content-Type": "application/json"})


def answers(response, status: int, expected: Any) -> bool:
    """Whether ``response`` has the step's status and text (or satisfies its predicate)."""
    text_ok = expected(response.text) if callable(expected) else response.text == expected
    return response.status_code == status and text_ok


def assert_answer(response, status: int, expected: Any, location: str | None) -> None:
    assert response.status_code == status, response.text
    if callable(expected):
        assert expected(response.text), response.text
    else:
        assert response.text == expected
    assert response.headers.get("location") == location


@pytest.mark.parametrize(("step", "method", "path", "body", "status", "expected", "location"), STEPS,
                         ids=[s[0] for s in STEPS])
def test_connect_exchange(client, step, method, path, body, status, expected, location):
    response = send(client, method, path, body)
    assert_answer(response, status, expected, location)
    if status in (202, 204) and expected == "":
        assert "content-type" not in response.headers
    elif response.text:
        assert response.headers["content-type"] == "application/json"
