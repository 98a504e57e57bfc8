"""The REST API fuzz of tests/rest/test_fuzz.py, answered by the real herder instead of the fake one.

Connectors are created, changed, stopped and deleted by random requests on a
real herder (its store, its validation, its rules); their jobs wait for a Spark
session that never comes, so nothing runs, yet every answer must still be
Connect's shape and never a 5xx, except Connect's own 500 for offsets whose
store cannot be reached (the fuzz's configs name a REST catalog nobody serves).
"""

from __future__ import annotations

from concurrent.futures import Future

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from starlette.testclient import TestClient

from connector.herder.herder import Herder
from connector.rest.app import create_app
from tests.integration.harness import sink_props
from tests.rest import test_fuzz
from tests.rest.log_levels import log_levels_restored

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def client(kafka_broker, tmp_path_factory):
    work = tmp_path_factory.mktemp("fuzz")
    config = sink_props("c", "t", "db.t", work / "lake")
    herder = Herder({"bootstrap.servers": kafka_broker.bootstrap}, data_dir=work / "worker", spark=Future(),
                    worker_id="127.0.0.1:8083")
    herder.start()
    herder.create_connector("c", config, "STOPPED")
    with log_levels_restored(), TestClient(create_app(herder, {}), raise_server_exceptions=False) as test_client:
        yield test_client
    herder.shutdown()


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                  HealthCheck.too_slow])
@given(method=st.sampled_from(["GET", "POST", "PUT", "PATCH", "DELETE"]), template=test_fuzz.path_templates,
       name=test_fuzz.names, task=test_fuzz.tasks, query=test_fuzz.queries, body=test_fuzz.bodies)
def test_no_request_gets_a_5xx_from_the_real_herder(client, method, template, name, task, query, body):
    test_fuzz.send_and_check(client, method, template, name, task, query, body, unreachable_offsets_store=True)
