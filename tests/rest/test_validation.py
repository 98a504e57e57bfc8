"""``validate_connector_config``: Connect's ConfigInfos, compared with the reference validate exchanges.

The framework keys' definitions (type, required, default, importance, group,
width, display name, order) are those a Connect 3.9 worker answered in the
``validate-ok`` exchange; the entity key order is Connect's; errors carry
Connect's texts and sit on the keys Connect puts them on.
"""

from __future__ import annotations

import pytest

from connector.herder.errors import NotFoundError
from connector.herder.validation import invalid_config_message, plugin_config_keys, validate_connector_config

SINK = "org.apache.iceberg.connect.IcebergSinkConnector"
CONFIG = {
    "connector.class": SINK, "tasks.max": "1", "topics": "t", "name": "v",
    "key.converter": "org.apache.kafka.connect.storage.StringConverter",
    "value.converter": "org.apache.kafka.connect.json.JsonConverter",
    "value.converter.schemas.enable": "false",
    "iceberg.tables": "db.t", "iceberg.catalog.type": "rest", "iceberg.catalog.uri": "http://localhost:8181",
}
DEFINITION_KEYS = ["name", "type", "required", "default_value", "importance", "documentation", "group", "width",
                   "display_name", "dependents", "order"]
VALUE_KEYS = ["name", "value", "recommended_values", "errors", "visible"]

# From the reference's validate-ok answer (FileStreamSink on Connect 3.9): the framework keys, in its order.
CONNECT_FRAMEWORK_KEYS = [
    ('name', 'STRING', True, None, 'HIGH', 'Common', 'MEDIUM', 'Connector name', 1),
    ('connector.class', 'STRING', True, None, 'HIGH', 'Common', 'LONG', 'Connector class', 2),
    ('tasks.max', 'INT', False, '1', 'HIGH', 'Common', 'SHORT', 'Tasks max', 3),
    ('tasks.max.enforce', 'BOOLEAN', False, 'true', 'LOW', 'Common', 'SHORT', 'Enforce tasks max', 4),
    ('key.converter', 'CLASS', False, None, 'LOW', 'Common', 'SHORT', 'Key converter class', 5),
    ('value.converter', 'CLASS', False, None, 'LOW', 'Common', 'SHORT', 'Value converter class', 6),
    ('header.converter', 'CLASS', False, None, 'LOW', 'Common', 'SHORT', 'Header converter class', 7),
    ('transforms', 'LIST', False, '', 'LOW', 'Transforms', 'LONG', 'Transforms', 8),
    ('predicates', 'LIST', False, '', 'LOW', 'Predicates', 'LONG', 'Predicates', 9),
    ('config.action.reload', 'STRING', False, 'restart', 'LOW', 'Common', 'MEDIUM', 'Reload Action', 10),
    ('errors.retry.timeout', 'LONG', False, '0', 'MEDIUM', 'Error Handling', 'MEDIUM', 'Retry Timeout for Errors', 1),
    ('errors.retry.delay.max.ms', 'LONG', False, '60000', 'MEDIUM', 'Error Handling', 'MEDIUM',
     'Maximum Delay Between Retries for Errors', 2),
    ('errors.tolerance', 'STRING', False, 'none', 'MEDIUM', 'Error Handling', 'SHORT', 'Error Tolerance', 3),
    ('errors.log.enable', 'BOOLEAN', False, 'false', 'MEDIUM', 'Error Handling', 'SHORT', 'Log Errors', 4),
    ('errors.log.include.messages', 'BOOLEAN', False, 'false', 'MEDIUM', 'Error Handling', 'SHORT',
     'Log Error Details', 5),
    ('topics', 'LIST', False, '', 'HIGH', 'Common', 'LONG', 'Topics', 4),
    ('topics.regex', 'STRING', False, '', 'HIGH', 'Common', 'LONG', 'Topics regex', 4),
    ('errors.deadletterqueue.topic.name', 'STRING', False, '', 'MEDIUM', 'Error Handling', 'MEDIUM',
     'Dead Letter Queue Topic Name', 6),
    ('errors.deadletterqueue.topic.replication.factor', 'SHORT', False, '3', 'MEDIUM', 'Error Handling', 'MEDIUM',
     'Dead Letter Queue Topic Replication Factor', 7),
    ('errors.deadletterqueue.context.headers.enable', 'BOOLEAN', False, 'false', 'MEDIUM', 'Error Handling', 'MEDIUM',
     'Enable Error Context Headers', 8),
]


def by_name(infos: dict) -> dict[str, dict]:
    return {c["value"]["name"]: c for c in infos["configs"]}


def errors_of(infos: dict) -> dict[str, list[str]]:
    return {c["value"]["name"]: c["value"]["errors"] for c in infos["configs"] if c["value"]["errors"]}


def test_a_valid_config_has_connects_shape_and_framework_definitions():
    infos = validate_connector_config(CONFIG, {})
    assert list(infos) == ["name", "error_count", "groups", "configs"]
    assert infos["name"] == SINK and infos["error_count"] == 0
    assert infos["groups"][:4] == ["Common", "Transforms", "Predicates", "Error Handling"]
    for config in infos["configs"]:
        assert list(config) == ["definition", "value"]
        assert list(config["definition"]) == DEFINITION_KEYS
        assert list(config["value"]) == VALUE_KEYS
    framework = [c["definition"] for c in infos["configs"][:len(CONNECT_FRAMEWORK_KEYS)]]
    fields = ("name", "type", "required", "default_value", "importance", "group", "width", "display_name", "order")
    assert [tuple(d[f] for f in fields) for d in framework] == CONNECT_FRAMEWORK_KEYS


def test_values_are_shown_as_connect_converts_them_with_defaults_filled_in():
    configs = by_name(validate_connector_config({**CONFIG, "tasks.max": " 2 "}, {}))
    assert configs["tasks.max"]["value"]["value"] == "2"
    assert configs["tasks.max.enforce"]["value"]["value"] == "true"
    assert configs["transforms"]["value"]["value"] == ""
    assert configs["header.converter"]["value"]["value"] is None
    assert configs["value.converter.schemas.enable"]["value"]["value"] == "false"
    assert configs["key.converter.converter.type"]["value"]["value"] == "key"
    assert configs["iceberg.tables"]["value"]["value"] == "db.t"


def test_keys_with_a_fixed_set_of_values_recommend_them():
    configs = by_name(validate_connector_config(CONFIG, {}))
    assert configs["errors.tolerance"]["value"]["recommended_values"] == ["none", "all"]
    assert configs["config.action.reload"]["value"]["recommended_values"] == ["none", "restart"]
    assert configs["topics"]["value"]["recommended_values"] == []


def test_missing_name_and_topics_as_in_the_validate_bad_exchange():
    config = {k: v for k, v in CONFIG.items() if k not in ("name", "topics")}
    infos = validate_connector_config(config, {})
    assert infos["error_count"] == 3
    assert errors_of(infos) == {
        "name": ['Missing required configuration "name" which has no default value.'],
        "topics": ["Must configure one of topics or topics.regex"],
        "topics.regex": ["Must configure one of topics or topics.regex"],
    }
    assert by_name(infos)["name"]["value"]["value"] is None


@pytest.mark.parametrize(("extra", "expected"), [
    ({"topics.regex": "t.*"}, {"topics": ["topics and topics.regex are mutually exclusive options, but both are set."],
                               "topics.regex": ["topics and topics.regex are mutually exclusive options, but both "
                                                "are set."]}),
    ({"errors.deadletterqueue.topic.name": "t"},
     {k: ["The DLQ topic 't' may not be included in the list of topics ('topics=[t]') consumed by the connector"]
      for k in ("topics", "errors.deadletterqueue.topic.name")}),
    ({"tasks.max": "0"}, {"tasks.max": ["Invalid value 0 for configuration tasks.max: Value must be at least 1"]}),
    ({"tasks.max": "x"}, {"tasks.max": ["Invalid value x for configuration tasks.max: Not a number of type INT"]}),
    ({"errors.tolerance": "some"},
     {"errors.tolerance": ["Invalid value some for configuration errors.tolerance: String must be one of: none, all"]}),
    ({"name": ""}, {"name": ["Invalid value  for configuration name: String may not be empty"]}),
    ({"value.converter.schemas.enable": "maybe"},
     {"value.converter.schemas.enable": ["Invalid value maybe for configuration value.converter.schemas.enable: "
                                         "Expected value to be either true or false"]}),
    ({"transforms": "a,a", "transforms.a.type": "org.apache.kafka.connect.transforms.Filter"},
     {"transforms": ["Duplicate alias provided."]}),
    ({"transforms": "a"}, {"transforms.a.type": ['Missing required configuration "transforms.a.type" which has no '
                                                 'default value.']}),
])
def test_per_key_errors_carry_connects_messages(extra, expected):
    assert errors_of(validate_connector_config({**CONFIG, **extra}, {})) == expected


def test_a_transform_adds_its_keys_under_its_alias_and_group():
    infos = validate_connector_config({**CONFIG, "transforms": "route",
                                       "transforms.route.type": "RegexRouter", "transforms.route.regex": "(.*)",
                                       "transforms.route.replacement": "x-$1"}, {})
    assert infos["error_count"] == 0
    assert "Transforms: route" in infos["groups"]
    configs = by_name(infos)
    type_key = configs["transforms.route.type"]
    assert type_key["definition"]["group"] == "Transforms: route"
    assert type_key["definition"]["display_name"] == "Transformation type for route"
    assert "org.apache.kafka.connect.transforms.RegexRouter" in type_key["value"]["recommended_values"]
    assert configs["transforms.route.replacement"]["value"]["value"] == "x-$1"
    assert configs["transforms.route.negate"]["definition"]["default_value"] == "false"


def test_a_bad_smt_setting_is_an_error_on_its_prefixed_key():
    infos = validate_connector_config({**CONFIG, "transforms": "c", "transforms.c.type":
                                       "org.apache.kafka.connect.transforms.Cast$Value", "transforms.c.spec": ""}, {})
    assert infos["error_count"] >= 1
    assert any(name.startswith("transforms.c") for name in errors_of(infos)), errors_of(infos)


def test_an_unknown_connector_class_is_an_error_on_connector_class():
    infos = validate_connector_config({**CONFIG, "connector.class": "com.example.NoSuchConnector"}, {})
    assert list(errors_of(infos)) == ["connector.class"]
    assert infos["name"] == "com.example.NoSuchConnector"


def test_an_error_of_the_whole_config_lands_on_the_key_it_names():
    config = {k: v for k, v in CONFIG.items() if not k.startswith("iceberg.catalog.")}
    infos = validate_connector_config(config, {})
    assert infos["error_count"] == 1
    ((name, errors),) = errors_of(infos).items()
    assert name == "iceberg.catalog" and "iceberg.catalog" in errors[0]


def test_null_values_are_errors_even_on_undeclared_keys():
    infos = validate_connector_config({**CONFIG, "tasks.max": None, "my.key": None}, {})
    configs = by_name(infos)
    null = "Null value can not be supplied as the configuration value."
    assert configs["tasks.max"]["value"]["errors"] == [null]
    assert configs["my.key"] == {"definition": None, "value": {"name": "my.key", "value": None,
                                                               "recommended_values": [], "errors": [null],
                                                               "visible": True}}


class Providers:
    """A stand-in for ConfigProviders: ${env:SET} resolves, anything else does not."""

    def unresolvable(self, config):
        return {k: f"Could not resolve {v} for {k}" for k, v in config.items() if "${" in v and "SET" not in v}

    def resolve(self, config):
        return {k: v.replace("${env:SET}", "topic") for k, v in config.items()}


def test_placeholders_resolve_for_validation_but_are_shown_as_written():
    infos = validate_connector_config({**CONFIG, "topics": "${env:SET}", "iceberg.catalog.uri": "${env:NOPE}"}, {},
                                      Providers())
    configs = by_name(infos)
    assert configs["topics"]["value"] == {"name": "topics", "value": "${env:SET}", "recommended_values": [],
                                          "errors": [], "visible": True}
    assert errors_of(infos) == {"iceberg.catalog.uri": ["Could not resolve ${env:NOPE} for iceberg.catalog.uri"]}


def test_password_values_are_never_echoed():
    infos = validate_connector_config({**CONFIG, "value.converter": "io.confluent.connect.avro.AvroConverter",
                                       "value.converter.schema.registry.url": "http://sr:8081",
                                       "value.converter.basic.auth.user.info": "user:secret"}, {})
    assert "secret" not in str(infos)
    assert by_name(infos)["value.converter.basic.auth.user.info"]["value"]["value"] == "[hidden]"


def test_invalid_config_message_is_connects_text():
    infos = validate_connector_config({**CONFIG, "name": "", "tasks.max": "0"}, {})
    assert invalid_config_message(infos) == (
        "Connector configuration is invalid and contains the following 2 error(s):\n"
        "Invalid value  for configuration name: String may not be empty\n"
        "Invalid value 0 for configuration tasks.max: Value must be at least 1\n"
        "You can also find the above list of errors at the endpoint "
        "`/connector-plugins/{connectorType}/config/validate`")
    assert invalid_config_message(validate_connector_config(CONFIG, {})) is None


@pytest.mark.parametrize("plugin", [SINK, "io.tabular.iceberg.connect.IcebergSinkConnector", "IcebergSinkConnector",
                                    "IcebergSink"])
def test_plugin_config_lists_the_sinks_keys_then_the_frameworks(plugin):
    keys = plugin_config_keys(plugin)
    names = [k["name"] for k in keys]
    assert names[0] == "iceberg.tables"
    assert names[-len(CONNECT_FRAMEWORK_KEYS):] == [row[0] for row in CONNECT_FRAMEWORK_KEYS]
    assert all(list(k) == DEFINITION_KEYS for k in keys)


def test_plugin_config_of_converters_and_smts_and_unknown_plugins():
    assert "schemas.enable" in [k["name"] for k in plugin_config_keys("org.apache.kafka.connect.json.JsonConverter")]
    assert [k["name"] for k in plugin_config_keys("RegexRouter")] == ["regex", "replacement"]
    with pytest.raises(NotFoundError, match=r"^Unknown plugin com\.example\.Nope\.$"):
        plugin_config_keys("com.example.Nope")


@pytest.mark.parametrize("key", ["value.converter", "transforms.a.type"])
def test_a_python_name_that_is_not_a_class_is_refused_not_called(key):
    # os:abort "instantiated" would kill the worker: a config from REST must never call arbitrary functions.
    config = {**CONFIG, "transforms": "a", "transforms.a.type": "Filter", key: "os:abort"}
    assert errors_of(validate_connector_config(config, {}))[key] == [
        f"Invalid value os:abort for configuration {key}: os:abort is not a class"]


def test_an_undeclared_secret_with_an_error_is_not_echoed():
    infos = validate_connector_config({**CONFIG, "iceberg.catalog.credential": None,
                                       "iceberg.catalog.token": "${vault:nope}"}, {}, Providers())
    shown = {c["value"]["name"]: c["value"]["value"] for c in infos["configs"] if c["definition"] is None}
    assert shown == {"iceberg.catalog.token": "[hidden]", "iceberg.catalog.credential": None}
