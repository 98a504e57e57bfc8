"""Worker properties parsing and Connect-style consumer configuration."""

from __future__ import annotations

import pytest
from confluent_kafka import Consumer, TopicPartition

from connector.api.errors import ConfigException
from connector.config.java_properties import load_worker_properties, parse_properties
from connector.kafka.client_config import (
    THROUGHPUT_DEFAULTS,
    KafkaConfigError,
    admin_config,
    admin_config_from,
    build_consumer_config,
    consumer_config,
    parse_jaas_config,
)
from tests.support.tansu import create_topic, produce

PEM_CERT = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"


# --------------------------------------------------------------------------
# .properties parsing
# --------------------------------------------------------------------------
def test_properties_separators_comments_and_blank_lines():
    text = """
# a comment
! another comment
   bootstrap.servers=broker:9092
key.converter : org.apache.kafka.connect.json.JsonConverter
plugin.path /opt/plugins
empty=
spaced   =   value with spaces \x20
"""
    assert parse_properties(text) == {
        "bootstrap.servers": "broker:9092",
        "key.converter": "org.apache.kafka.connect.json.JsonConverter",
        "plugin.path": "/opt/plugins",
        "empty": "",
        "spaced": "value with spaces  ",
    }


def test_properties_line_continuations():
    text = "sasl.jaas.config=org.Module required \\\n    username=\"u\" \\\n    password=\"p\";\nnext=1\n"
    assert parse_properties(text) == {
        "sasl.jaas.config": 'org.Module required username="u" password="p";',
        "next": "1",
    }


def test_even_number_of_backslashes_is_not_a_continuation():
    assert parse_properties("path=C:\\\\dir\\\\\nnext=1") == {"path": "C:\\dir\\", "next": "1"}


def test_properties_escapes():
    text = "a\\=b\\:c\\ d=x\\ty\\nz\\u00e9\\q\n"
    assert parse_properties(text) == {"a=b:c d": "x\ty\nzéq"}


def test_continuation_line_starting_with_hash_is_not_a_comment():
    assert parse_properties("k=a\\\n  #b\n") == {"k": "a#b"}


def test_later_duplicate_wins_and_crlf_lines():
    assert parse_properties("k=1\r\nk=2\r\n") == {"k": "2"}


def test_malformed_unicode_escape_is_an_error():
    with pytest.raises(ConfigException, match="uxxxx"):
        parse_properties("k=\\u12")


def test_load_worker_properties_utf8_and_latin1(tmp_path):
    utf8 = tmp_path / "utf8.properties"
    utf8.write_bytes("name=café\n".encode("utf-8"))
    latin1 = tmp_path / "latin1.properties"
    latin1.write_bytes("name=café\n".encode("iso-8859-1"))
    assert load_worker_properties(utf8) == {"name": "café"}
    assert load_worker_properties(str(latin1)) == {"name": "café"}


# --------------------------------------------------------------------------
# Precedence and Connect's base settings
# --------------------------------------------------------------------------
def test_connect_base_settings():
    conf = consumer_config({"bootstrap.servers": "b:9092"}, {}, connector_name="orders")
    assert conf["group.id"] == "connect-orders"
    assert conf["enable.auto.commit"] == "false"
    assert conf["enable.auto.offset.store"] == "false"
    assert conf["auto.offset.reset"] == "earliest"
    assert conf["isolation.level"] == "read_uncommitted"
    assert conf["bootstrap.servers"] == "b:9092"


def test_bootstrap_servers_defaults_like_connect_and_lists_are_normalised():
    assert consumer_config({}, {}, connector_name="c")["bootstrap.servers"] == "localhost:9092"
    conf = consumer_config({"bootstrap.servers": "a:1, b:2 ,c:3"}, {}, connector_name="c")
    assert conf["bootstrap.servers"] == "a:1,b:2,c:3"


def test_precedence_worker_then_worker_consumer_then_connector_override():
    worker = {
        "bootstrap.servers": "worker:9092",
        "security.protocol": "SASL_PLAINTEXT",
        "consumer.security.protocol": "SASL_SSL",
        "consumer.isolation.level": "read_committed",
        "consumer.fetch.min.bytes": "10",
        "group.id": "connect-cluster",  # the worker's own group: not the consumer's
        "offset.storage.topic": "connect-offsets",
    }
    connector = {
        "consumer.override.fetch.min.bytes": "20",
        "consumer.override.auto.offset.reset": "latest",
        "topics": "orders",
    }
    conf = consumer_config(worker, connector, connector_name="c")
    assert conf["bootstrap.servers"] == "worker:9092"
    assert conf["security.protocol"] == "SASL_SSL"
    assert conf["isolation.level"] == "read_committed"
    assert conf["fetch.min.bytes"] == "20"
    assert conf["auto.offset.reset"] == "latest"
    assert conf["group.id"] == "connect-c"
    assert "offset.storage.topic" not in conf and "topics" not in conf


def test_group_id_can_be_overridden():
    conf = consumer_config({}, {"consumer.override.group.id": "custom"}, connector_name="c")
    assert conf["group.id"] == "custom"


def test_java_only_keys_are_dropped_and_reported(caplog):
    worker = {
        "consumer.key.deserializer": "org.apache.kafka.common.serialization.StringDeserializer",
        "consumer.max.poll.records": "500",
        "consumer.interceptor.classes": "io.confluent.monitoring.Interceptor",
        "consumer.partition.assignment.strategy": "org.apache.kafka.clients.consumer.RangeAssignor",
        "consumer.max.poll.interval.ms": "300000",
    }
    result = build_consumer_config(worker, {"consumer.override.metric.reporters": "x"}, connector_name="c")
    dropped = {item.key for item in result.dropped}
    assert dropped == {
        "key.deserializer",
        "max.poll.records",
        "interceptor.classes",
        "partition.assignment.strategy",
        "metric.reporters",
    }
    assert result.conf["max.poll.interval.ms"] == "300000"  # librdkafka knows this one
    for key in dropped:
        assert key not in result.conf
    with caplog.at_level("WARNING"):
        consumer_config(worker, {}, connector_name="c")
    assert "key.deserializer" in caplog.text


def test_renamed_and_revalued_java_keys():
    worker = {
        "consumer.fetch.max.wait.ms": "250",
        "consumer.receive.buffer.bytes": "-1",
        "consumer.send.buffer.bytes": "131072",
        "consumer.auto.offset.reset": "none",
        "ssl.endpoint.identification.algorithm": "",
    }
    conf = consumer_config(worker, {}, connector_name="c")
    assert conf["fetch.wait.max.ms"] == "250"
    assert conf["socket.receive.buffer.bytes"] == "0"
    assert conf["socket.send.buffer.bytes"] == "131072"
    assert conf["auto.offset.reset"] == "error"
    assert conf["ssl.endpoint.identification.algorithm"] == "none"
    assert "fetch.max.wait.ms" not in conf


def test_throughput_defaults_added_unless_set():
    conf = consumer_config({}, {}, connector_name="c")
    for key, value in THROUGHPUT_DEFAULTS.items():
        assert conf[key] == value
    conf = consumer_config(
        {"consumer.queued.min.messages": "1000"}, {"consumer.override.fetch.max.wait.ms": "77"}, connector_name="c"
    )
    assert conf["queued.min.messages"] == "1000"
    assert conf["fetch.wait.max.ms"] == "77"


def test_override_policy_none_and_principal():
    connector = {"consumer.override.fetch.min.bytes": "5"}
    with pytest.raises(ConfigException, match="consumer.override.fetch.min.bytes"):
        consumer_config({"connector.client.config.override.policy": "None"}, connector, connector_name="c")
    with pytest.raises(ValueError, match="does not allow"):
        consumer_config({"connector.client.config.override.policy": "Principal"}, connector, connector_name="c")
    principal = {"consumer.override.security.protocol": "SASL_SSL"}
    conf = consumer_config({"connector.client.config.override.policy": "Principal"}, principal, connector_name="c")
    assert conf["security.protocol"] == "SASL_SSL"


# --------------------------------------------------------------------------
# SASL / JAAS
# --------------------------------------------------------------------------
def test_plain_jaas_becomes_username_password():
    worker = {
        "security.protocol": "SASL_SSL",
        "sasl.mechanism": "PLAIN",
        "sasl.jaas.config": (
            'org.apache.kafka.common.security.plain.PlainLoginModule required username="alice" password="s3cr=t;x";'
        ),
    }
    conf = consumer_config(worker, {}, connector_name="c")
    assert conf["sasl.username"] == "alice"
    assert conf["sasl.password"] == "s3cr=t;x"
    assert conf["sasl.mechanism"] == "PLAIN"
    assert "sasl.jaas.config" not in conf


def test_scram_jaas_with_escapes_and_unquoted_values():
    module, options = parse_jaas_config(
        'org.apache.kafka.common.security.scram.ScramLoginModule required\n'
        '  username=bob password="pa\\"ss\\\\word";'
    )
    assert module == "org.apache.kafka.common.security.scram.ScramLoginModule"
    assert options == {"username": "bob", "password": 'pa"ss\\word'}


def test_consumer_jaas_overrides_worker_jaas():
    plain = "org.apache.kafka.common.security.plain.PlainLoginModule required username=\"{}\" password=\"{}\";"
    worker = {
        "sasl.jaas.config": plain.format("worker", "w"),
        "consumer.sasl.jaas.config": plain.format("consumer", "c"),
    }
    connector = {"consumer.override.sasl.jaas.config": plain.format("connector", "x")}
    assert consumer_config(worker, {}, connector_name="c")["sasl.username"] == "consumer"
    assert consumer_config(worker, connector, connector_name="c")["sasl.password"] == "x"


def test_oauthbearer_oidc_jaas():
    worker = {
        "sasl.mechanism": "OAUTHBEARER",
        "sasl.oauthbearer.token.endpoint.url": "https://idp/token",
        "sasl.jaas.config": "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required "
        'clientId="id" clientSecret="secret" scope="kafka";',
    }
    conf = consumer_config(worker, {}, connector_name="c")
    assert conf["sasl.oauthbearer.method"] == "oidc"
    assert conf["sasl.oauthbearer.client.id"] == "id"
    assert conf["sasl.oauthbearer.client.secret"] == "secret"
    assert conf["sasl.oauthbearer.scope"] == "kafka"
    assert conf["sasl.oauthbearer.token.endpoint.url"] == "https://idp/token"


@pytest.mark.parametrize(
    "jaas, message",
    [
        ("software.amazon.msk.auth.iam.IAMLoginModule required;", "IAMLoginModule"),
        ("org.apache.kafka.common.security.plain.PlainLoginModule required username=\"a\";", "password"),
        ("username=a password=b", "required"),
        ("org.apache.kafka.common.security.plain.PlainLoginModule required username=\"a\" password=\"b\"", "';'"),
    ],
)
def test_bad_jaas_is_a_config_error(jaas, message):
    with pytest.raises(KafkaConfigError, match=message):
        consumer_config({"sasl.jaas.config": jaas}, {}, connector_name="c")


# --------------------------------------------------------------------------
# SSL stores
# --------------------------------------------------------------------------
def test_pem_truststore_maps_to_ca_location(tmp_path):
    ca = tmp_path / "ca.pem"
    ca.write_text(PEM_CERT)
    worker = {
        "security.protocol": "SSL",
        "ssl.truststore.type": "PEM",
        "ssl.truststore.location": str(ca),
        "ssl.truststore.password": "x",
    }
    conf = consumer_config(worker, {}, connector_name="c")
    assert conf["ssl.ca.location"] == str(ca)
    assert not any(key.startswith("ssl.truststore") for key in conf)


def test_truststore_type_is_sniffed_when_not_declared(tmp_path):
    ca = tmp_path / "ca.crt"
    ca.write_text(PEM_CERT)
    conf = consumer_config({"ssl.truststore.location": str(ca)}, {}, connector_name="c")
    assert conf["ssl.ca.location"] == str(ca)


@pytest.mark.parametrize("declared", ["JKS", "PKCS12", None])
def test_truststore_librdkafka_cannot_read_is_a_value_error(tmp_path, declared):
    store = tmp_path / "truststore.jks"
    store.write_bytes(b"\xfe\xed\xfe\xed" + b"\x00" * 60)
    worker = {"ssl.truststore.location": str(store)}
    if declared:
        worker["ssl.truststore.type"] = declared
    with pytest.raises(ValueError, match=r"ssl\.truststore\.location.*PEM"):
        consumer_config(worker, {}, connector_name="c")


def test_keystores(tmp_path):
    pem = tmp_path / "client.pem"
    pem.write_text(PEM_CERT)
    conf = consumer_config(
        {"ssl.keystore.type": "PEM", "ssl.keystore.location": str(pem), "ssl.key.password": "k"}, {}, connector_name="c"
    )
    assert conf["ssl.certificate.location"] == str(pem)
    assert conf["ssl.key.location"] == str(pem)
    assert conf["ssl.key.password"] == "k"

    p12 = tmp_path / "client.p12"
    p12.write_bytes(b"\x30\x82\x01\x00")
    conf = consumer_config({"ssl.keystore.location": str(p12), "ssl.keystore.password": "pw"}, {}, connector_name="c")
    assert conf["ssl.keystore.location"] == str(p12)
    assert conf["ssl.keystore.password"] == "pw"

    with pytest.raises(ValueError, match=r"ssl\.keystore\.location"):
        consumer_config({"ssl.keystore.type": "JKS", "ssl.keystore.location": str(p12)}, {}, connector_name="c")


def test_inline_pem_stores_and_native_keys_win():
    worker = {
        "ssl.truststore.type": "PEM",
        "ssl.truststore.certificates": PEM_CERT,
        "ssl.keystore.certificate.chain": "chain",
        "ssl.keystore.key": "key",
    }
    conf = consumer_config(worker, {}, connector_name="c")
    assert (conf["ssl.ca.pem"], conf["ssl.certificate.pem"], conf["ssl.key.pem"]) == (PEM_CERT, "chain", "key")
    conf = consumer_config({**worker, "consumer.ssl.ca.pem": "native"}, {}, connector_name="c")
    assert conf["ssl.ca.pem"] == "native"


# --------------------------------------------------------------------------
# Admin configuration
# --------------------------------------------------------------------------
def test_admin_config_layers_and_filters():
    worker = {"bootstrap.servers": "b:1", "admin.client.id": "adm", "admin.retries": "5"}
    connector = {"admin.override.metadata.max.age.ms": "1000"}
    conf = admin_config(worker, connector, connector_name="c")
    assert conf == {"bootstrap.servers": "b:1", "client.id": "adm", "metadata.max.age.ms": "1000"}
    consumer = consumer_config(worker, {}, connector_name="c")
    derived = admin_config_from(consumer)
    assert "group.id" not in derived and "queued.min.messages" not in derived
    assert derived["bootstrap.servers"] == "b:1"


# --------------------------------------------------------------------------
# The result is accepted by librdkafka and reads from a real broker
# --------------------------------------------------------------------------
def test_translated_config_is_accepted_by_librdkafka(kafka_broker):
    topic = "client-config-accepted"
    create_topic(kafka_broker.bootstrap, topic)
    produce(kafka_broker.bootstrap, topic, [b"one", b"two"])
    worker = {
        "bootstrap.servers": kafka_broker.bootstrap,
        "consumer.key.deserializer": "org.apache.kafka.common.serialization.ByteArrayDeserializer",
        "consumer.max.poll.records": "10",
        "consumer.fetch.max.wait.ms": "100",
        "consumer.request.timeout.ms": "30000",
        "consumer.client.dns.lookup": "use_all_dns_ips",
    }
    conf = consumer_config(worker, {"consumer.override.check.crcs": "true"}, connector_name="accepted")
    consumer = Consumer(conf)
    try:
        consumer.assign([TopicPartition(topic, 0, 0)])
        values = [m.value() for m in consumer.consume(2, timeout=10)]
    finally:
        consumer.close()
    assert values == [b"one", b"two"]
