"""Where the REST worker listens and how it names itself, from the worker properties as Connect reads them.

* ``listeners``: comma-separated ``http://host:port`` / ``https://host:port``; an empty host means
  every interface. Default ``http://:8083``, as Connect's. The pre-3.0 ``rest.host.name`` and
  ``rest.port`` keys are read when ``listeners`` is absent.
* ``rest.advertised.listener`` / ``rest.advertised.host.name`` / ``rest.advertised.port``: the URL
  other workers and tools are told, formed as Connect's ``RestServer.advertisedUrl``; the worker id in
  status answers is that URL's ``host:port``.
* ``listeners.https.ssl.*`` (all or nothing, else the worker's ``ssl.*``): the TLS key store, trust
  store and ``ssl.client.auth`` of https listeners, turned into uvicorn's ``ssl_*`` options. PEM and
  PKCS12 stores are read; a PKCS12 store is converted to PEM files only the current user can read.
"""

from __future__ import annotations

import atexit
import os
import re
import secrets
import socket
import ssl
import tempfile
from dataclasses import dataclass
from typing import Any, Mapping

from connector.api.errors import ConfigException

DEFAULT_LISTENERS = "http://:8083"
HTTPS_PREFIX = "listeners.https."

# Connect's RestServer.LISTENER_PATTERN: protocol://host:port, the host optionally in [brackets] (IPv6).
_LISTENER = re.compile(r"^(.*)://\[?([0-9a-zA-Z\-%._:]*)\]?:(-?[0-9]+)$")


@dataclass(frozen=True)
class Listener:
    scheme: str  # "http" or "https"
    host: str  # "" = every interface
    port: int

    @property
    def bind_host(self) -> str:
        """The address uvicorn binds: every IPv4 interface for an empty host."""
        return self.host or "0.0.0.0"

    def __str__(self) -> str:
        return f"{self.scheme}://{_url_host(self.host)}:{self.port}"


def listeners(worker: Mapping[str, str]) -> list[Listener]:
    """The worker's listeners, in the order given."""
    spec = worker.get("listeners")
    if spec is None and ("rest.host.name" in worker or "rest.port" in worker):
        spec = f"http://{worker.get('rest.host.name', '').strip()}:{worker.get('rest.port', '8083').strip()}"
    items = [item.strip() for item in (spec if spec is not None else DEFAULT_LISTENERS).split(",")]
    if not any(items):
        raise ConfigException("listeners", spec, "Empty list")
    return [_parse_listener(item) for item in items if item]


def _parse_listener(text: str) -> Listener:
    match = _LISTENER.match(text)
    if not match:
        raise ConfigException("listeners", text, "Listener doesn't have the right format (protocol://hostname:port).")
    scheme = match.group(1).lower()
    if scheme not in ("http", "https"):
        raise ConfigException("listeners", text, 'Listener protocol must be either "http" or "https".')
    port = int(match.group(3))
    if not 0 <= port <= 65535:
        raise ConfigException("listeners", text, "the port must be between 0 and 65535")
    return Listener(scheme, match.group(2), port)


def advertised_listener(worker: Mapping[str, str]) -> Listener:
    """The listener Connect advertises: the first of the advertised protocol (http when there is one)."""
    found = listeners(worker)
    protocol = _advertised_protocol(worker)
    return next((item for item in found if item.scheme == protocol), found[0])


def _advertised_protocol(worker: Mapping[str, str]) -> str:
    declared = worker.get("rest.advertised.listener", "").strip().lower()
    if declared:
        return declared
    spec = worker.get("listeners", "").lower()
    if "http://" not in spec and "https://" in spec:
        return "https"
    return "http"


def advertised_url(worker: Mapping[str, str], listener: Listener | None = None) -> str:
    """``scheme://host:port`` as Connect's ``RestServer.advertisedUrl`` forms it.

    ``listener`` is the one actually bound (pass it when its port was 0 and the OS chose one);
    by default the advertised listener of :func:`advertised_listener`. An empty listener host is
    replaced by this machine's address, as Jetty's ``Server.getURI`` does; an explicit host (even
    ``0.0.0.0``) is advertised as given, as in Connect — set ``rest.advertised.host.name`` then.
    """
    listener = listener or advertised_listener(worker)
    scheme = worker.get("rest.advertised.listener", "").strip().lower() or listener.scheme
    host = worker.get("rest.advertised.host.name", "").strip() or listener.host or _local_address()
    port_text = worker.get("rest.advertised.port", "").strip()
    try:
        port = int(port_text) if port_text else listener.port
    except ValueError:
        raise ConfigException("rest.advertised.port", port_text, "Not a number of type INT") from None
    return f"{scheme}://{_url_host(host)}:{port}"


def worker_id(worker: Mapping[str, str], listener: Listener | None = None) -> str:
    """The ``worker_id`` of status answers: ``host:port`` of the advertised URL (Connect's ``URI.getHost``)."""
    return advertised_url(worker, listener).split("://", 1)[1]


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


def _local_address() -> str:
    """``InetAddress.getLocalHost().getHostAddress()``: this host name's address, else the name."""
    name = socket.gethostname()
    try:
        return socket.gethostbyname(name)
    except OSError:
        return name


# --------------------------------------------------------------------------
# TLS
# --------------------------------------------------------------------------
_CLIENT_AUTH = {"required": ssl.CERT_REQUIRED, "requested": ssl.CERT_OPTIONAL, "none": ssl.CERT_NONE}


def https_ssl_config(worker: Mapping[str, str]) -> dict[str, str]:
    """The ``ssl.*`` settings of https listeners: ``listeners.https.ssl.*`` if any is set, else ``ssl.*``.

    All or nothing, as Connect's ``valuesWithPrefixAllOrNothing``: a single ``listeners.https.`` key
    means the worker's own ``ssl.*`` keys (its Kafka client's) are not mixed in.
    """
    prefixed = {key[len(HTTPS_PREFIX):]: value for key, value in worker.items() if key.startswith(HTTPS_PREFIX)}
    if prefixed:
        return {key: value for key, value in prefixed.items() if key.startswith("ssl.")}
    return {key: value for key, value in worker.items() if key.startswith("ssl.")}


def uvicorn_ssl_options(worker: Mapping[str, str], listener: Listener) -> dict[str, Any]:
    """uvicorn's ``ssl_certfile``/``ssl_keyfile``/``ssl_keyfile_password``/``ssl_ca_certs``/``ssl_cert_reqs``.

    Empty for an http listener. Keys in messages are named as the user wrote them.
    """
    if listener.scheme != "https":
        return {}
    conf = https_ssl_config(worker)
    prefix = HTTPS_PREFIX if any(key.startswith(HTTPS_PREFIX) for key in worker) else ""
    options = _key_store(conf, prefix)
    auth = conf.get("ssl.client.auth", "none").strip().lower()
    if auth not in _CLIENT_AUTH:
        raise ConfigException(f"{prefix}ssl.client.auth", auth, "String must be one of: required, requested, none")
    options["ssl_cert_reqs"] = _CLIENT_AUTH[auth]
    ca_file = _trust_store(conf, prefix)
    if ca_file is not None:
        options["ssl_ca_certs"] = ca_file
    elif auth != "none":
        raise ConfigException(f"{prefix}ssl.client.auth", auth,
                              f"client certificates need a trust store ({prefix}ssl.truststore.location)")
    return options


def _key_store(conf: Mapping[str, str], prefix: str) -> dict[str, Any]:
    chain, key = conf.get("ssl.keystore.certificate.chain"), conf.get("ssl.keystore.key")
    key_password = conf.get("ssl.key.password") or None
    if chain and key:  # inline PEM
        return {"ssl_certfile": _private_file(chain.encode(), ".crt"),
                "ssl_keyfile": _private_file(key.encode(), ".key"), "ssl_keyfile_password": key_password}
    location = conf.get("ssl.keystore.location")
    if not location:
        raise ConfigException(f"An https listener needs a key store: set {prefix}ssl.keystore.location "
                              f"(PEM or PKCS12) or {prefix}ssl.keystore.certificate.chain and {prefix}ssl.keystore.key")
    kind = _store_type(conf, "ssl.keystore", prefix)
    if kind == "PEM":  # one file with the certificate chain and the key
        return {"ssl_certfile": location, "ssl_keyfile": location, "ssl_keyfile_password": key_password}
    if kind == "PKCS12":
        return _pkcs12_key_store(location, conf.get("ssl.keystore.password"), prefix)
    raise _unsupported_store(f"{prefix}ssl.keystore", kind)


def _trust_store(conf: Mapping[str, str], prefix: str) -> str | None:
    inline = conf.get("ssl.truststore.certificates")
    if inline:
        return _private_file(inline.encode(), ".crt")
    location = conf.get("ssl.truststore.location")
    if not location:
        return None
    kind = _store_type(conf, "ssl.truststore", prefix)
    if kind == "PEM":
        return location
    if kind == "PKCS12":
        return _pkcs12_trust_store(location, conf.get("ssl.truststore.password"), prefix)
    raise _unsupported_store(f"{prefix}ssl.truststore", kind)


def _store_type(conf: Mapping[str, str], store: str, prefix: str) -> str:
    from connector.kafka.client_config import _store_kind

    kind = _store_kind(conf, store)
    if kind not in ("PEM", "PKCS12", "JKS"):
        raise ConfigException(f"{prefix}{store}.type", kind, "String must be one of: PEM, PKCS12")
    return kind


def _unsupported_store(key: str, kind: str) -> ConfigException:
    return ConfigException(
        f"{key}.location: icefloe cannot read a {kind} store. Convert it to PKCS12 with "
        f"`keytool -importkeystore -srckeystore STORE.jks -destkeystore STORE.p12 -deststoretype PKCS12` "
        f"and set {key}.type=PKCS12 (or use PEM files with {key}.type=PEM)")


def _read_pkcs12(location: str, password: str | None, key: str) -> Any:
    from cryptography.hazmat.primitives.serialization import pkcs12

    try:
        with open(location, "rb") as handle:
            data = handle.read()
    except OSError as exc:
        raise ConfigException(f"{key}.location: cannot read {location}: {exc.strerror}") from None
    try:
        return pkcs12.load_pkcs12(data, password.encode() if password else None)
    except ValueError:
        raise ConfigException(f"{key}.location: {location} is not a PKCS12 store or "
                              f"{key}.password is wrong") from None


def _pkcs12_key_store(location: str, password: str | None, prefix: str) -> dict[str, Any]:
    from cryptography.hazmat.primitives import serialization

    store = _read_pkcs12(location, password, f"{prefix}ssl.keystore")
    if store.key is None or store.cert is None:
        raise ConfigException(f"{prefix}ssl.keystore.location: {location} holds no private key and certificate")
    # The key goes to disk encrypted with a one-off password that only this process knows.
    one_off = secrets.token_urlsafe(24)
    key_pem = store.key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                      serialization.BestAvailableEncryption(one_off.encode()))
    chain = [store.cert.certificate, *(extra.certificate for extra in store.additional_certs)]
    chain_pem = b"".join(cert.public_bytes(serialization.Encoding.PEM) for cert in chain)
    return {"ssl_certfile": _private_file(chain_pem, ".crt"), "ssl_keyfile": _private_file(key_pem, ".key"),
            "ssl_keyfile_password": one_off}


def _pkcs12_trust_store(location: str, password: str | None, prefix: str) -> str:
    from cryptography.hazmat.primitives import serialization

    store = _read_pkcs12(location, password, f"{prefix}ssl.truststore")
    certs = [extra.certificate for extra in store.additional_certs]
    if store.cert is not None:
        certs.insert(0, store.cert.certificate)
    if not certs:
        raise ConfigException(f"{prefix}ssl.truststore.location: {location} holds no certificate")
    return _private_file(b"".join(cert.public_bytes(serialization.Encoding.PEM) for cert in certs), ".crt")


_CREATED: list[str] = []


def _private_file(content: bytes, suffix: str) -> str:
    """A temporary file readable only by this user (mkstemp's 0600), removed when the process exits."""
    descriptor, path = tempfile.mkstemp(prefix="icefloe-tls-", suffix=suffix)
    with os.fdopen(descriptor, "wb") as handle:
        handle.write(content)
    if not _CREATED:
        atexit.register(_remove_created)
    _CREATED.append(path)
    return path


def _remove_created() -> None:
    for path in _CREATED:
        try:
            os.unlink(path)
        except OSError:
            pass
