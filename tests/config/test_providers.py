"""Config providers: ${file:...}, ${directory:...} and ${env:...} placeholders as Connect resolves them."""

from __future__ import annotations

import json
import logging
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from connector import cli
from connector.api.errors import ConfigException
from connector.config.providers import ConfigProviders, EnvVarConfigProvider, resolve_worker_properties
from tests.integration.harness import produce_round_robin, sink_props, table_rows, unique, write_config_file
from tests.support.tansu import create_topic

ALL_THREE = {
    "config.providers": "file,directory,env",
    "config.providers.file.class": "org.apache.kafka.common.config.provider.FileConfigProvider",
    "config.providers.directory.class": "org.apache.kafka.common.config.provider.DirectoryConfigProvider",
    "config.providers.env.class": "org.apache.kafka.common.config.provider.EnvVarConfigProvider",
}


@pytest.fixture
def secrets(tmp_path):
    creds = tmp_path / "creds.properties"
    creds.write_text("# database\nuser=alice\npassword: s3cr\\u00e9t\nurl = jdbc:postgresql://db:5432/x\n")
    directory = tmp_path / "secrets"
    directory.mkdir()
    (directory / "db-password").write_text("from-a-file\n")
    return tmp_path


@given(st.dictionaries(st.text(min_size=1), st.text().filter(lambda v: "${" not in v)))
def test_values_without_placeholders_are_unchanged(config):
    assert ConfigProviders.from_worker(ALL_THREE).resolve(config) == config


@given(st.dictionaries(st.text(min_size=1), st.text()))
def test_a_worker_without_providers_changes_nothing(config):
    assert ConfigProviders.from_worker({}).resolve(config) == config



@given(st.text(), st.text(alphabet=st.characters(blacklist_characters="}:$"), min_size=1), st.text(), st.text())
def test_any_variable_value_is_substituted_once_and_verbatim(value, name, before, after):
    # Whatever the variable holds (even "${env:...}" text) lands as is: resolution is a single pass.
    providers = ConfigProviders({"env": EnvVarConfigProvider(re.compile(".*", re.DOTALL), environ={name: value})})
    before, after = before.replace("$", ""), after.replace("$", "")

    assert providers.resolve({"k": f"{before}${{env:{name}}}{after}"}) == {"k": before + value + after}

def test_file_directory_and_env_placeholders_resolve(secrets, monkeypatch):
    monkeypatch.setenv("ICEFLOE_TEST_TOKEN", "tok")
    providers = ConfigProviders.from_worker(ALL_THREE)

    resolved = providers.resolve({
        "a": f"${{file:{secrets}/creds.properties:password}}",
        "b": f"${{directory:{secrets}/secrets:db-password}}",
        "c": "${env:ICEFLOE_TEST_TOKEN}",
        "d": "${env::ICEFLOE_TEST_TOKEN}",
        "plain": "no placeholder",
    })

    assert resolved == {"a": "s3crét", "b": "from-a-file\n", "c": "tok", "d": "tok",
                        "plain": "no placeholder"}


def test_several_placeholders_in_one_value_and_unknown_providers_kept(secrets):
    providers = ConfigProviders.from_worker(ALL_THREE)
    path = f"{secrets}/creds.properties"

    value = providers.resolve({"jaas": f'Plain required username="${{file:{path}:user}}" '
                                       f'password="${{file:{path}:password}}" other="${{vault:x:y}}" '
                                       "regex=${topic};"})["jaas"]

    assert value == 'Plain required username="alice" password="s3crét" other="${vault:x:y}" regex=${topic};'


def test_simple_class_names_and_custom_provider_names(secrets):
    providers = ConfigProviders.from_worker({"config.providers": "secretfile",
                                             "config.providers.secretfile.class": "FileConfigProvider"})

    assert providers.resolve({"k": f"${{secretfile:{secrets}/creds.properties:user}}"}) == {"k": "alice"}
    # the name "file" is not declared by this worker: left as written
    assert providers.resolve({"k": "${file:/nope:user}"}) == {"k": "${file:/nope:user}"}


@pytest.mark.parametrize("placeholder, reason", [
    ("${file:MISSING/nope.properties:password}", "could not read properties from file"),
    ("${file:DIR/creds.properties:nokey}", "has no key nokey"),
    ("${directory:DIR/secrets:nofile}", "has no file nofile"),
    ("${env:ICEFLOE_SURELY_UNSET_VARIABLE}", "ICEFLOE_SURELY_UNSET_VARIABLE is not set"),
    ("${env:/some/path:HOME}", "a path is not supported"),
])
def test_an_unresolvable_placeholder_is_an_error_naming_the_key(secrets, placeholder, reason):
    placeholder = placeholder.replace("MISSING", str(secrets / "missing")).replace("DIR", str(secrets))
    providers = ConfigProviders.from_worker(ALL_THREE)
    config = {"fine": "x", "database.password": f"prefix-{placeholder}"}

    with pytest.raises(ConfigException) as raised:
        providers.resolve(config)

    assert "database.password" in str(raised.value) and reason in str(raised.value)
    assert list(providers.unresolvable(config)) == ["database.password"]
    assert reason in providers.unresolvable(config)["database.password"]


def test_env_allowlist_pattern(monkeypatch):
    monkeypatch.setenv("DB_PASSWORD", "pw")
    monkeypatch.setenv("AWS_SECRET", "aws")
    providers = ConfigProviders.from_worker({**ALL_THREE, "config.providers.env.param.allowlist.pattern": "DB_.*"})

    assert providers.resolve({"k": "${env:DB_PASSWORD}"}) == {"k": "pw"}
    assert "does not match allowlist.pattern" in providers.unresolvable({"k": "${env:AWS_SECRET}"})["k"]


def test_allowed_paths_limit_file_and_directory_providers(secrets, tmp_path_factory):
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    (elsewhere / "x.properties").write_text("k=v\n")
    providers = ConfigProviders.from_worker({
        **ALL_THREE,
        "config.providers.file.param.allowed.paths": f"{secrets}, /nonexistent",
        "config.providers.directory.param.allowed.paths": f"{secrets}/secrets",
    })

    assert providers.resolve({"k": f"${{file:{secrets}/creds.properties:user}}"}) == {"k": "alice"}
    assert providers.resolve({"k": f"${{directory:{secrets}/secrets:db-password}}"}) == {"k": "from-a-file\n"}
    errors = providers.unresolvable({
        "outside": f"${{file:{elsewhere}/x.properties:k}}",
        "escape": f"${{file:{secrets}/../{elsewhere.name}/x.properties:k}}",
        "subdir": f"${{directory:{secrets}/secrets/../secrets/..:creds.properties}}",
    })
    assert sorted(errors) == ["escape", "outside", "subdir"]
    assert all("is not allowed to be accessed" in message for message in errors.values())


def test_allowed_paths_must_be_absolute():
    with pytest.raises(ConfigException, match="allowed.paths.*relative/dir is not absolute"):
        ConfigProviders.from_worker({**ALL_THREE, "config.providers.file.param.allowed.paths": "relative/dir"})


def test_an_unknown_provider_class_is_an_error_naming_the_key():
    with pytest.raises(ConfigException, match="config.providers.vault.class"):
        ConfigProviders.from_worker({"config.providers": "vault",
                                     "config.providers.vault.class": "com.example.VaultConfigProvider"})


def test_the_worker_file_resolves_its_own_placeholders(secrets, monkeypatch):
    monkeypatch.setenv("ICEFLOE_TEST_BOOTSTRAP", "broker:9092")
    worker = {**ALL_THREE,
              "bootstrap.servers": "${env:ICEFLOE_TEST_BOOTSTRAP}",
              "sasl.jaas.config": f'x required password="${{file:{secrets}/creds.properties:password}}";'}

    resolved = resolve_worker_properties(worker)

    assert resolved["bootstrap.servers"] == "broker:9092"
    assert resolved["sasl.jaas.config"] == 'x required password="s3crét";'
    assert resolved["config.providers.file.class"] == ALL_THREE["config.providers.file.class"]
    assert list(resolved) == list(worker)


def test_validate_uses_a_file_secret_without_printing_it(tmp_path, capsys, caplog):
    secret = "tr0ub4dor&3-never-printed"
    (tmp_path / "creds.properties").write_text(f"catalog.password={secret}\ntasks=-1\n")
    worker = tmp_path / "worker.properties"
    worker.write_text("config.providers=file\n"  # validate needs no broker
                      "config.providers.file.class=org.apache.kafka.common.config.provider.FileConfigProvider\n")
    props = sink_props("sec", "t", "db.t", tmp_path, **{
        "iceberg.catalog.jdbc.password": f"${{file:{tmp_path}/creds.properties:catalog.password}}"})
    config = write_config_file(tmp_path / "c.json", props)
    original = config.read_text()

    with caplog.at_level(logging.DEBUG):
        assert cli.main(["validate", str(config), "--worker", str(worker)]) == 0

    out = capsys.readouterr()
    assert json.loads(out.out)["connector"] == "sec"
    assert secret not in out.out + out.err + caplog.text
    assert config.read_text() == original  # the user's file keeps its placeholder


def test_run_resolves_placeholders_before_parsing_and_names_the_key(tmp_path, capsys):
    # tasks.max comes from the file: its resolved value (-1) is what SinkConfig refuses
    (tmp_path / "creds.properties").write_text("tasks=-1\n")
    worker = tmp_path / "worker.properties"
    worker.write_text("bootstrap.servers=127.0.0.1:1\nconfig.providers=file\n"
                      "config.providers.file.class=FileConfigProvider\n")
    props = sink_props("neg", "t", "db.t", tmp_path, **{"tasks.max": f"${{file:{tmp_path}/creds.properties:tasks}}"})
    config = write_config_file(tmp_path / "c.json", props)

    assert cli.main(["run", str(config), "--worker", str(worker), "--until-caught-up"]) == 2
    assert "Invalid value -1 for configuration tasks.max" in capsys.readouterr().err


def test_an_unresolvable_placeholder_exits_2_naming_the_key(tmp_path, capsys):
    worker = tmp_path / "worker.properties"
    worker.write_text("config.providers=env\nconfig.providers.env.class=EnvVarConfigProvider\n")
    props = sink_props("unset", "t", "db.t", tmp_path,
                       **{"iceberg.catalog.jdbc.password": "${env:ICEFLOE_SURELY_UNSET_VARIABLE}"})
    config = write_config_file(tmp_path / "c.json", props)

    assert cli.main(["validate", str(config), "--worker", str(worker)]) == 2
    assert "iceberg.catalog.jdbc.password" in capsys.readouterr().err


@pytest.mark.integration
def test_run_uses_file_and_env_placeholders_and_never_prints_them(kafka_broker, spark, tmp_path, capfd, caplog,
                                                                  monkeypatch):
    # The secret is part of the catalog URI, so the job can only write the table if it was resolved,
    # and a log line (Python's or Spark's) that echoed the connection settings would show it.
    secret = "hunter2-" + unique("s")
    topic = unique("secret")
    create_topic(kafka_broker.bootstrap, topic)
    produce_round_robin(kafka_broker.bootstrap, topic, [json.dumps({"id": i}).encode() for i in range(10)], 1)
    (tmp_path / "creds.properties").write_text(f"catalog.uri=sqlite:///{tmp_path}/catalog-{secret}.db\n")
    monkeypatch.setenv("ICEFLOE_TEST_BOOTSTRAP", kafka_broker.bootstrap)
    worker = tmp_path / "worker.properties"
    worker.write_text("bootstrap.servers=${env:ICEFLOE_TEST_BOOTSTRAP}\nconfig.providers=file,env\n"
                      "config.providers.file.class=org.apache.kafka.common.config.provider.FileConfigProvider\n"
                      "config.providers.env.class=org.apache.kafka.common.config.provider.EnvVarConfigProvider\n")
    props = sink_props(unique("sec"), topic, "db.secret", tmp_path)
    props["iceberg.catalog.uri"] = f"${{file:{tmp_path}/creds.properties:catalog.uri}}"
    config = write_config_file(tmp_path / "c.json", props)
    original = config.read_text()

    with caplog.at_level(logging.DEBUG):
        assert cli.main(["run", str(config), "--worker", str(worker), "--until-caught-up", "--quiet"]) == 0

    out = capfd.readouterr()  # the JVM's output too
    assert secret not in out.out + out.err + caplog.text
    resolved = {**props, "iceberg.catalog.uri": f"sqlite:///{tmp_path}/catalog-{secret}.db"}
    assert sorted(row["id"] for row in table_rows(resolved, "db.secret")) == list(range(10))
    assert config.read_text() == original


def test_config_errors_and_reprs_do_not_echo_secrets(tmp_path):
    from connector.config.sink_config import SinkConfig
    from connector.kafka.client_config import consumer_config

    secret = "pa55-not-echoed"
    config = SinkConfig.parse(sink_props("r", "t", "db.t", tmp_path, **{"iceberg.catalog.jdbc.password": secret}),
                              {"bootstrap.servers": "127.0.0.1:1"})
    assert secret not in repr(config)
    broken = f'org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="{secret}'
    with pytest.raises(ConfigException) as raised:
        consumer_config({"bootstrap.servers": "h:1", "sasl.jaas.config": broken}, {}, connector_name="c")
    assert "sasl.jaas.config" in str(raised.value) and secret not in str(raised.value)


def test_a_password_value_in_a_config_error_is_hidden_as_connect_does():
    from connector.api.config_def import ConfigDef, ConfigType

    definition = ConfigDef().define("basic.auth.user.info", ConfigType.PASSWORD, None)

    with pytest.raises(ConfigException) as raised:
        definition.parse({"basic.auth.user.info": ["user", "s3cret"]})

    assert str(raised.value).startswith("Invalid value [hidden] for configuration basic.auth.user.info")
    assert "s3cret" not in str(raised.value)
