"""``GET /connectors/{name}/maintenance``, icefloe's own path: routed to the herder, Connect's error shape."""

from __future__ import annotations

from starlette.testclient import TestClient

from connector.rest.app import create_app
from tests.rest.fake_herder import FakeHerder

CONFIG = {"connector.class": "org.apache.iceberg.connect.IcebergSinkConnector", "topics": "orders",
          "iceberg.tables": "shop.orders", "iceberg.catalog.type": "rest",
          "iceberg.catalog.uri": "http://localhost:8181"}


def test_the_maintenance_of_a_connector_is_the_herders_and_an_unknown_one_is_connects_404():
    herder = FakeHerder()
    herder.create_connector("orders", {**CONFIG, "name": "orders"}, None)
    with TestClient(create_app(herder, {})) as client:
        found = client.get("/connectors/orders/maintenance")
        missing = client.get("/connectors/nope/maintenance")
        wrong_method = client.post("/connectors/orders/maintenance")
    assert (found.status_code, found.json()) == (200, herder.maintenance("orders"))
    assert (missing.status_code, missing.json()) == (404, {"error_code": 404, "message": "Connector nope not found"})
    assert wrong_method.json() == {"error_code": 405, "message": "HTTP 405 Method Not Allowed"}
