"""HTTP basic auth for the REST worker, configured as Connect's ``BasicAuthSecurityRestExtension``.

The worker turns it on with::

    rest.extension.classes=org.apache.kafka.connect.rest.basic.auth.extension.BasicAuthSecurityRestExtension

and reads the credentials as Connect's ``PropertyFileLoginModule`` does: the JAAS file Connect's
scripts pass in ``KAFKA_OPTS`` (``-Djava.security.auth.login.config=/path/connect.jaas``), or the
icefloe worker key ``rest.basic.auth.jaas.file``, whose ``KafkaConnect`` section names the
credentials file::

    KafkaConnect {
        org.apache.kafka.connect.rest.basic.auth.extension.PropertyFileLoginModule required
        file="/etc/icefloe/connect.password";
    };

The credentials file holds ``user: password`` (or ``user=password``) lines, read once at start-up.
An empty credentials file lets every request through (with a warning), as in Connect.

Every request without valid credentials, on every route, is answered ``401`` with Connect's body
``User cannot access the resource.`` (no ``WWW-Authenticate`` header, as Connect sends none).
"""

from __future__ import annotations

import base64
import binascii
import hmac
import logging
import os
import re
import shlex
from dataclasses import dataclass
from typing import Any, Awaitable, Callable, Mapping, MutableMapping

from connector.api.errors import ConfigException

log = logging.getLogger(__name__)

BASIC_AUTH_EXTENSION = "org.apache.kafka.connect.rest.basic.auth.extension.BasicAuthSecurityRestExtension"
PROPERTY_FILE_LOGIN_MODULE = "org.apache.kafka.connect.rest.basic.auth.extension.PropertyFileLoginModule"
JAAS_FILE_KEY = "rest.basic.auth.jaas.file"
JAAS_SECTION = "KafkaConnect"  # Connect's login context name, fixed
UNAUTHORIZED_BODY = b"User cannot access the resource."

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


@dataclass(frozen=True)
class LoginModule:
    """One ``PropertyFileLoginModule`` entry: its JAAS flag and the credentials it accepts."""

    flag: str  # required, requisite, sufficient or optional
    credentials_file: str
    credentials: Mapping[str, str]

    def accepts(self, user: str | None, password: str | None) -> bool:
        if not self.credentials:
            return True  # Connect: an empty credentials file permits every request
        if user is None or password is None:
            return False
        # Compare against something even for an unknown user, so timing says nothing about user names.
        expected = self.credentials.get(user)
        matches = hmac.compare_digest((expected or "\0").encode(), password.encode())
        return expected is not None and matches


@dataclass(frozen=True)
class BasicAuth:
    """The worker's ``KafkaConnect`` login configuration, checked as JAAS combines its modules."""

    modules: tuple[LoginModule, ...]

    def authenticate(self, authorization: str | None) -> bool:
        user, password = parse_basic_authorization(authorization)
        results = [(module.flag, module.accepts(user, password)) for module in self.modules]
        if any(not ok for flag, ok in results if flag in ("required", "requisite")):
            return False
        if any(flag in ("required", "requisite") for flag, _ in results):
            return True
        return any(ok for _, ok in results)


def basic_auth_enabled(worker: Mapping[str, str]) -> bool:
    """Whether ``rest.extension.classes`` installs basic auth; unknown extensions are refused, not ignored."""
    classes = [item.strip() for item in worker.get("rest.extension.classes", "").split(",") if item.strip()]
    unknown = [name for name in classes if name not in (BASIC_AUTH_EXTENSION, "BasicAuthSecurityRestExtension")]
    if unknown:
        raise ConfigException("rest.extension.classes", ",".join(unknown),
                              f"icefloe supports only {BASIC_AUTH_EXTENSION}")
    return bool(classes)


def jaas_file(worker: Mapping[str, str], environ: Mapping[str, str] | None = None) -> str:
    """The JAAS file: ``rest.basic.auth.jaas.file``, else ``-Djava.security.auth.login.config`` in KAFKA_OPTS."""
    if worker.get(JAAS_FILE_KEY, "").strip():
        return worker[JAAS_FILE_KEY].strip()
    environ = os.environ if environ is None else environ
    for option in shlex.split(environ.get("KAFKA_OPTS", "")):
        if option.startswith("-Djava.security.auth.login.config="):
            return option.split("=", 1)[1].lstrip("=")  # Java also accepts "==path" (replace, not append)
    raise ConfigException(
        f"{BASIC_AUTH_EXTENSION} needs a JAAS file with a {JAAS_SECTION} section: set {JAAS_FILE_KEY} in the "
        "worker properties or -Djava.security.auth.login.config=PATH in KAFKA_OPTS")


def load_basic_auth(worker: Mapping[str, str], environ: Mapping[str, str] | None = None) -> BasicAuth:
    path = jaas_file(worker, environ)
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except OSError as exc:
        raise ConfigException(f"Cannot read the JAAS file {path}: {exc.strerror}") from None
    entries = jaas_sections(text).get(JAAS_SECTION)
    if not entries:
        raise ConfigException(f"The JAAS file {path} has no {JAAS_SECTION} section with a login module")
    modules = []
    for module, flag, options in entries:
        if module.rsplit(".", 1)[-1] != "PropertyFileLoginModule":
            raise ConfigException(f"The JAAS file {path} uses login module {module}; icefloe supports only "
                                  f"{PROPERTY_FILE_LOGIN_MODULE}")
        if "file" not in options:
            raise ConfigException(f"The JAAS file {path}: {PROPERTY_FILE_LOGIN_MODULE} needs file=\"PATH\"")
        modules.append(LoginModule(flag, options["file"], _load_credentials(options["file"])))
    return BasicAuth(tuple(modules))


def _load_credentials(path: str) -> dict[str, str]:
    from connector.config.java_properties import load_worker_properties

    try:
        credentials = load_worker_properties(path)
    except OSError as exc:
        raise ConfigException(f"Error loading Property Credentials file {path}: {exc.strerror}") from None
    if not credentials:
        log.warning("Credential properties file '%s' is empty; all requests will be permitted", path)
    return credentials


# JAAS configuration files: Name { Module flag key="value" ...; ... };  with // and /* */ comments.
_COMMENT = re.compile(r'("(?:[^"\\]|\\.)*")|//[^\n]*|/\*.*?\*/', re.DOTALL)
_SECTION = re.compile(r'([\w.$-]+)\s*\{((?:[^{}"]|"(?:[^"\\]|\\.)*")*)\}\s*;', re.DOTALL)
_ENTRY = re.compile(r'(?:[^;"]|"(?:[^"\\]|\\.)*")+;', re.DOTALL)


def jaas_sections(text: str) -> dict[str, list[tuple[str, str, dict[str, str]]]]:
    """Each section's login modules as ``(class, flag, options)``."""
    from connector.kafka.client_config import parse_jaas_config

    text = _COMMENT.sub(lambda m: m.group(1) or " ", text)
    sections: dict[str, list[tuple[str, str, dict[str, str]]]] = {}
    for section in _SECTION.finditer(text):
        entries = sections.setdefault(section.group(1), [])
        for entry in _ENTRY.finditer(section.group(2)):
            if not entry.group(0).strip(" \t\r\n;"):
                continue
            try:
                module, options = parse_jaas_config(entry.group(0).strip())
            except ConfigException as exc:
                raise ConfigException(f"JAAS section {section.group(1)}: {exc}") from None
            flag = entry.group(0).split()[1].lower()
            entries.append((module, flag, options))
    return sections


def parse_basic_authorization(header: str | None) -> tuple[str | None, str | None]:
    """``(user, password)`` of an ``Authorization: Basic ...`` header, as Connect's BasicAuthCredentials reads it."""
    if not header:
        return None, None
    method, _, encoded = header.partition(" ")
    if not method or not encoded or method.lower() != "basic":
        return None, None
    try:
        decoded = base64.b64decode(encoded.strip(), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return None, None
    user, colon, password = decoded.partition(":")
    if not colon or not user:
        return None, None
    return user, password


class BasicAuthMiddleware:
    """ASGI middleware: every HTTP request (any route, mounted apps included) needs valid credentials."""

    def __init__(self, app: ASGIApp, auth: BasicAuth):
        self.app = app
        self.auth = auth

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket") or self.auth.authenticate(_authorization(scope)):
            await self.app(scope, receive, send)
            return
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008})
            return
        # Connect's JaasBasicAuthFilter: 401, this text, the JSON resources' content type, no challenge.
        await send({"type": "http.response.start", "status": 401,
                    "headers": [(b"content-type", b"application/json"),
                                (b"content-length", str(len(UNAUTHORIZED_BODY)).encode())]})
        await send({"type": "http.response.body", "body": UNAUTHORIZED_BODY})


def _authorization(scope: Scope) -> str | None:
    for name, value in scope.get("headers", []):
        if name.lower() == b"authorization":
            return value.decode("latin-1")
    return None


def install_security(app: Any, worker: Mapping[str, str], environ: Mapping[str, str] | None = None) -> None:
    """Add basic auth to a Starlette/FastAPI ``app`` when the worker asks for it; no-op otherwise.

    Raises ConfigException (at start-up, before the worker listens) for an unusable configuration.
    """
    if not basic_auth_enabled(worker):
        return
    auth = load_basic_auth(worker, environ)
    app.add_middleware(BasicAuthMiddleware, auth=auth)
    log.info("REST basic authentication on (%d login module(s))", len(auth.modules))
