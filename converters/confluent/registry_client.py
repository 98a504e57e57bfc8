"""A Confluent Schema Registry client over ``requests``, and the converters' shared base.

The client speaks the registry's REST API (Confluent Schema Registry, and the
compatible APIs of Karapace and Apicurio's ``ccompat``) with what a Connect
converter needs: fetch a schema by id or GUID (cached), look a schema up in a
subject to learn its version, fetch a subject's version (``latest``), and
register a schema.

Configuration (the keys Confluent's Java client reads, prefix-stripped as
Connect passes them to a converter, declared in
:data:`converters.confluent.serde_config.CLIENT_CONFIG`) is parsed by
:meth:`SchemaRegistryClient.from_config`:

=============================================== ==========================================
``schema.registry.url``                         required; comma-separated list, tried in order
                                                (fail over on connection errors and 5xx)
``basic.auth.credentials.source``               ``URL`` (default: user-info of the URL),
                                                ``USER_INFO`` or ``SASL_INHERIT``
``basic.auth.user.info``                        ``user:password`` for ``USER_INFO``
                                                (``schema.registry.basic.auth.user.info`` too)
``sasl.jaas.config``                            read for ``SASL_INHERIT`` (``username``/``password``)
``bearer.auth.credentials.source``              ``STATIC_TOKEN`` with ``bearer.auth.token``
``schema.registry.ssl.truststore.location``     PEM file of CA certificates (``verify``)
``schema.registry.ssl.truststore.certificates`` PEM text of CA certificates
``schema.registry.ssl.truststore.type``         ``PEM`` only (JKS/PKCS12 are rejected)
``schema.registry.ssl.keystore.location``       PEM file with the client certificate (and key)
``schema.registry.ssl.keystore.key``            PEM file of the client key (if not in the keystore)
``schema.registry.ssl.key.password``            password of an encrypted client key
``schema.registry.ssl.endpoint.identification.algorithm`` ``""`` disables host name checks
``max.retries`` / ``retries.wait.ms`` /          retries on connection errors and HTTP
``retries.max.wait.ms``                          408/429/5xx (3 / 1000 / 20000), exponential
``http.connect.timeout.ms`` / ``http.read.timeout.ms`` (60000 / 60000)
``request.header.<name>``                       extra HTTP headers sent with every request
=============================================== ==========================================

Every failure is a :class:`~connector.api.errors.DataException` subclass
naming the registry URL (without credentials) and what failed, so a converter
error is handled by Connect's ``errors.tolerance`` like any bad record.
"""

from __future__ import annotations

import abc
import base64
import collections
import json
import logging
import re
import ssl
import threading
import time
import urllib.parse
import uuid
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping

import requests
from requests.adapters import HTTPAdapter

from connector.api.errors import ConfigException, DataException
from connector.api.lru import LRUCache
from connector.api.record import SchemaAndValue
from connector.api.schema import Schema
from converters.base import Converter
from converters.confluent import wire_format
from converters.confluent.serde_config import (
    CLIENT_CONFIG,
    SCHEMA_REGISTRY_URL_CONFIG,
    SCHEMAS_CACHE_CONFIG,
    SERDE_CONFIG,
    SSL_ALGORITHM_CONFIG,
    SSL_CONTEXT_KEYS,
    SSL_PREFIX,
)

log = logging.getLogger(__name__)

RETRIABLE_STATUS = frozenset({408, 429, 500, 502, 503, 504})

ACCEPT = ("application/vnd.schemaregistry.v1+json, application/vnd.schemaregistry+json, "
          "application/json")
CONTENT_TYPE = "application/vnd.schemaregistry.v1+json"

# Confluent error codes
SUBJECT_NOT_FOUND = 40401
VERSION_NOT_FOUND = 40402
SCHEMA_NOT_FOUND = 40403


# --- errors --------------------------------------------------------------------------------------

class SchemaRegistryException(DataException):
    """A registry request failed; ``status``/``error_code`` come from the response (if any)."""

    def __init__(self, message: str, *, status: int | None = None, error_code: int | None = None,
                 url: str | None = None):
        super().__init__(message)
        self.status = status
        self.error_code = error_code
        self.url = url


class SchemaNotFoundException(SchemaRegistryException):
    """HTTP 404 with error code 40403."""


class SubjectNotFoundException(SchemaRegistryException):
    """HTTP 404 with error code 40401."""


class VersionNotFoundException(SchemaRegistryException):
    """HTTP 404 with error code 40402."""


class SchemaRegistryUnavailableException(SchemaRegistryException):
    """No registry URL answered (connection errors or 5xx) after all retries."""


# --- entities ------------------------------------------------------------------------------------

@dataclass(frozen=True)
class SchemaReference:
    """A named reference from one schema to a subject version (``{"name","subject","version"}``)."""

    name: str
    subject: str
    version: int

    def to_dict(self) -> dict:
        return {"name": self.name, "subject": self.subject, "version": self.version}

    @staticmethod
    def from_dict(d: Mapping[str, Any]) -> "SchemaReference":
        return SchemaReference(str(d["name"]), str(d["subject"]), int(d["version"]))


@dataclass(frozen=True)
class RegisteredSchema:
    """A schema as the registry returns it. ``schema_type`` is AVRO when the registry omits it."""

    schema: str
    schema_type: str = "AVRO"
    references: tuple[SchemaReference, ...] = ()
    id: int | None = None
    guid: str | None = None
    subject: str | None = None
    version: int | None = None
    metadata: Any = field(default=None, compare=False, hash=False)

    @staticmethod
    def from_response(body: Mapping[str, Any], **overrides: Any) -> "RegisteredSchema":
        refs = tuple(SchemaReference.from_dict(r) for r in (body.get("references") or ()))
        values: dict[str, Any] = dict(
            schema=body.get("schema") or "",
            schema_type=(body.get("schemaType") or "AVRO").upper(),
            references=refs,
            id=body.get("id"),
            guid=body.get("guid"),
            subject=body.get("subject"),
            version=body.get("version"),
            metadata=body.get("metadata"),
        )
        values.update({k: v for k, v in overrides.items() if v is not None})
        return RegisteredSchema(**values)

    def confluent_version(self) -> int | None:
        """``metadata.properties["confluent:version"]`` when the registry sent it."""
        try:
            value = (self.metadata or {}).get("properties", {}).get("confluent:version")
        except AttributeError:
            return None
        try:
            return int(value) if value is not None else None
        except (TypeError, ValueError):
            return None


# --- configuration helpers ----------------------------------------------------------------------

def _first_set(values: Mapping[str, Any], *keys: str) -> str | None:
    """The first non-empty parsed value among ``keys`` (a key, then its fallbacks)."""
    for key in keys:
        if values[key]:
            return values[key]
    return None


def _with_older_spelling(values: Mapping[str, Any], raw: Mapping[str, Any], key: str) -> Any:
    """``key``'s value, or that of ``schema.registry.<key>`` when only the older spelling is set."""
    older = values["schema.registry." + key]
    return older if key not in raw and older else values[key]


def redact_url(url: str) -> str:
    """``url`` without any ``user:password@`` part (safe for error messages)."""
    parts = urllib.parse.urlsplit(url)
    if parts.username is None and parts.password is None:
        return url
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urllib.parse.urlunsplit((parts.scheme, host, parts.path, parts.query, parts.fragment))


_JAAS_OPTION = re.compile(r"""(\w+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|'((?:[^'\\]|\\.)*)'|([^\s;]+))""")


def _jaas_credentials(jaas: str) -> tuple[str, str] | None:
    options = {}
    for m in _JAAS_OPTION.finditer(jaas):
        options[m.group(1)] = next(g for g in m.groups()[1:] if g is not None)
    if "username" in options and "password" in options:
        return options["username"], options["password"]
    return None


class _SSLContextAdapter(HTTPAdapter):
    """An adapter using a prepared ``ssl.SSLContext`` (client certificates, custom CAs)."""

    def __init__(self, context: ssl.SSLContext, check_hostname: bool, **kwargs: Any):
        self._context = context
        self._check_hostname = check_hostname
        super().__init__(**kwargs)

    def init_poolmanager(self, connections, maxsize, block=False, **pool_kwargs):
        pool_kwargs["ssl_context"] = self._context
        if not self._check_hostname:
            pool_kwargs["assert_hostname"] = False
        super().init_poolmanager(connections, maxsize, block=block, **pool_kwargs)

    def cert_verify(self, conn, url, verify, cert):
        # The SSL context carries the trust store and the client certificate.
        super().cert_verify(conn, url, verify, None)
        if not self._check_hostname:
            conn.assert_hostname = False


def _build_ssl(values: Mapping[str, Any]) -> tuple[ssl.SSLContext | None, bool]:
    """The SSL context for the ``schema.registry.ssl.*`` keys (None when none is set)."""
    p = SSL_PREFIX
    if not any(values[k] for k in SSL_CONTEXT_KEYS):
        return None, True
    for type_key in (p + "truststore.type", p + "keystore.type"):
        kind = values[type_key]
        if kind and kind.upper() != "PEM":
            raise ConfigException(
                type_key, kind,
                "only PEM trust stores and key stores are supported; convert JKS/PKCS12 stores "
                "to PEM files (openssl pkcs12 -in store.p12 -out store.pem)")
    context = ssl.create_default_context()
    truststore = values[p + "truststore.location"]
    inline_ca = values[p + "truststore.certificates"]
    try:
        if truststore:
            context.load_verify_locations(cafile=truststore)
        if inline_ca:
            context.load_verify_locations(cadata=inline_ca)
    except (OSError, ssl.SSLError) as exc:
        raise ConfigException(p + "truststore.location", truststore or "<inline certificates>",
                              f"cannot load CA certificates: {exc}") from exc
    keystore = _first_set(values, p + "keystore.location", p + "keystore.certificate.chain")
    keyfile = values[p + "keystore.key"] or None
    password = _first_set(values, p + "key.password", p + "keystore.password")
    if keystore:
        try:
            context.load_cert_chain(certfile=keystore, keyfile=keyfile, password=password)
        except (OSError, ssl.SSLError) as exc:
            raise ConfigException(p + "keystore.location", keystore,
                                  f"cannot load the client certificate/key: {exc}") from exc
    check_hostname = values[SSL_ALGORITHM_CONFIG] != ""
    if not check_hostname:
        context.check_hostname = False
    return context, check_hostname


# --- the client ----------------------------------------------------------------------------------

#: The retry and timeout keys of ``CLIENT_CONFIG``, each to the client's keyword it sets.
_RETRY_AND_TIMEOUT_KEYWORDS = {
    "max.retries": "max_retries", "retries.wait.ms": "retries_wait_ms", "retries.max.wait.ms": "retries_max_wait_ms",
    "http.connect.timeout.ms": "connect_timeout_ms", "http.read.timeout.ms": "read_timeout_ms",
}


class SchemaRegistryClient:
    """A caching Schema Registry REST client with fail-over between URLs and retries."""

    def __init__(
        self,
        urls: str | Iterable[str],
        *,
        auth: tuple[str, str] | None = None,
        bearer_token: str | None = None,
        ssl_context: ssl.SSLContext | None = None,
        check_hostname: bool = True,
        max_retries: int = 3,
        retries_wait_ms: int = 1000,
        retries_max_wait_ms: int = 20000,
        connect_timeout_ms: int = 60000,
        read_timeout_ms: int = 60000,
        cache_capacity: int = 1000,
        headers: Mapping[str, str] | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ):
        if isinstance(urls, str):
            urls = [u.strip() for u in urls.split(",")]
        self.urls = [u.rstrip("/") for u in urls if u and u.strip()]
        if not self.urls:
            raise ConfigException(SCHEMA_REGISTRY_URL_CONFIG, urls, "at least one URL is required")
        for u in self.urls:
            scheme = urllib.parse.urlsplit(u).scheme
            if scheme not in ("http", "https"):
                raise ConfigException(SCHEMA_REGISTRY_URL_CONFIG, redact_url(u),
                                      "expected an http:// or https:// URL")
        self.display_urls = [redact_url(u) for u in self.urls]
        self.max_retries = max(0, int(max_retries))
        self.retries_wait_ms = max(0, int(retries_wait_ms))
        self.retries_max_wait_ms = max(0, int(retries_max_wait_ms))
        self.timeout = (connect_timeout_ms / 1000.0, read_timeout_ms / 1000.0)
        self._sleep = sleep
        self._session = requests.Session()
        self._session.trust_env = False
        self._session.headers.update({"Accept": ACCEPT})
        if headers:
            self._session.headers.update(dict(headers))
        if bearer_token:
            self._session.headers["Authorization"] = f"Bearer {bearer_token}"
        self._auth = auth
        if ssl_context is not None:
            self._session.mount("https://", _SSLContextAdapter(ssl_context, check_hostname))
        self._by_id: LRUCache[Any, Any] = LRUCache(cache_capacity)
        self._by_guid: LRUCache[Any, Any] = LRUCache(cache_capacity)
        self._versions: LRUCache[Any, Any] = LRUCache(cache_capacity)
        self._subject_versions: LRUCache[Any, Any] = LRUCache(cache_capacity)
        self._lock = threading.Lock()

    # -- construction from a converter config --

    @classmethod
    def from_config(cls, config: Mapping[str, Any], *, cache_capacity: int | None = None,
                    **overrides: Any) -> "SchemaRegistryClient":
        values = CLIENT_CONFIG.parse(config)
        urls = [u for u in values[SCHEMA_REGISTRY_URL_CONFIG] or [] if u]
        if not urls:
            raise ConfigException(
                f"Missing required configuration \"{SCHEMA_REGISTRY_URL_CONFIG}\" which has no "
                f"default value.")
        auth = None
        source = _with_older_spelling(values, config, "basic.auth.credentials.source").upper()
        if source == "USER_INFO":
            info = _with_older_spelling(values, config, "basic.auth.user.info")
            if info is None or ":" not in info:
                raise ConfigException(
                    "basic.auth.user.info", "[hidden]" if info else info,
                    "basic.auth.credentials.source=USER_INFO needs basic.auth.user.info "
                    "as 'user:password'")
            user, _, password = info.partition(":")
            auth = (user, password)
        elif source == "URL":
            for u in urls:
                parts = urllib.parse.urlsplit(u)
                if parts.username is not None:
                    auth = (urllib.parse.unquote(parts.username),
                            urllib.parse.unquote(parts.password or ""))
                    break
            urls = [redact_url(u) for u in urls]
        elif source == "SASL_INHERIT":
            jaas = values["sasl.jaas.config"]
            creds = _jaas_credentials(jaas) if jaas else None
            if creds is None:
                raise ConfigException(
                    "sasl.jaas.config", "[hidden]" if jaas else None,
                    "basic.auth.credentials.source=SASL_INHERIT needs sasl.jaas.config with "
                    "username=\"...\" password=\"...\"")
            auth = creds
        else:
            raise ConfigException("basic.auth.credentials.source", source,
                                  "expected one of URL, USER_INFO, SASL_INHERIT")
        bearer = None
        bearer_source = values["bearer.auth.credentials.source"]
        if bearer_source:
            if bearer_source.upper() != "STATIC_TOKEN":
                raise ConfigException("bearer.auth.credentials.source", bearer_source,
                                      "only STATIC_TOKEN is supported")
            bearer = values["bearer.auth.token"]
            if not bearer:
                raise ConfigException("bearer.auth.token", None,
                                      "bearer.auth.credentials.source=STATIC_TOKEN needs a token")
        ssl_context, check_hostname = _build_ssl(values)
        headers = {str(k)[len("request.header."):]: str(v) for k, v in config.items()
                   if str(k).startswith("request.header.")}
        kwargs: dict[str, Any] = dict(
            auth=auth,
            bearer_token=bearer,
            ssl_context=ssl_context,
            check_hostname=check_hostname,
            cache_capacity=cache_capacity if cache_capacity is not None else values[SCHEMAS_CACHE_CONFIG],
            headers=headers,
            **{keyword: values[key] for key, keyword in _RETRY_AND_TIMEOUT_KEYWORDS.items()},
        )
        kwargs.update(overrides)
        return cls(urls, **kwargs)

    # -- transport --

    def _backoff(self, attempt: int) -> float:
        wait = self.retries_wait_ms * (2 ** attempt)
        return min(wait, self.retries_max_wait_ms) / 1000.0

    def request(self, method: str, path: str, *, params: Mapping[str, Any] | None = None,
                body: Any = None, what: str | None = None) -> Any:
        """Send a request, failing over between URLs and retrying; returns the decoded JSON.

        ``what`` describes the operation for error messages ("fetching schema 7").
        """
        what = what or f"{method} /{path}"
        data = json.dumps(body) if body is not None else None
        headers = {"Content-Type": CONTENT_TYPE} if data is not None else None
        failures: list[str] = []
        for attempt in range(self.max_retries + 1):
            for url, shown in zip(self.urls, self.display_urls):
                full = f"{url}/{path.lstrip('/')}"
                try:
                    response = self._session.request(
                        method, full, params=params, data=data, headers=headers,
                        auth=self._auth, timeout=self.timeout)
                except requests.exceptions.SSLError as exc:
                    raise SchemaRegistryException(
                        f"TLS handshake with Schema Registry {shown} failed while {what}: {exc}",
                        url=shown) from exc
                except (requests.exceptions.ConnectionError, requests.exceptions.Timeout) as exc:
                    failures.append(f"{shown}: {type(exc).__name__}: {_short(exc)}")
                    continue
                if response.status_code in RETRIABLE_STATUS:
                    failures.append(f"{shown}: HTTP {response.status_code} {_error_text(response)}")
                    continue
                return self._handle(response, shown, what)
            if attempt < self.max_retries:
                self._sleep(self._backoff(attempt))
        attempts = self.max_retries + 1
        raise SchemaRegistryUnavailableException(
            f"Schema Registry unavailable while {what}: no answer from "
            f"{', '.join(self.display_urls)} after {attempts} attempt(s) per URL; last errors: "
            + "; ".join(failures[-len(self.urls):]),
            url=self.display_urls[-1])

    def _handle(self, response: requests.Response, shown: str, what: str) -> Any:
        status = response.status_code
        if 200 <= status < 300:
            if status == 204 or not response.content:
                return None
            try:
                return response.json()
            except ValueError as exc:
                raise SchemaRegistryException(
                    f"Schema Registry {shown} returned invalid JSON while {what}", status=status,
                    url=shown) from exc
        code, message = _error_body(response)
        if status in (401, 403):
            raise SchemaRegistryException(
                f"Schema Registry {shown} refused the request while {what} (HTTP {status}"
                f"{', error code ' + str(code) if code else ''}: {message}); check "
                f"basic.auth.credentials.source / basic.auth.user.info",
                status=status, error_code=code, url=shown)
        cls: type[SchemaRegistryException] = SchemaRegistryException
        if status == 404:
            by_code: dict[int | None, type[SchemaRegistryException]] = {
                SCHEMA_NOT_FOUND: SchemaNotFoundException,
                SUBJECT_NOT_FOUND: SubjectNotFoundException,
                VERSION_NOT_FOUND: VersionNotFoundException,
            }
            cls = by_code.get(code, SchemaRegistryException)
        raise cls(
            f"Schema Registry {shown} failed while {what}: HTTP {status}"
            f"{', error code ' + str(code) if code is not None else ''}: {message}",
            status=status, error_code=code, url=shown)

    # -- API --

    def get_schema(self, schema_id: int, *, subject: str | None = None,
                   fmt: str | None = None) -> RegisteredSchema:
        """``GET /schemas/ids/{id}`` (cached). A missing id raises ``Schema <id> not found``."""
        key = (schema_id, fmt)
        cached = self._by_id.get(key)
        if cached is not None:
            return cached
        try:
            body = self.request("GET", f"schemas/ids/{int(schema_id)}", params=_query(subject=subject, format=fmt),
                                what=f"fetching schema {schema_id}")
        except SchemaRegistryException as exc:
            if exc.status == 404 and exc.error_code in (SCHEMA_NOT_FOUND, None):
                raise _schema_not_found(f"Schema {schema_id}", exc) from exc
            raise
        result = RegisteredSchema.from_response(body or {}, id=int(schema_id))
        self._by_id.put(key, result)
        return result

    def get_schema_by_guid(self, guid: uuid.UUID | str, *, fmt: str | None = None) -> RegisteredSchema:
        """``GET /schemas/guids/{guid}`` (cached)."""
        key = (str(guid), fmt)
        cached = self._by_guid.get(key)
        if cached is not None:
            return cached
        try:
            body = self.request("GET", f"schemas/guids/{guid}", params=_query(format=fmt),
                                what=f"fetching schema with GUID {guid}")
        except SchemaRegistryException as exc:
            if exc.status == 404:
                raise _schema_not_found(f"Schema with GUID {guid}", exc) from exc
            raise
        result = RegisteredSchema.from_response(body or {}, guid=str(guid))
        self._by_guid.put(key, result)
        return result

    def get_version(self, subject: str, version: int | str = "latest", *,
                    fmt: str | None = None, deleted: bool = False) -> RegisteredSchema:
        """``GET /subjects/{subject}/versions/{version}``; a numbered version is cached."""
        key = (subject, version, fmt)
        if version != "latest":
            cached = self._subject_versions.get(key)
            if cached is not None:
                return cached
        body = self.request(
            "GET", f"subjects/{_quote(subject)}/versions/{version}",
            params=_query(format=fmt, deleted="true" if deleted else None),
            what=f"fetching version {version} of subject '{subject}'")
        result = RegisteredSchema.from_response(body or {})
        if version != "latest":
            self._subject_versions.put(key, result)
        return result

    def get_latest_version(self, subject: str, *, fmt: str | None = None) -> RegisteredSchema:
        return self.get_version(subject, "latest", fmt=fmt)

    def lookup_schema(self, subject: str, schema: str, *, schema_type: str = "AVRO",
                      references: Iterable[SchemaReference] = (), normalize: bool = False,
                      deleted: bool = False) -> RegisteredSchema:
        """``POST /subjects/{subject}``: the version and id of ``schema`` in ``subject`` (cached)."""
        refs = tuple(references)
        key = (subject, schema_type, schema, refs, normalize, deleted)
        cached = self._versions.get(key)
        if cached is not None:
            return cached
        body: dict[str, Any] = {"schema": schema, **({"schemaType": schema_type} if schema_type != "AVRO" else {})}
        if refs:
            body["references"] = [r.to_dict() for r in refs]
        params = _query(normalize=str(normalize).lower(), deleted="true" if deleted else None)
        response = self.request("POST", f"subjects/{_quote(subject)}", params=params, body=body,
                                what=f"looking up a schema in subject '{subject}'")
        result = RegisteredSchema.from_response(response or {}, subject=subject)
        self._versions.put(key, result)
        return result

    def register(self, subject: str, schema: str, *, schema_type: str = "AVRO",
                 references: Iterable[SchemaReference] = (), normalize: bool = False) -> int:
        """``POST /subjects/{subject}/versions``; returns the (global) schema id (cached)."""
        refs = tuple(references)
        key = ("register", subject, schema_type, schema, refs, normalize)
        cached = self._versions.get(key)
        if cached is not None:
            return cached
        body: dict[str, Any] = {"schema": schema}
        if schema_type != "AVRO":
            body["schemaType"] = schema_type
        if refs:
            body["references"] = [r.to_dict() for r in refs]
        response = self.request("POST", f"subjects/{_quote(subject)}/versions",
                                params={"normalize": str(normalize).lower()}, body=body,
                                what=f"registering a schema under subject '{subject}'")
        schema_id = int((response or {})["id"])
        self._versions.put(key, schema_id)
        return schema_id

    def get_subject_versions(self, subject: str) -> list[int]:
        return list(self.request("GET", f"subjects/{_quote(subject)}/versions",
                                 what=f"listing versions of subject '{subject}'") or [])

    def resolve_references(self, schema: RegisteredSchema, *, fmt: str | None = None
                           ) -> "collections.OrderedDict[str, RegisteredSchema]":
        """All schemas ``schema`` references, transitively, dependencies first, by reference name."""
        out: "collections.OrderedDict[str, RegisteredSchema]" = collections.OrderedDict()

        def visit(s: RegisteredSchema, stack: tuple[str, ...]) -> None:
            for ref in s.references:
                if ref.name in out:
                    continue
                if ref.name in stack:
                    raise DataException(f"Circular schema reference to '{ref.name}'")
                dep = self.get_version(ref.subject, ref.version, fmt=fmt)
                visit(dep, stack + (ref.name,))
                out[ref.name] = dep

        visit(schema, ())
        return out

    def close(self) -> None:
        self._session.close()


def _quote(subject: str) -> str:
    return urllib.parse.quote(subject, safe="")


def _query(**params: str | None) -> dict[str, str] | None:
    """The query parameters that are set (None when none is)."""
    return {name: value for name, value in params.items() if value} or None


def _schema_not_found(schema: str, exc: SchemaRegistryException) -> SchemaNotFoundException:
    """``<schema> not found``, naming the registry that answered 404."""
    return SchemaNotFoundException(f"{schema} not found (Schema Registry {exc.url})", status=404,
                                   error_code=SCHEMA_NOT_FOUND, url=exc.url)


def _short(exc: BaseException) -> str:
    text = str(exc)
    return text if len(text) <= 200 else text[:200] + "..."


def _error_body(response: requests.Response) -> tuple[int | None, str]:
    try:
        body = response.json()
    except ValueError:
        return None, (response.text or response.reason or "").strip()[:300]
    if isinstance(body, dict):
        code = body.get("error_code")
        try:
            code = int(code) if code is not None else None
        except (TypeError, ValueError):
            code = None
        return code, str(body.get("message", "")).strip()
    return None, str(body)[:300]


def _error_text(response: requests.Response) -> str:
    code, message = _error_body(response)
    return f"(error code {code}: {message})" if code is not None else f"({message})" if message else ""


def decode_serialized(schema_text: str) -> bytes:
    """The bytes of a base64 ``format=serialized`` schema."""
    try:
        return base64.b64decode(schema_text.encode("ascii"), validate=True)
    except (ValueError, UnicodeEncodeError) as exc:
        raise DataException("Schema Registry returned a Protobuf schema that is not base64 "
                            "(expected format=serialized)") from exc


# --- shared base of the three converters ----------------------------------------------------------

class RegistryConverter(Converter):
    """What the Avro, JSON Schema and Protobuf converters share.

    Reads the common config keys (``schema.registry.url`` and the client keys
    above, ``auto.register.schemas`` (true), ``use.latest.version`` (false),
    ``normalize.schemas`` (false), ``key.subject.name.strategy`` /
    ``value.subject.name.strategy`` (TopicNameStrategy), ``schemas.cache.config``
    (1000)), owns the registry client and remembers which registry schema the
    last value used (:attr:`last_schema_id`, :meth:`schema_id_of`).
    """

    SCHEMA_TYPE = "AVRO"
    CONFIG_DEF = SERDE_CONFIG
    #: Whether a value's header carries message indexes after the schema id (Protobuf).
    MESSAGE_INDEXES = False

    def __init__(self, client: SchemaRegistryClient | None = None):
        self._client = client
        self.is_key = False
        self.config: dict = {}
        self.last_schema_id: int | None = None
        self.last_schema_guid: str | None = None
        self.auto_register = True
        self.use_latest_version = False
        self.normalize_schemas = False
        self.cache_size = 1000
        self.subject_strategy: Any = None
        self._version_misses: set = set()

    # -- Converter API --

    def configure(self, config: Mapping[str, Any], is_key: bool = False) -> None:
        from converters.confluent.subject_naming import (  # local import: no cycle at load time
            KEY_SUBJECT_NAME_STRATEGY,
            VALUE_SUBJECT_NAME_STRATEGY,
            load_strategy,
        )

        self.config = dict(config or {})
        values = self.CONFIG_DEF.parse(self.config)
        self.is_key = bool(is_key)
        self.cache_size = max(1, values[SCHEMAS_CACHE_CONFIG])
        if self._client is None:
            self._client = SchemaRegistryClient.from_config(self.config, cache_capacity=self.cache_size)
        self.auto_register = values["auto.register.schemas"]
        self.use_latest_version = values["use.latest.version"]
        self.normalize_schemas = values["normalize.schemas"]
        key = KEY_SUBJECT_NAME_STRATEGY if is_key else VALUE_SUBJECT_NAME_STRATEGY
        self.subject_strategy = load_strategy(values[key], key)
        self._parsed: LRUCache[Any, Any] = LRUCache(self.cache_size)
        self._configure_format(values)

    def _configure_format(self, values: Mapping[str, Any]) -> None:
        """Format-specific configuration from the parsed ``CONFIG_DEF`` values (overridden)."""

    def close(self) -> None:
        """Close the registry client's HTTP connections."""
        if self._client is not None:
            self._client.close()

    @property
    def client(self) -> SchemaRegistryClient:
        if self._client is None:
            raise ConfigException("The converter is not configured: call configure() first")
        return self._client

    def to_connect_data(self, topic: str | None, data: bytes | None, headers: Any = None
                        ) -> SchemaAndValue:
        """Decode a Confluent-framed value into ``SchemaAndValue``; null -> ``(None, None)``."""
        if data is None:
            return SchemaAndValue(None, None)
        schema_id, payload = wire_format.parse(data, protobuf=self.MESSAGE_INDEXES, headers=headers,
                                               is_key=self.is_key)
        entry = self._entry(topic, schema_id)
        decoded = self._decode(entry, schema_id, payload)
        try:
            read = self._to_connect(entry, decoded)
        except Exception as exc:  # noqa: BLE001 - bytes from Kafka that decoded but do not fit their schema:
            raise DataException(f"{self._unconvertible(entry, schema_id)}: {exc}") from exc  # the record's error
        self._remember(schema_id, entry.parsed.registered)
        return read

    def schema_id_of(self, data: bytes | None, headers: Any = None) -> int | None:
        """The registry schema id ``data`` was written with (None for null or GUID-framed values)."""
        return wire_format.schema_id_of(data, headers=headers, is_key=self.is_key)

    def connect_schema_of(self, topic: str | None, schema_id: int) -> Schema | None:
        """The (cached) Connect schema values written with registry schema ``schema_id`` get."""
        return self._entry(topic, wire_format.SchemaId(id=schema_id)).connect_schema

    @abc.abstractmethod
    def _entry(self, topic: str | None, schema_id: Any) -> Any:
        """What reading values written with ``schema_id`` on ``topic`` needs.

        Its ``connect_schema`` is the values' Connect schema and ``parsed.registered`` their registry schema.
        """

    @abc.abstractmethod
    def _decode(self, entry: Any, schema_id: Any, payload: memoryview) -> Any:
        """A value's ``payload`` (after its header) as the format's library reads it; DataException if it cannot."""

    @abc.abstractmethod
    def _to_connect(self, entry: Any, decoded: Any) -> SchemaAndValue:
        """The Connect data of a decoded payload."""

    @abc.abstractmethod
    def _unconvertible(self, entry: Any, schema_id: Any) -> str:
        """What the error says of a decoded payload :meth:`_to_connect` failed on."""

    # -- helpers for subclasses --

    def _parsed_for(self, schema_id: Any, parse: Callable[[RegisteredSchema], Any],
                    fmt: str | None = None) -> Any:
        """``parse`` of the registry schema ``schema_id`` names, fetched and parsed once per id."""
        parsed = self._parsed.get(schema_id.key)
        if parsed is None:
            parsed = parse(self._fetch(schema_id, fmt=fmt))
            self._parsed.put(schema_id.key, parsed)
        return parsed

    def _fetch(self, schema_id: Any, fmt: str | None = None) -> RegisteredSchema:
        """The registry schema for a :class:`~converters.confluent.wire_format.SchemaId`."""
        if schema_id.id is not None:
            registered = self.client.get_schema(schema_id.id, fmt=fmt)
        else:
            registered = self.client.get_schema_by_guid(schema_id.guid, fmt=fmt)
        if registered.schema_type != self.SCHEMA_TYPE:
            raise DataException(
                f"Schema {schema_id} is a {registered.schema_type} schema but the converter "
                f"expects {self.SCHEMA_TYPE}; is the right converter configured for this topic?")
        return registered

    def _remember(self, schema_id: Any, registered: RegisteredSchema | None = None) -> None:
        self.last_schema_id = schema_id.id if schema_id.id is not None else (
            registered.id if registered is not None else None)
        self.last_schema_guid = str(schema_id.guid) if schema_id.guid is not None else (
            registered.guid if registered is not None else None)

    def _subject(self, topic: str | None, record_name: str | None) -> str | None:
        return self.subject_strategy.subject_name(topic, self.is_key, record_name)

    def _schema_version(self, subject: str | None, registered: RegisteredSchema,
                        lookup_schema: str | None = None) -> int | None:
        """The version of ``registered`` in ``subject``, as Confluent's deserializers compute it.

        ``metadata.confluent:version`` when present, else a lookup of the schema
        in the subject (``POST /subjects/{subject}?deleted=true``). A schema the
        subject does not hold gives None (Confluent's converter fails there; we
        keep the record and leave the Connect schema without a version).
        """
        version = registered.confluent_version()
        if version is not None or subject is None:
            return version
        try:
            found = self.client.lookup_schema(
                subject, lookup_schema if lookup_schema is not None else registered.schema,
                schema_type=registered.schema_type, references=registered.references,
                deleted=True)
        except SchemaRegistryException as exc:
            if exc.status == 404:
                key = (subject, registered.id, registered.guid)
                if key not in self._version_misses:
                    self._version_misses.add(key)
                    log.warning("Schema %s is not registered under subject '%s' (%s); the Connect "
                                "schema gets no version", registered.id or registered.guid,
                                subject, exc)
                return None
            raise
        return found.version

    def _register_or_lookup(self, subject: str, schema: str, references: Iterable[SchemaReference] = ()
                            ) -> int:
        """The id to write ``schema`` with under ``subject`` (auto.register / use.latest.version)."""
        if self.use_latest_version:
            latest = self.client.get_latest_version(subject)
            if latest.id is None:
                raise DataException(f"Schema Registry returned no id for the latest version of "
                                    f"subject '{subject}'")
            return int(latest.id)
        if self.auto_register:
            return self.client.register(subject, schema, schema_type=self.SCHEMA_TYPE,
                                        references=references, normalize=self.normalize_schemas)
        found = self.client.lookup_schema(subject, schema, schema_type=self.SCHEMA_TYPE,
                                          references=references, normalize=self.normalize_schemas)
        if found.id is None:
            raise DataException(f"Schema not found in subject '{subject}' and auto.register.schemas "
                                f"is false")
        return int(found.id)
