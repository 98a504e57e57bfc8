"""Basic auth as Connect's BasicAuthSecurityRestExtension, and the worker served over HTTPS by uvicorn."""

from __future__ import annotations

import base64
import socket
import ssl
import threading
from contextlib import contextmanager

import httpx
import pytest
import uvicorn
from fastapi import FastAPI
from fastapi.testclient import TestClient
from starlette.responses import PlainTextResponse

from connector.api.errors import ConfigException
from connector.rest.listeners import Listener, uvicorn_ssl_options
from connector.rest.security import BASIC_AUTH_EXTENSION, install_security
from tests.support.certificates import issue, make_ca, write_pem_store, write_pkcs12_store

ROUTES = [("GET", "/"), ("GET", "/health"), ("GET", "/connectors"), ("POST", "/connectors"),
          ("PUT", "/connectors/c/config"), ("DELETE", "/connectors/c"), ("GET", "/metrics"),
          ("GET", "/no/such/route")]


def _app() -> FastAPI:
    app = FastAPI()

    @app.get("/")
    def root():
        return {"version": "3.9.0"}

    @app.get("/health")
    def health():
        return {"status": "healthy"}

    @app.get("/connectors")
    def names():
        return []

    @app.post("/connectors")
    def create():
        return {"name": "c"}

    @app.put("/connectors/{name}/config")
    def put(name: str):
        return {"name": name}

    @app.delete("/connectors/{name}")
    def delete(name: str):
        return None

    app.mount("/metrics", PlainTextResponse("icefloe_up 1\n"))
    return app


def _basic(user: str, password: str) -> dict[str, str]:
    return {"Authorization": "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()}


@pytest.fixture
def credentials(tmp_path):
    creds = tmp_path / "connect.password"
    creds.write_text("# users\nalice: wonderland\nbob=builder=yes\n")
    jaas = tmp_path / "connect.jaas"
    jaas.write_text(f"""// the REST API's users
KafkaConnect {{
    org.apache.kafka.connect.rest.basic.auth.extension.PropertyFileLoginModule required
    file="{creds}";
}};
Other {{ com.example.Nothing required; }};
""")
    return {"rest.extension.classes": BASIC_AUTH_EXTENSION, "rest.basic.auth.jaas.file": str(jaas)}


@pytest.fixture
def client(credentials):
    app = _app()
    install_security(app, credentials)
    return TestClient(app)


@pytest.mark.parametrize("method, path", ROUTES)
@pytest.mark.parametrize("headers", [
    {},
    _basic("alice", "wrong"),
    _basic("mallory", "wonderland"),
    _basic("alice", ""),
    {"Authorization": "Bearer abc"},
    {"Authorization": "Basic !!!not-base64"},
    {"Authorization": "Basic " + base64.b64encode(b"alice").decode()},
], ids=["none", "wrong-password", "unknown-user", "empty-password", "bearer", "bad-base64", "no-colon"])
def test_every_route_answers_401_without_valid_credentials(client, method, path, headers):
    response = client.request(method, path, headers=headers)

    assert response.status_code == 401
    assert response.content == b"User cannot access the resource."
    assert "www-authenticate" not in response.headers


@pytest.mark.parametrize("method, path", [route for route in ROUTES if route[1] != "/no/such/route"])
def test_every_route_answers_with_valid_credentials(client, method, path):
    assert client.request(method, path, headers=_basic("alice", "wonderland")).status_code == 200
    assert client.request(method, path, headers=_basic("bob", "builder=yes")).status_code == 200


def test_an_unknown_route_with_valid_credentials_is_the_apps_404(client):
    assert client.get("/no/such/route", headers=_basic("alice", "wonderland")).status_code == 404


def test_the_jaas_file_from_kafka_opts(credentials):
    app = _app()
    worker = {"rest.extension.classes": BASIC_AUTH_EXTENSION}
    install_security(app, worker, environ={
        "KAFKA_OPTS": f"-Xmx1g -Djava.security.auth.login.config={credentials['rest.basic.auth.jaas.file']}"})
    client = TestClient(app)

    assert client.get("/").status_code == 401
    assert client.get("/", headers=_basic("alice", "wonderland")).status_code == 200


def test_an_empty_credentials_file_permits_every_request_as_in_connect(tmp_path):
    (tmp_path / "empty.password").write_text("# nobody\n")
    (tmp_path / "connect.jaas").write_text(
        "KafkaConnect { org.apache.kafka.connect.rest.basic.auth.extension.PropertyFileLoginModule required "
        f'file="{tmp_path}/empty.password"; }};')
    app = _app()
    install_security(app, {"rest.extension.classes": BASIC_AUTH_EXTENSION,
                           "rest.basic.auth.jaas.file": str(tmp_path / "connect.jaas")})

    assert TestClient(app).get("/connectors").status_code == 200


def test_without_the_extension_nothing_changes():
    app = _app()
    install_security(app, {})

    assert TestClient(app).get("/connectors").status_code == 200


@pytest.mark.parametrize("worker, environ, message", [
    ({"rest.extension.classes": BASIC_AUTH_EXTENSION}, {}, "needs a JAAS file"),
    ({"rest.extension.classes": "com.example.MyExtension"}, {}, "rest.extension.classes"),
    ({"rest.extension.classes": BASIC_AUTH_EXTENSION, "rest.basic.auth.jaas.file": "/nonexistent.jaas"}, {},
     "Cannot read the JAAS file"),
])
def test_unusable_auth_settings_fail_at_start(worker, environ, message):
    with pytest.raises(ConfigException, match=message):
        install_security(_app(), worker, environ=environ)


def test_a_jaas_file_without_the_kafkaconnect_section_or_with_another_module(tmp_path):
    jaas = tmp_path / "connect.jaas"
    worker = {"rest.extension.classes": BASIC_AUTH_EXTENSION, "rest.basic.auth.jaas.file": str(jaas)}
    jaas.write_text('Other { org.apache.kafka.connect.rest.basic.auth.extension.PropertyFileLoginModule '
                    'required file="/x"; };')
    with pytest.raises(ConfigException, match="no KafkaConnect section"):
        install_security(_app(), worker)

    jaas.write_text("KafkaConnect { com.sun.security.auth.module.LdapLoginModule required userProvider=\"x\"; };")
    with pytest.raises(ConfigException, match="LdapLoginModule"):
        install_security(_app(), worker)


# --------------------------------------------------------------------------
# A real uvicorn server on a loopback port, over HTTPS
# --------------------------------------------------------------------------
@pytest.fixture(scope="module")
def pki():
    ca = make_ca()
    return ca, issue(ca, "worker", server=True), issue(ca, "operator", server=False)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextmanager
def _serving(app, worker):
    listener = Listener("https", "127.0.0.1", _free_port())
    config = uvicorn.Config(app, host=listener.bind_host, port=listener.port, log_level="warning",
                            **uvicorn_ssl_options(worker, listener))
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        while not server.started:
            if not thread.is_alive():
                raise RuntimeError("uvicorn did not start")
            threading.Event().wait(0.05)
        yield f"https://127.0.0.1:{listener.port}"
    finally:
        server.should_exit = True
        thread.join()


def _trusting(ca, client=None) -> ssl.SSLContext:
    context = ssl.create_default_context(cadata=ca.cert_pem().decode())
    if client is not None:
        context.load_cert_chain(*client)
    return context


def test_https_with_a_pkcs12_store_and_basic_auth(tmp_path, pki, credentials):
    ca, server, _ = pki
    store = write_pkcs12_store(tmp_path / "server.p12", server, ca, b"storepass")
    worker = {**credentials, "listeners": "https://127.0.0.1:0",
              "listeners.https.ssl.keystore.type": "PKCS12", "listeners.https.ssl.keystore.location": str(store),
              "listeners.https.ssl.keystore.password": "storepass"}
    app = _app()
    install_security(app, worker)

    with _serving(app, worker) as url:
        with httpx.Client(verify=_trusting(ca)) as http:
            denied = http.get(f"{url}/connectors")
            allowed = http.get(f"{url}/connectors", auth=("alice", "wonderland"))
        with pytest.raises(httpx.ConnectError):  # the certificate is checked: an untrusting client refuses it
            httpx.get(f"{url}/", verify=ssl.create_default_context())

    assert (denied.status_code, denied.text) == (401, "User cannot access the resource.")
    assert (allowed.status_code, allowed.json()) == (200, [])


def test_https_requiring_client_certificates(tmp_path, pki):
    ca, server, operator = pki
    store = write_pem_store(tmp_path / "server.pem", server, ca)
    (tmp_path / "ca.pem").write_bytes(ca.cert_pem())
    (tmp_path / "operator.crt").write_bytes(operator.cert_pem())
    (tmp_path / "operator.key").write_bytes(operator.key_pem())
    worker = {"ssl.keystore.type": "PEM", "ssl.keystore.location": str(store),
              "ssl.truststore.type": "PEM", "ssl.truststore.location": str(tmp_path / "ca.pem"),
              "ssl.client.auth": "required"}

    with _serving(_app(), worker) as url:
        identified = httpx.get(f"{url}/health", verify=_trusting(
            ca, (str(tmp_path / "operator.crt"), str(tmp_path / "operator.key"))))
        with pytest.raises(httpx.HTTPError):
            httpx.get(f"{url}/health", verify=_trusting(ca))

    assert identified.json() == {"status": "healthy"}
