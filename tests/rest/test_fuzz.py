"""A property-based fuzz of the REST API: any method, path and body gets a non-5xx answer in Connect's shape.

Paths are built from the API's own segments with random connector names, task
ids, plugin names and logger names mixed in; bodies are random JSON or random
bytes. Whatever is sent, the answer is never a 5xx, and every error is
``{"error_code", "message"}`` with the status as its code.
"""

from __future__ import annotations

import json
from urllib.parse import quote

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from starlette.testclient import TestClient

from connector.rest.app import create_app
from tests.rest.fake_herder import FakeHerder
from tests.rest.log_levels import log_levels_restored

SINK = "org.apache.iceberg.connect.IcebergSinkConnector"
CONFIG = {"connector.class": SINK, "topics": "t", "iceberg.tables": "db.t", "iceberg.catalog.type": "rest",
          "iceberg.catalog.uri": "http://localhost:8181"}

names = st.one_of(st.sampled_from(["c", "nope", "root", "IcebergSink", SINK, "JsonConverter", "Filter"]),
                  st.text(min_size=1, max_size=12))
tasks = st.one_of(st.integers(-3, 3).map(str), st.text(max_size=5))
path_templates = st.sampled_from([
    "/", "/health", "/connectors", "/connectors/{n}", "/connectors/{n}/config", "/connectors/{n}/status",
    "/connectors/{n}/tasks", "/connectors/{n}/tasks-config", "/connectors/{n}/tasks/{t}/status",
    "/connectors/{n}/tasks/{t}/restart", "/connectors/{n}/restart", "/connectors/{n}/pause",
    "/connectors/{n}/resume", "/connectors/{n}/stop", "/connectors/{n}/topics", "/connectors/{n}/topics/reset",
    "/connectors/{n}/offsets", "/connector-plugins", "/connector-plugins/{n}/config",
    "/connector-plugins/{n}/config/validate", "/admin/loggers", "/admin/loggers/{n}", "/connectors/{n}/{n}",
])
queries = st.sampled_from(["", "?expand=status&expand=info", "?expand=x", "?includeTasks=true&onlyFailed=true",
                           "?onlyFailed=true", "?connectorsOnly=false", "?scope=cluster", "?scope=worker"])
scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=10))
json_values = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                            st.dictionaries(st.text(max_size=8), inner, max_size=3)),
                           max_leaves=8)
config_like = st.dictionaries(st.sampled_from([*CONFIG, "name", "tasks.max", "transforms", "transforms.a.type",
                                               "level", "offsets", "config", "initial_state", "topics.regex"]),
                              json_values, max_size=6)
bodies = st.one_of(
    st.none(),
    st.binary(max_size=40),
    json_values.map(json.dumps),
    config_like.map(json.dumps),
    st.builds(lambda name, config, state: json.dumps({"name": name, "config": config, "initial_state": state}),
              names, config_like.map(lambda c: {**CONFIG, **c}), st.one_of(st.none(), st.text(max_size=8))),
    st.builds(lambda offsets: json.dumps({"offsets": offsets}), json_values),
)


@pytest.fixture(scope="module")
def client():
    herder = FakeHerder()
    herder.create_connector("c", {**CONFIG, "name": "c"}, None)
    with log_levels_restored(), TestClient(create_app(herder, {}), raise_server_exceptions=False) as test_client:
        yield test_client


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                  HealthCheck.too_slow])
@given(method=st.sampled_from(["GET", "POST", "PUT", "PATCH", "DELETE"]), template=path_templates,
       name=names, task=tasks, query=queries, body=bodies)
def test_no_request_gets_a_5xx(client, method, template, name, task, query, body):
    send_and_check(client, method, template, name, task, query, body)


def send_and_check(client, method, template, name, task, query, body, *, unreachable_offsets_store=False):
    """Send the request; its answer is not a 5xx and is in Connect's shape.

    ``unreachable_offsets_store``: the real herder's connectors point at a catalog nobody serves, and
    Connect answers 500 when a sink's offsets store cannot be read: that answer, and only that one.
    """
    path = template.replace("{n}", quote(name, safe="")).replace("{t}", quote(task, safe="")) + query
    content = body.encode() if isinstance(body, str) else body
    response = client.request(method, path, content=content, headers={"Content-Type": "application/json"})
    unreadable_offsets = (unreachable_offsets_store and template == "/connectors/{n}/offsets"
                          and response.status_code == 500
                          and " offsets of sink connector " in response.json()["message"]
                          and "could not be reached: " in response.json()["message"])
    assert response.status_code < 500 or (response.status_code == 503 and template == "/health") \
        or unreadable_offsets, (method, path, body, response.status_code, response.text)
    if response.status_code >= 400 and template != "/health":  # /health answers {"status", "message"}
        error = response.json()
        assert list(error) == ["error_code", "message"] and error["error_code"] == response.status_code
        assert isinstance(error["message"], str) and error["message"]
