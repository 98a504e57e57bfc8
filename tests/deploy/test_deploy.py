"""``icefloe deploy`` end to end against a fake Connect worker speaking Connect's REST API."""

from __future__ import annotations

import base64
import json

import pytest

from connector.cli import main
from tests.deploy.conftest import iceberg_config
from tests.deploy.fake_connect import FakeWorker, RunningFake


def deploy(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["deploy", *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def two_connectors(configs):
    # One REST body ({"name", "config"}) and one flat map: both forms a user may have.
    configs.write("orders.json", {"name": "orders", "config": iceberg_config("orders", "shop.orders")})
    configs.write("payments.json", {"name": "payments", **iceberg_config("payments", "shop.payments")})


def test_first_run_creates_and_second_run_changes_nothing(fake_connect, configs, capsys):
    two_connectors(configs)

    code, out, _ = deploy(capsys, "--url", fake_connect.url, str(configs.path))

    assert code == 0, out
    assert "orders: create (9 keys)" in out
    assert "  + iceberg.tables = shop.orders" in out
    assert "payments: created" in out
    assert "orders: RUNNING with 2 task(s) RUNNING" in out
    assert fake_connect.worker.configs["orders"] == {**iceberg_config("orders", "shop.orders"), "name": "orders"}
    assert fake_connect.worker.configs["payments"]["name"] == "payments"

    fake_connect.worker.requests.clear()
    code, out, _ = deploy(capsys, "--url", fake_connect.url, str(configs.path))

    assert code == 0, out
    assert "orders: no change" in out and "payments: no change" in out
    assert "Nothing to change." in out
    assert fake_connect.worker.count("PUT") == 0
    assert fake_connect.worker.count("DELETE") == 0


def test_a_changed_file_updates_only_that_connector(fake_connect, configs, capsys):
    two_connectors(configs)
    assert deploy(capsys, "--url", fake_connect.url, str(configs.path))[0] == 0
    changed = iceberg_config("orders", "shop.orders", **{"iceberg.control.commit.interval-ms": "60000"})
    changed["tasks.max"] = "3"
    del changed["value.converter.schemas.enable"]
    configs.write("orders.json", {"name": "orders", "config": changed})
    fake_connect.worker.requests.clear()

    code, out, _ = deploy(capsys, "--url", fake_connect.url, str(configs.path))

    assert code == 0, out
    assert "orders: update" in out
    assert "  ~ tasks.max: 2 -> 3" in out
    assert "  + iceberg.control.commit.interval-ms = 60000" in out
    assert "  - value.converter.schemas.enable (was false)" in out
    assert "payments: no change" in out
    assert [r for r in fake_connect.worker.requests if r[0] == "PUT"] == [("PUT", "/connectors/orders/config")]
    assert fake_connect.worker.configs["orders"]["tasks.max"] == "3"
    assert "orders: RUNNING with 3 task(s) RUNNING" in out


def test_dry_run_changes_nothing(fake_connect, configs, capsys):
    two_connectors(configs)
    fake_connect.worker.configs["legacy"] = {**iceberg_config("old", "shop.old"), "name": "legacy"}

    code, out, _ = deploy(capsys, "--url", fake_connect.url, "--dry-run", "--delete-missing", str(configs.path))

    assert code == 0, out
    assert "orders: create" in out and "legacy: delete (no PATH defines it)" in out
    assert "Dry run: 3 change(s) not applied." in out
    assert set(fake_connect.worker.configs) == {"legacy"}
    assert fake_connect.worker.count("PUT") == 0 and fake_connect.worker.count("DELETE") == 0


def test_delete_missing_deletes_only_connectors_no_path_defines(fake_connect, configs, capsys):
    two_connectors(configs)
    worker = fake_connect.worker
    worker.configs["legacy"] = {**iceberg_config("old", "shop.old"), "name": "legacy"}
    assert deploy(capsys, "--url", fake_connect.url, str(configs.path))[0] == 0
    assert set(worker.configs) == {"legacy", "orders", "payments"}  # not asked to delete: kept

    code, out, _ = deploy(capsys, "--url", fake_connect.url, "--delete-missing", str(configs.path))

    assert code == 0, out
    assert "legacy: delete (no PATH defines it)" in out and "legacy: deleted" in out
    assert set(worker.configs) == {"orders", "payments"}
    assert [r for r in worker.requests if r[0] == "DELETE"] == [("DELETE", "/connectors/legacy")]


def test_a_failed_task_prints_its_trace_and_exits_1(fake_connect, configs, capsys):
    two_connectors(configs)
    configs.write("broken.json", {"name": "broken", "config": iceberg_config("b", "shop.b", fail="true")})

    code, out, _ = deploy(capsys, "--url", fake_connect.url, str(configs.path))

    assert code == 1
    assert "broken: task 0 FAILED on 127.0.0.1:8083:" in out
    assert "Caused by: org.apache.iceberg.exceptions.NoSuchTableException: Table does not exist: demo.missing" in out
    assert "orders: RUNNING" in out
    assert "Failed: broken" in out


def test_a_connector_that_never_runs_times_out(fake_connect, configs, capsys):
    configs.write("stuck.json", {"name": "stuck", "config": iceberg_config("s", "shop.s", stuck="true")})

    code, out, _ = deploy(capsys, "--url", fake_connect.url, "--timeout", "1", str(configs.path))

    assert code == 1
    assert "stuck: not RUNNING after 1s: connector RUNNING, no tasks" in out


def test_a_refused_config_prints_connects_message_and_exits_1(fake_connect, configs, capsys):
    two_connectors(configs)
    configs.write("zero.json", {"name": "zero", "config": iceberg_config("z", "shop.z", **{"tasks.max": "0"})})
    configs.write("noclass.json", {"name": "noclass", "config": {"topics": "n", "iceberg.tables": "shop.n"}})

    code, out, _ = deploy(capsys, "--url", fake_connect.url, str(configs.path))

    assert code == 1
    assert "zero: refused by the worker (400):" in out
    assert "    Connector configuration is invalid and contains the following 1 error(s):" in out
    assert "    Invalid value 0 for configuration tasks.max: Value must be at least 1" in out
    assert "noclass: refused by the worker (400):" in out
    assert "contains no connector type" in out
    assert set(fake_connect.worker.configs) == {"orders", "payments"}  # the good ones still deployed
    assert "orders: RUNNING" in out


@pytest.mark.parametrize(("file", "text", "expected"), [
    ("broken.json", '{"name": "x", "config": {', "is not valid JSON"),
    ("anonymous.json", json.dumps(iceberg_config("a", "shop.a")), "the connector has no name"),
    ("list.json", "[]", "must be a JSON object"),
    ("null.json", json.dumps({"name": "n", "topics": None}), "Null value"),
])
def test_a_bad_file_exits_2_naming_the_file_before_any_request(fake_connect, configs, capsys, file, text, expected):
    two_connectors(configs)
    (configs.path / file).write_text(text)

    code, out, err = deploy(capsys, "--url", fake_connect.url, str(configs.path))

    assert code == 2
    assert str(configs.path / file) in err and expected in err
    assert fake_connect.worker.requests == []


def test_two_files_defining_one_name_exit_2_naming_both(fake_connect, configs, capsys):
    first = configs.write("a.json", {"name": "orders", "config": iceberg_config("orders", "shop.orders")})
    second = configs.write("b.json", {"name": "orders", **iceberg_config("orders", "shop.orders")})

    code, _, err = deploy(capsys, "--url", fake_connect.url, str(first), str(second))

    assert code == 2
    assert f"{second}: connector orders is already defined in {first}" in err
    assert fake_connect.worker.requests == []


def test_a_missing_path_exits_2(fake_connect, tmp_path, capsys):
    code, _, err = deploy(capsys, "--url", fake_connect.url, str(tmp_path / "nope.json"))

    assert code == 2
    assert f"{tmp_path / 'nope.json'}: no such file or directory" in err


def test_secrets_are_masked_in_the_diff_and_placeholders_shown(fake_connect, configs, capsys):
    config = iceberg_config("orders", "shop.orders", **{
        "iceberg.catalog.s3.secret-access-key": "s3-secret-value",
        "iceberg.catalog.s3.access-key-id": "AKIAEXAMPLE",
        "iceberg.catalog.jdbc.pw": "declared-password-value",  # PASSWORD-typed by the plugin, not by its name
        "iceberg.catalog.client.password": "${env:CATALOG_PASSWORD}",
        "key.converter": "org.apache.kafka.connect.storage.StringConverter",
    })
    configs.write("orders.json", {"name": "orders", "config": config})
    assert deploy(capsys, "--url", fake_connect.url, str(configs.path))[0] == 0
    config["iceberg.catalog.s3.secret-access-key"] = "rotated-secret-value"
    configs.write("orders.json", {"name": "orders", "config": config})

    code, out, _ = deploy(capsys, "--url", fake_connect.url, "--dry-run", str(configs.path))

    assert code == 0
    assert "  ~ iceberg.catalog.s3.secret-access-key: [hidden] -> [hidden]" in out
    fake_connect.worker.configs.clear()
    _, out, _ = deploy(capsys, "--url", fake_connect.url, "--dry-run", str(configs.path))
    for secret in ("s3-secret-value", "rotated-secret-value", "AKIAEXAMPLE", "declared-password-value"):
        assert secret not in out
    assert "  + iceberg.catalog.jdbc.pw = [hidden]" in out
    assert "  + iceberg.catalog.client.password = ${env:CATALOG_PASSWORD}" in out
    assert "  + key.converter = org.apache.kafka.connect.storage.StringConverter" in out


@pytest.fixture
def secured_connect():
    with RunningFake(FakeWorker(credentials=("deployer", "s3cret"))) as running:
        yield running


def test_basic_auth_is_sent_on_every_request(secured_connect, configs, capsys, monkeypatch):
    two_connectors(configs)
    expected = "Basic " + base64.b64encode(b"deployer:s3cret").decode()

    code, out, _ = deploy(capsys, "--url", secured_connect.url, "--user", "deployer", "--password", "s3cret",
                          str(configs.path))

    assert code == 0, out
    assert set(secured_connect.worker.authorizations) == {expected}

    monkeypatch.setenv("ICEFLOE_DEPLOY_USER", "deployer")
    monkeypatch.setenv("ICEFLOE_DEPLOY_PASSWORD", "s3cret")
    secured_connect.worker.authorizations.clear()
    code, out, _ = deploy(capsys, "--url", secured_connect.url, str(configs.path))
    assert code == 0, out
    assert "Nothing to change." in out
    assert set(secured_connect.worker.authorizations) == {expected}


def test_wrong_credentials_exit_1_with_the_workers_answer(secured_connect, configs, capsys):
    two_connectors(configs)

    code, _, err = deploy(capsys, "--url", secured_connect.url, "--user", "deployer", "--password", "wrong",
                          str(configs.path))

    assert code == 1
    assert f"the worker at {secured_connect.url} answered 401: User cannot access the resource." in err


def test_user_without_password_exits_2(fake_connect, configs, capsys):
    two_connectors(configs)

    code, _, err = deploy(capsys, "--url", fake_connect.url, "--user", "deployer", str(configs.path))

    assert code == 2 and "--user and --password" in err


def test_an_unreachable_worker_gives_one_line_naming_the_url(configs, capsys):
    two_connectors(configs)
    with RunningFake(FakeWorker()) as stopped:
        url = stopped.url  # a port that was just free, and is closed again once the fake stops

    code, out, err = deploy(capsys, "--url", url, str(configs.path))

    assert code == 1
    assert err.count("\n") == 1
    assert err.startswith(f"icefloe deploy: Cannot reach the Connect worker at {url}: ")


def test_a_paused_connector_is_reported_and_left_paused(fake_connect, configs, capsys):
    two_connectors(configs)
    assert deploy(capsys, "--url", fake_connect.url, str(configs.path))[0] == 0
    fake_connect.worker.paused.add("orders")
    fake_connect.worker.requests.clear()

    code, out, _ = deploy(capsys, "--url", fake_connect.url, str(configs.path))

    assert code == 0, out
    assert "orders: connector is PAUSED; deploy leaves it so (PUT .../resume to run it)" in out
    assert fake_connect.worker.count("PUT") == 0


@pytest.mark.parametrize(("key", "secret"), [
    ("iceberg.catalog.s3.secret-access-key", True),
    ("iceberg.catalog.s3.access-key-id", True),
    ("iceberg.catalog.token", True),
    ("iceberg.kafka.sasl.jaas.config", True),
    ("value.converter.basic.auth.user.info", True),
    ("iceberg.catalog.credential", True),
    ("consumer.override.ssl.key.password", True),
    ("iceberg.catalog.gcs.apikey", True),
    ("key.converter", False),
    ("key.converter.schemas.enable", False),
    ("value.converter.key.subject.name.strategy", False),
    ("iceberg.tables.default-id-columns", False),
    ("topics", False),
])
def test_which_keys_count_as_secret(key, secret):
    from connector.deploy.diff import looks_secret

    assert looks_secret(key) is secret
