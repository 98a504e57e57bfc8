"""The Schema Registry client: config keys, caching, retries, fail-over, auth and TLS."""

from __future__ import annotations

import datetime
import json
import socket
import ssl

import pytest

from connector.api.errors import ConfigException, DataException
from converters.confluent.registry_client import (
    SchemaNotFoundException,
    SchemaRegistryClient,
    SchemaRegistryException,
    SchemaRegistryUnavailableException,
    SubjectNotFoundException,
)
from tests.confluent import unique
from tests.support.schema_registry import SchemaRegistryServer

SCHEMA = json.dumps({"type": "record", "name": "C", "fields": [{"name": "a", "type": "int"}]})


def closed_port_url() -> str:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return f"http://127.0.0.1:{port}"


def client(url: str, **config) -> SchemaRegistryClient:
    sleeps: list[float] = []
    c = SchemaRegistryClient.from_config({"schema.registry.url": url, "retries.wait.ms": "10",
                                          **config}, sleep=sleeps.append)
    c.sleeps = sleeps  # type: ignore[attr-defined]
    return c


def test_url_is_required():
    with pytest.raises(ConfigException, match='"schema.registry.url"'):
        SchemaRegistryClient.from_config({})
    with pytest.raises(ConfigException, match="schema.registry.url"):
        SchemaRegistryClient.from_config({"schema.registry.url": "ftp://x"})


def test_register_fetch_and_cache(schema_registry):
    c = client(schema_registry.url)
    subject = unique("client")
    schema_id = c.register(subject, SCHEMA)
    before = len(schema_registry.requests)
    first = c.get_schema(schema_id)
    again = c.get_schema(schema_id)
    assert first is again and first.schema_type == "AVRO" and json.loads(first.schema) == \
        json.loads(SCHEMA)
    assert len(schema_registry.requests) == before + 1
    found = c.lookup_schema(subject, SCHEMA)
    assert found.version == 1 and found.id == schema_id
    assert c.get_latest_version(subject).id == schema_id
    assert c.get_subject_versions(subject) == [1]


def test_schema_not_found_names_the_id(schema_registry):
    c = client(schema_registry.url)
    with pytest.raises(SchemaNotFoundException, match="Schema 424242 not found") as info:
        c.get_schema(424242)
    assert isinstance(info.value, DataException)
    assert info.value.status == 404 and info.value.error_code == 40403
    with pytest.raises(SubjectNotFoundException):
        c.lookup_schema(unique("none"), SCHEMA)


def test_unreachable_registry_is_retried_with_backoff_then_fails_clearly():
    url = closed_port_url()
    c = client(url, **{"max.retries": "3"})
    with pytest.raises(SchemaRegistryUnavailableException) as info:
        c.get_schema(1)
    message = str(info.value)
    assert isinstance(info.value, DataException)
    assert url in message and "fetching schema 1" in message and "4 attempt(s)" in message
    assert c.sleeps == [0.01, 0.02, 0.04]  # exponential backoff between the rounds


def test_backoff_is_capped():
    c = client(closed_port_url(), **{"max.retries": "4", "retries.wait.ms": "100",
                                      "retries.max.wait.ms": "250"})
    with pytest.raises(SchemaRegistryUnavailableException):
        c.get_subject_versions("x")
    assert c.sleeps == [0.1, 0.2, 0.25, 0.25]


def test_5xx_is_retried(schema_registry):
    c = client(schema_registry.url)
    schema_id = c.register(unique("retry"), SCHEMA)
    fresh = client(schema_registry.url)
    schema_registry.inject_failures(2, 503, path_prefix=f"/schemas/ids/{schema_id}")
    assert fresh.get_schema(schema_id).id == schema_id
    assert fresh.sleeps == [0.01, 0.02]
    schema_registry.inject_failures(5, 500, path_prefix=f"/schemas/ids/{schema_id}")
    failing = client(schema_registry.url, **{"max.retries": "1"})
    try:
        with pytest.raises(SchemaRegistryUnavailableException, match="HTTP 500"):
            failing.get_schema(schema_id)
    finally:
        schema_registry.clear_failures()


def test_4xx_is_not_retried(schema_registry):
    c = client(schema_registry.url)
    before = len(schema_registry.requests)
    with pytest.raises(SchemaRegistryException) as info:
        c.get_version(unique("nosubject"), 1)
    assert info.value.error_code == 40401
    assert len(schema_registry.requests) == before + 1 and c.sleeps == []


def test_fail_over_to_the_next_url(schema_registry):
    dead = closed_port_url()
    c = client(f"{dead}, {schema_registry.url}")
    schema_id = c.register(unique("failover"), SCHEMA)
    assert c.get_schema(schema_id).id == schema_id
    assert c.sleeps == []  # the second URL answered in the first round


@pytest.fixture(scope="module")
def secured_registry():
    with SchemaRegistryServer(users={"alice": "s3cret"}) as registry:
        yield registry


def test_basic_auth_user_info(secured_registry):
    ok = client(secured_registry.url, **{"basic.auth.credentials.source": "USER_INFO",
                                          "basic.auth.user.info": "alice:s3cret"})
    ok.register(unique("auth"), SCHEMA)
    bad = client(secured_registry.url, **{"basic.auth.credentials.source": "USER_INFO",
                                           "basic.auth.user.info": "alice:nope"})
    with pytest.raises(SchemaRegistryException, match="basic.auth") as info:
        bad.get_subject_versions("x")
    assert info.value.status == 401
    anonymous = client(secured_registry.url)
    with pytest.raises(SchemaRegistryException, match="HTTP 401"):
        anonymous.get_subject_versions("x")
    with pytest.raises(ConfigException, match="basic.auth.user.info"):
        client(secured_registry.url, **{"basic.auth.credentials.source": "USER_INFO"})


def test_basic_auth_from_url_and_sasl_inherit(secured_registry):
    with_creds = secured_registry.url.replace("http://", "http://alice:s3cret@")
    c = client(with_creds)
    c.register(unique("auth-url"), SCHEMA)
    wrong = client(secured_registry.url.replace("http://", "http://alice:leaked@"))
    with pytest.raises(SchemaRegistryException) as info:
        wrong.get_subject_versions("x")
    assert "leaked" not in str(info.value)  # credentials never appear in messages
    jaas = ('org.apache.kafka.common.security.plain.PlainLoginModule required '
            'username="alice" password="s3cret";')
    sasl = client(secured_registry.url, **{"basic.auth.credentials.source": "SASL_INHERIT",
                                            "sasl.jaas.config": jaas})
    sasl.register(unique("auth-sasl"), SCHEMA)
    with pytest.raises(ConfigException, match="sasl.jaas.config"):
        client(secured_registry.url, **{"basic.auth.credentials.source": "SASL_INHERIT"})
    with pytest.raises(ConfigException, match="basic.auth.credentials.source"):
        client(secured_registry.url, **{"basic.auth.credentials.source": "KERBEROS"})


# --- TLS ------------------------------------------------------------------------------------------

def _certificate(common_name: str, issuer_key=None, issuer_name=None, ca: bool = False):
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])
    now = datetime.datetime.now(datetime.timezone.utc)
    builder = (x509.CertificateBuilder().subject_name(name)
               .issuer_name(issuer_name or name).public_key(key.public_key())
               .serial_number(x509.random_serial_number())
               .not_valid_before(now - datetime.timedelta(days=1))
               .not_valid_after(now + datetime.timedelta(days=1))
               .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True))
    if not ca:
        builder = builder.add_extension(
            x509.SubjectAlternativeName([x509.DNSName("localhost"),
                                         x509.IPAddress(__import__("ipaddress").ip_address(
                                             "127.0.0.1"))]), critical=False)
    cert = builder.sign(issuer_key or key, hashes.SHA256())
    return key, cert


def _pem(key=None, cert=None, password: bytes | None = None) -> bytes:
    from cryptography.hazmat.primitives import serialization

    out = b""
    if cert is not None:
        out += cert.public_bytes(serialization.Encoding.PEM)
    if key is not None:
        enc = serialization.BestAvailableEncryption(password) if password \
            else serialization.NoEncryption()
        out += key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, enc)
    return out


@pytest.fixture(scope="module")
def tls(tmp_path_factory):
    d = tmp_path_factory.mktemp("tls")
    ca_key, ca_cert = _certificate("test-ca", ca=True)
    server_key, server_cert = _certificate("localhost", ca_key, ca_cert.subject)
    client_key, client_cert = _certificate("client", ca_key, ca_cert.subject)
    (d / "ca.pem").write_bytes(_pem(cert=ca_cert))
    (d / "server.pem").write_bytes(_pem(server_key, server_cert))
    (d / "client.pem").write_bytes(_pem(client_key, client_cert, password=b"kpw"))
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(d / "server.pem")
    context.load_verify_locations(d / "ca.pem")
    context.verify_mode = ssl.CERT_REQUIRED  # mutual TLS
    with SchemaRegistryServer(ssl_context=context) as registry:
        yield registry, d


def test_tls_with_trust_store_and_client_certificate(tls):
    registry, d = tls
    assert registry.url.startswith("https://")
    c = client(registry.url, **{
        "schema.registry.ssl.truststore.location": str(d / "ca.pem"),
        "schema.registry.ssl.truststore.type": "PEM",
        "schema.registry.ssl.keystore.location": str(d / "client.pem"),
        "schema.registry.ssl.keystore.type": "PEM",
        "schema.registry.ssl.key.password": "kpw",
    })
    schema_id = c.register(unique("tls"), SCHEMA)
    assert c.get_schema(schema_id).id == schema_id
    # the same by IP with host name checks off
    no_host_check = client(registry.url.replace("127.0.0.1", "localhost"), **{
        "schema.registry.ssl.truststore.certificates": (d / "ca.pem").read_text(),
        "schema.registry.ssl.keystore.location": str(d / "client.pem"),
        "schema.registry.ssl.key.password": "kpw",
        "schema.registry.ssl.endpoint.identification.algorithm": "",
    })
    assert no_host_check.get_schema(schema_id).id == schema_id


def test_tls_failures_are_clear(tls):
    registry, d = tls
    untrusted = client(registry.url, **{"max.retries": "0"})
    with pytest.raises(SchemaRegistryException, match="TLS"):
        untrusted.get_schema(1)
    with pytest.raises(ConfigException, match="PEM"):
        client(registry.url, **{"schema.registry.ssl.truststore.location": "/x.jks",
                                 "schema.registry.ssl.truststore.type": "JKS"})
    with pytest.raises(ConfigException, match="truststore"):
        client(registry.url, **{"schema.registry.ssl.truststore.location": str(d / "missing.pem")})
