"""Listeners, the advertised URL / worker id, and TLS options, from worker properties as Connect reads them."""

from __future__ import annotations

import os
import socket
import ssl
import stat

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import serialization

from connector.api.errors import ConfigException
from connector.rest.listeners import Listener, advertised_url, listeners, uvicorn_ssl_options, worker_id
from tests.support.certificates import (
    issue,
    make_ca,
    write_pem_store,
    write_pkcs12_store,
    write_pkcs12_trust_store,
)


@pytest.fixture(scope="module")
def ca():
    return make_ca()


@pytest.fixture(scope="module")
def server(ca):
    return issue(ca, "worker", server=True)


def test_default_listener_is_every_interface_on_8083():
    assert listeners({}) == [Listener("http", "", 8083)]
    assert listeners({})[0].bind_host == "0.0.0.0"


def test_listeners_are_parsed_in_order():
    found = listeners({"listeners": "HTTP://127.0.0.1:8083, https://[::1]:8443,http://:0"})

    assert found == [Listener("http", "127.0.0.1", 8083), Listener("https", "::1", 8443), Listener("http", "", 0)]
    assert str(found[1]) == "https://[::1]:8443"


def test_the_pre_3_0_rest_host_and_port_keys_apply_without_listeners():
    assert listeners({"rest.host.name": "10.0.0.5", "rest.port": "9000"}) == [Listener("http", "10.0.0.5", 9000)]
    assert listeners({"rest.port": "9000"}) == [Listener("http", "", 9000)]
    assert listeners({"listeners": "http://:1", "rest.port": "9000"}) == [Listener("http", "", 1)]


@pytest.mark.parametrize("spec, message", [
    ("localhost:8083", "Listener doesn't have the right format (protocol://hostname:port)."),
    ("http://localhost", "Listener doesn't have the right format"),
    ("ftp://localhost:21", 'Listener protocol must be either "http" or "https".'),
    ("http://localhost:70000", "between 0 and 65535"),
    (" , ", "Empty list"),
])
def test_bad_listeners_name_the_key(spec, message):
    with pytest.raises(ConfigException) as raised:
        listeners({"listeners": spec})
    assert "configuration listeners" in str(raised.value) and message in str(raised.value)


def test_worker_id_of_an_explicit_listener_is_its_host_and_port():
    # as the reference Connect 3.9 worker answered: listeners=http://127.0.0.1:33285 -> "127.0.0.1:33285"
    worker = {"listeners": "http://127.0.0.1:33285"}

    assert advertised_url(worker) == "http://127.0.0.1:33285"
    assert worker_id(worker) == "127.0.0.1:33285"


def test_an_empty_host_advertises_this_machines_address():
    address = socket.gethostbyname(socket.gethostname())

    assert worker_id({}) == f"{address}:8083"
    assert worker_id({"listeners": "http://:0"}, Listener("http", "", 41234)) == f"{address}:41234"


def test_rest_advertised_keys_override_the_listener():
    worker = {"listeners": "http://0.0.0.0:8083,https://0.0.0.0:8443",
              "rest.advertised.host.name": "connect-1.example.com", "rest.advertised.port": "443",
              "rest.advertised.listener": "https"}

    assert advertised_url(worker) == "https://connect-1.example.com:443"
    assert worker_id(worker) == "connect-1.example.com:443"


def test_the_advertised_listener_is_http_when_there_is_one_else_https():
    assert advertised_url({"listeners": "https://h1:8443,http://h2:8083"}) == "http://h2:8083"
    assert advertised_url({"listeners": "https://h1:8443"}) == "https://h1:8443"
    assert advertised_url({"listeners": "http://h2:8083", "rest.advertised.listener": "https",
                           "rest.advertised.host.name": "h3"}) == "https://h3:8083"
    assert worker_id({"listeners": "http://[::1]:8083"}) == "[::1]:8083"


def test_an_http_listener_has_no_ssl_options():
    assert uvicorn_ssl_options({"ssl.keystore.location": "/x"}, Listener("http", "", 8083)) == {}


def test_a_pem_key_store(tmp_path, ca, server):
    store = write_pem_store(tmp_path / "server.pem", server, ca)
    worker = {"listeners.https.ssl.keystore.type": "PEM", "listeners.https.ssl.keystore.location": str(store)}

    options = uvicorn_ssl_options(worker, Listener("https", "", 8443))

    assert options["ssl_certfile"] == options["ssl_keyfile"] == str(store)
    assert options["ssl_cert_reqs"] == ssl.CERT_NONE
    assert "ssl_ca_certs" not in options
    _loads(options)


def test_inline_pem_key_store_and_trust_store(ca, server):
    worker = {"ssl.keystore.type": "PEM",
              "ssl.keystore.certificate.chain": (server.cert_pem() + ca.cert_pem()).decode(),
              "ssl.keystore.key": server.key_pem(b"keypass").decode(), "ssl.key.password": "keypass",
              "ssl.truststore.type": "PEM", "ssl.truststore.certificates": ca.cert_pem().decode(),
              "ssl.client.auth": "requested"}

    options = uvicorn_ssl_options(worker, Listener("https", "", 8443))

    assert options["ssl_cert_reqs"] == ssl.CERT_OPTIONAL
    for key in ("ssl_certfile", "ssl_keyfile", "ssl_ca_certs"):
        assert stat.S_IMODE(os.stat(options[key]).st_mode) == 0o600
    _loads(options)


def test_a_pkcs12_key_store_becomes_private_pem_files(tmp_path, ca, server):
    store = write_pkcs12_store(tmp_path / "server.p12", server, ca, b"storepass")
    trust = write_pkcs12_trust_store(tmp_path / "trust.p12", ca, b"trustpass")
    worker = {"listeners.https.ssl.keystore.type": "PKCS12", "listeners.https.ssl.keystore.location": str(store),
              "listeners.https.ssl.keystore.password": "storepass",
              "listeners.https.ssl.truststore.type": "PKCS12", "listeners.https.ssl.truststore.location": str(trust),
              "listeners.https.ssl.truststore.password": "trustpass", "listeners.https.ssl.client.auth": "required"}

    options = uvicorn_ssl_options(worker, Listener("https", "", 8443))

    assert options["ssl_cert_reqs"] == ssl.CERT_REQUIRED
    for key in ("ssl_certfile", "ssl_keyfile", "ssl_ca_certs"):
        assert stat.S_IMODE(os.stat(options[key]).st_mode) == 0o600
    with open(options["ssl_keyfile"], "rb") as handle:
        key_pem = handle.read()
    assert b"ENCRYPTED" in key_pem  # the converted key is not on disk in the clear
    key = serialization.load_pem_private_key(key_pem, options["ssl_keyfile_password"].encode())
    assert key.public_key() == server.key.public_key()
    with open(options["ssl_certfile"], "rb") as handle:
        assert x509.load_pem_x509_certificates(handle.read()) == [server.cert, ca.cert]
    with open(options["ssl_ca_certs"], "rb") as handle:
        assert x509.load_pem_x509_certificates(handle.read()) == [ca.cert]
    _loads(options)


def test_listeners_https_keys_replace_the_workers_ssl_keys_all_or_nothing(tmp_path, ca, server):
    store = write_pem_store(tmp_path / "server.pem", server, ca)
    worker = {"ssl.truststore.location": "/kafka/client/truststore.jks", "ssl.client.auth": "required",
              "listeners.https.ssl.keystore.location": str(store)}

    options = uvicorn_ssl_options(worker, Listener("https", "", 8443))

    assert options["ssl_certfile"] == str(store) and options["ssl_cert_reqs"] == ssl.CERT_NONE


def test_a_jks_store_is_refused_with_the_keytool_conversion(tmp_path):
    store = tmp_path / "server.jks"
    store.write_bytes(b"\xfe\xed\xfe\xed" + b"\0" * 60)

    with pytest.raises(ConfigException) as raised:
        uvicorn_ssl_options({"listeners.https.ssl.keystore.location": str(store)}, Listener("https", "", 8443))

    message = str(raised.value)
    assert "listeners.https.ssl.keystore.location" in message and "JKS" in message
    assert "keytool -importkeystore" in message and "PKCS12" in message


@pytest.mark.parametrize("worker, message", [
    ({}, "An https listener needs a key store"),
    ({"ssl.keystore.type": "PKCS12", "ssl.keystore.location": "STORE", "ssl.keystore.password": "wrong"},
     "is not a PKCS12 store or ssl.keystore.password is wrong"),
    ({"ssl.keystore.type": "PEM", "ssl.keystore.location": "PEM", "ssl.client.auth": "required"},
     "client certificates need a trust store"),
    ({"ssl.keystore.type": "PEM", "ssl.keystore.location": "PEM", "ssl.client.auth": "sometimes"},
     "ssl.client.auth"),
])
def test_unusable_tls_settings_are_config_errors(tmp_path, ca, server, worker, message):
    store = write_pkcs12_store(tmp_path / "server.p12", server, ca, b"storepass")
    pem = write_pem_store(tmp_path / "server.pem", server, ca)
    worker = {key: value.replace("STORE", str(store)).replace("PEM", str(pem)) if key.endswith("location") else value
              for key, value in worker.items()}

    with pytest.raises(ConfigException, match=message):
        uvicorn_ssl_options(worker, Listener("https", "", 8443))


def _loads(options):
    """The files and password are what an SSL server context accepts (what uvicorn does with them)."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(options["ssl_certfile"], options["ssl_keyfile"], options.get("ssl_keyfile_password"))
    if "ssl_ca_certs" in options:
        context.load_verify_locations(options["ssl_ca_certs"])
