"""connector-configs/deploy.sh (curl and POSIX tools only) end to end against the fake Connect worker."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from connector.cli import main
from connector.config.sink_config import load_connector_file
from tests.deploy.conftest import iceberg_config
from tests.deploy.fake_connect import FakeWorker, RunningFake

SCRIPT = Path(__file__).resolve().parents[2] / "connector-configs" / "deploy.sh"
CONFIGS = SCRIPT.parent

pytestmark = pytest.mark.skipif(shutil.which("curl") is None,
                                reason="deploy.sh's only dependency, curl, is not installed on this machine")


def run_sh(*argv: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    environment = {k: v for k, v in os.environ.items() if not k.startswith("ICEFLOE_DEPLOY_")}
    environment.update(env or {})
    return subprocess.run(["sh", str(SCRIPT), *argv], capture_output=True, text=True, timeout=120, env=environment)


def two_connectors(configs):
    configs.write("orders.json", {"name": "orders", "config": iceberg_config("orders", "shop.orders")})
    configs.write("payments.json", {"name": "payments", **iceberg_config("payments", "shop.payments")})


def test_first_run_creates_and_second_run_changes_nothing(fake_connect, configs):
    two_connectors(configs)

    first = run_sh("--url", fake_connect.url, str(configs.path))

    assert first.returncode == 0, first.stdout + first.stderr
    assert "orders: create (keys only; values are not shown)" in first.stdout
    assert "  + iceberg.tables\n" in first.stdout
    assert "payments: created" in first.stdout
    assert "orders: connector RUNNING, task 0 RUNNING, task 1 RUNNING" in first.stdout
    assert fake_connect.worker.configs["orders"] == {**iceberg_config("orders", "shop.orders"), "name": "orders"}
    payments = {"name": "payments", **iceberg_config("payments", "shop.payments")}
    assert fake_connect.worker.configs["payments"] == payments

    fake_connect.worker.requests.clear()
    second = run_sh("--url", fake_connect.url, str(configs.path))

    assert second.returncode == 0, second.stdout + second.stderr
    assert "orders: no change" in second.stdout and "Nothing to change." in second.stdout
    assert fake_connect.worker.count("PUT") == 0


def test_a_changed_file_updates_only_that_connector_and_shows_keys_not_values(fake_connect, configs):
    two_connectors(configs)
    assert run_sh("--url", fake_connect.url, str(configs.path)).returncode == 0
    changed = iceberg_config("orders", "shop.orders", **{"iceberg.catalog.s3.secret-access-key": "s3-secret-value"})
    changed["tasks.max"] = "3"
    configs.write("orders.json", {"name": "orders", "config": changed})
    fake_connect.worker.requests.clear()

    result = run_sh("--url", fake_connect.url, str(configs.path))

    assert result.returncode == 0, result.stdout + result.stderr
    assert "orders: update (keys only; values are not shown)\n  + iceberg.catalog.s3.secret-access-key\n" \
           "  ~ tasks.max\n" in result.stdout
    assert "s3-secret-value" not in result.stdout + result.stderr
    assert [r for r in fake_connect.worker.requests if r[0] == "PUT"] == [("PUT", "/connectors/orders/config")]
    assert fake_connect.worker.configs["orders"]["iceberg.catalog.s3.secret-access-key"] == "s3-secret-value"


def test_dry_run_changes_nothing(fake_connect, configs):
    two_connectors(configs)

    result = run_sh("--url", fake_connect.url, "--dry-run", str(configs.path))

    assert result.returncode == 0
    assert "Dry run: 2 change(s) not applied." in result.stdout
    assert fake_connect.worker.configs == {} and fake_connect.worker.count("PUT") == 0


def test_a_failed_task_prints_its_trace_and_exits_1(fake_connect, configs):
    configs.write("broken.json", {"name": "broken", "config": iceberg_config("b", "shop.b", fail="true")})

    result = run_sh("--url", fake_connect.url, str(configs.path))

    assert result.returncode == 1
    assert "task 0 FAILED on 127.0.0.1:8083:" in result.stdout
    assert "    Caused by: org.apache.iceberg.exceptions.NoSuchTableException: Table does not exist: demo.missing" \
        in result.stdout
    assert "Failed: broken" in result.stdout


def test_a_refused_config_prints_connects_message_and_exits_1(fake_connect, configs):
    configs.write("zero.json", {"name": "zero", "config": iceberg_config("z", "shop.z", **{"tasks.max": "0"})})

    result = run_sh("--url", fake_connect.url, str(configs.path))

    assert result.returncode == 1
    assert "zero: refused by the worker (400):\n" \
           "    Connector configuration is invalid and contains the following 1 error(s):\n" \
           "    Invalid value 0 for configuration tasks.max: Value must be at least 1\n" in result.stdout


@pytest.mark.parametrize(("text", "expected"), [
    ('{"name": "x", "config": {', "not valid JSON"),
    (json.dumps(iceberg_config("a", "shop.a")), "the connector has no name"),
    ("[]", "must be a JSON object"),
    ('{"name": "n", "topics": null}', "the value of topics is null"),
    ('{"name": "n", "config": {"topics": ["a"]}}', "the value of topics is not a string"),
])
def test_a_bad_file_exits_2_naming_the_file_before_any_request(fake_connect, configs, text, expected):
    two_connectors(configs)
    (configs.path / "bad.json").write_text(text)

    result = run_sh("--url", fake_connect.url, str(configs.path))

    assert result.returncode == 2
    assert f"{configs.path / 'bad.json'}: {expected}" in result.stderr
    assert fake_connect.worker.requests == []


def test_basic_auth_is_sent_and_wrong_credentials_exit_1(configs):
    two_connectors(configs)
    with RunningFake(FakeWorker(credentials=("deployer", 'pa"ss\\word'))) as secured:
        good = run_sh("--url", secured.url, "--user", "deployer", "--password", 'pa"ss\\word', str(configs.path))
        from_env = run_sh("--url", secured.url, str(configs.path),
                          env={"ICEFLOE_DEPLOY_USER": "deployer", "ICEFLOE_DEPLOY_PASSWORD": 'pa"ss\\word'})
        wrong = run_sh("--url", secured.url, "--user", "deployer", "--password", "nope", str(configs.path))

    assert good.returncode == 0, good.stdout + good.stderr
    assert from_env.returncode == 0 and "Nothing to change." in from_env.stdout
    assert wrong.returncode == 1
    assert f"the worker at {secured.url} answered 401: User cannot access the resource." in wrong.stderr


def test_an_unreachable_worker_exits_1_naming_the_url(configs):
    two_connectors(configs)
    with RunningFake(FakeWorker()) as stopped:
        url = stopped.url

    result = run_sh("--url", url, str(configs.path))

    assert result.returncode == 1
    assert f"deploy.sh: Cannot reach the Connect worker at {url}: " in result.stderr


def test_the_shipped_configs_deploy_as_icefloe_deploy_reads_them(fake_connect, capsys):
    # Non-string values, escapes and both file forms: what the script PUTs is what icefloe reads.
    result = run_sh("--url", fake_connect.url, str(CONFIGS))

    assert result.returncode == 0, result.stdout + result.stderr
    for file in sorted(CONFIGS.glob("*.json")):
        expected = load_connector_file(file)
        assert fake_connect.worker.configs[expected["name"]] == expected
    assert main(["deploy", "--url", fake_connect.url, str(CONFIGS)]) == 0
    assert "Nothing to change." in capsys.readouterr().out


def test_flat_files_with_numbers_booleans_and_escapes(fake_connect, configs):
    body = {"name": "odd name 1", "connector.class": iceberg_config("t", "t")["connector.class"], "tasks.max": 2,
            "iceberg.tables.auto-create-enabled": True, "topics": "t", "note": 'a "quoted" \\ path\nand a line'}
    file = configs.write("odd.json", body)

    result = run_sh("--url", fake_connect.url, str(file))

    assert result.returncode == 0, result.stdout + result.stderr
    assert fake_connect.worker.configs["odd name 1"] == load_connector_file(file)
    assert run_sh("--url", fake_connect.url, str(file)).stdout.startswith("odd name 1: no change")


def test_delete_missing_deletes_only_connectors_no_path_defines(fake_connect, configs):
    two_connectors(configs)
    worker = fake_connect.worker
    worker.configs["legacy one"] = {**iceberg_config("old", "shop.old"), "name": "legacy one"}

    dry = run_sh("--url", fake_connect.url, "--dry-run", "--delete-missing", str(configs.path))

    assert dry.returncode == 0
    assert "legacy one: delete (no PATH defines it)" in dry.stdout and "Dry run: 3 change(s) not applied." in dry.stdout
    assert set(worker.configs) == {"legacy one"}

    assert run_sh("--url", fake_connect.url, str(configs.path)).returncode == 0
    assert set(worker.configs) == {"legacy one", "orders", "payments"}  # not asked to delete: kept
    result = run_sh("--url", fake_connect.url, "--delete-missing", str(configs.path))

    assert result.returncode == 0, result.stdout + result.stderr
    assert "legacy one: deleted" in result.stdout
    assert set(worker.configs) == {"orders", "payments"}
    assert [r for r in worker.requests if r[0] == "DELETE"] == [("DELETE", "/connectors/legacy one")]
