"""The keys the three Schema Registry converters share (Confluent's ``AbstractKafkaSchemaSerDeConfig``).

``CLIENT_CONFIG`` is what :meth:`SchemaRegistryClient.from_config` reads (the
registry URLs, credentials, TLS files, retries and timeouts);
``SERDE_CONFIG`` adds the converter's own keys (registration, latest version,
subject name strategies). Every key is in the group ``Schema Registry``, so the
configuration reference lists them once for all three converters.
"""

from __future__ import annotations

from typing import Any

from connector.api.config_def import NO_DEFAULT, ConfigDef, ConfigType
from converters.confluent.subject_naming import (
    KEY_SUBJECT_NAME_STRATEGY,
    VALUE_SUBJECT_NAME_STRATEGY,
    TopicNameStrategy,
)

GROUP = "Schema Registry"
SCHEMA_REGISTRY_URL_CONFIG = "schema.registry.url"
SCHEMAS_CACHE_CONFIG = "schemas.cache.config"
SSL_PREFIX = "schema.registry.ssl."
SSL_ALGORITHM_CONFIG = SSL_PREFIX + "endpoint.identification.algorithm"
#: The keys that, when set, make the client build its own TLS context.
SSL_CONTEXT_KEYS = tuple(SSL_PREFIX + k for k in (
    "truststore.location", "truststore.certificates", "truststore.type", "keystore.type",
    "keystore.location", "keystore.certificate.chain", "keystore.key", "key.password", "keystore.password"))


def _define(config: ConfigDef, name: str, type: ConfigType, default: Any, doc: str,
            importance: str = "medium") -> None:
    config.define(name, type, default, importance=importance, doc=doc, group=GROUP)


def _client_config() -> ConfigDef:
    c = ConfigDef()
    _define(c, SCHEMA_REGISTRY_URL_CONFIG, ConfigType.LIST, NO_DEFAULT,
            "comma-separated URLs, tried in order (fail-over on connection errors, 408, 429, 5xx)", "high")
    _define(c, "basic.auth.credentials.source", ConfigType.STRING, "URL",
            "`URL` (user info in the URL), `USER_INFO` or `SASL_INHERIT`")
    _define(c, "schema.registry.basic.auth.credentials.source", ConfigType.STRING, None,
            "older spelling of `basic.auth.credentials.source`, used when that is not set")
    _define(c, "basic.auth.user.info", ConfigType.PASSWORD, None, "`user:password` for `USER_INFO`")
    _define(c, "schema.registry.basic.auth.user.info", ConfigType.PASSWORD, None,
            "older spelling of `basic.auth.user.info`, used when that is not set")
    _define(c, "sasl.jaas.config", ConfigType.PASSWORD, None, "username and password for `SASL_INHERIT`")
    _define(c, "bearer.auth.credentials.source", ConfigType.STRING, None,
            "`STATIC_TOKEN` (the only one supported)")
    _define(c, "bearer.auth.token", ConfigType.PASSWORD, None, "the token for `STATIC_TOKEN`")
    for name, type, doc in (
        ("truststore.location", ConfigType.STRING, "PEM file of CA certificates"),
        ("truststore.certificates", ConfigType.PASSWORD, "PEM text of CA certificates"),
        ("truststore.type", ConfigType.STRING, "only `PEM` (the default when unset); JKS/PKCS12 are rejected"),
        ("keystore.type", ConfigType.STRING, "only `PEM` (the default when unset); JKS/PKCS12 are rejected"),
        ("keystore.location", ConfigType.STRING, "PEM file with the client certificate (and key)"),
        ("keystore.certificate.chain", ConfigType.STRING, "read as `keystore.location` when that is not set"),
        ("keystore.key", ConfigType.STRING, "PEM file of the client key, when not in the keystore file"),
        ("key.password", ConfigType.PASSWORD, "password of the client key"),
        ("keystore.password", ConfigType.PASSWORD, "read as `key.password` when that is not set"),
    ):
        _define(c, SSL_PREFIX + name, type, None, doc)
    _define(c, SSL_ALGORITHM_CONFIG, ConfigType.STRING, "https", "`\"\"` turns host name verification off")
    _define(c, "max.retries", ConfigType.INT, 3, "retries per request (each retry tries every URL)")
    _define(c, "retries.wait.ms", ConfigType.INT, 1000, "first backoff between retry rounds, doubled each round")
    _define(c, "retries.max.wait.ms", ConfigType.INT, 20000, "backoff cap")
    _define(c, "http.connect.timeout.ms", ConfigType.INT, 60000, "HTTP connect timeout")
    _define(c, "http.read.timeout.ms", ConfigType.INT, 60000, "HTTP read timeout")
    _define(c, SCHEMAS_CACHE_CONFIG, ConfigType.INT, 1000, "size of the schema caches (at least 1 is used)")
    return c


def _serde_config() -> ConfigDef:
    c = CLIENT_CONFIG.copy()
    _define(c, "auto.register.schemas", ConfigType.BOOLEAN, True, "writing registers the schema (else looks it up)")
    _define(c, "use.latest.version", ConfigType.BOOLEAN, False, "read into and write with the subject's latest schema")
    _define(c, "normalize.schemas", ConfigType.BOOLEAN, False, "sent with registrations and lookups")
    for key, side in ((KEY_SUBJECT_NAME_STRATEGY, "key"), (VALUE_SUBJECT_NAME_STRATEGY, "value")):
        _define(c, key, ConfigType.CLASS, TopicNameStrategy.JAVA_NAME,
                f"subject of a {side}'s schema: also `RecordNameStrategy`, `TopicRecordNameStrategy` "
                "(full or simple names, `module:Class`)")
    return c


CLIENT_CONFIG = _client_config()
SERDE_CONFIG = _serde_config()
