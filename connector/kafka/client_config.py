"""Kafka Connect worker and connector properties -> librdkafka client configuration.

icefloe reads the same files a Kafka Connect deployment already has: the
worker's ``.properties`` file and the connector's JSON config. Connect hands
those to the Java Kafka client; icefloe talks to Kafka through librdkafka
(confluent-kafka), whose configuration mostly shares the Java names but not
entirely. This module does the translation:

* Precedence, as in Connect (``Worker.baseConsumerConfigs``): Connect's base
  consumer settings < the worker's connection keys (``bootstrap.servers``,
  ``security.protocol``, ``client.dns.lookup``, ``sasl.*``, ``ssl.*``) < the
  worker's ``consumer.*`` keys < the connector's ``consumer.override.*`` keys.
  Java Connect applies only ``bootstrap.servers`` from the worker's top level
  to sink consumers; icefloe also inherits the worker's security keys, because
  a worker that authenticates almost always needs its consumers to as well
  (``consumer.*`` still wins).
* Java-only keys (deserializers, interceptors, metrics reporters,
  ``max.poll.records``, ...) are dropped and reported, not passed on:
  librdkafka refuses unknown keys.
* Keys with another name or encoding in librdkafka are translated:
  ``sasl.jaas.config`` becomes ``sasl.username``/``sasl.password`` (or the
  OAUTHBEARER / Kerberos equivalents), PEM trust/key stores become
  ``ssl.ca.location``/``ssl.certificate.location``/``ssl.key.location``, and
  so on. A JKS store (which librdkafka cannot read) is a :class:`KafkaConfigError`
  (a ``ValueError``).
* Throughput settings that lift librdkafka's consumption rate about 4x on
  bounded reads are added unless the user set them (see
  :data:`THROUGHPUT_DEFAULTS`).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from connector.api.errors import ConfigException
from connector.config.java_properties import ESCAPES
from connector.kafka.client_log import librdkafka_log

_LOG = logging.getLogger(__name__)


class KafkaConfigError(ConfigException, ValueError):
    """A Kafka client setting that cannot be used (or translated for librdkafka)."""

# --------------------------------------------------------------------------
# librdkafka's own property names (librdkafka 2.16 CONFIGURATION.md), the
# allowlist for passing keys through. Callback and pointer properties are
# omitted: they cannot come from a properties file.
# --------------------------------------------------------------------------
_LIBRDKAFKA_GLOBAL_KEYS = frozenset(
    """
    allow.auto.create.topics api.version.fallback.ms api.version.request
    api.version.request.timeout.ms bootstrap.servers broker.address.family
    broker.address.ttl broker.version.fallback builtin.features client.dns.lookup
    client.id client.rack connections.max.idle.ms debug enable.metrics.push
    enable.random.seed enable.sasl.oauthbearer.unsecure.jwt
    enable.ssl.certificate.verification https.ca.location https.ca.pem
    internal.termination.signal log.connection.close log.queue log.thread.name
    log_level max.in.flight max.in.flight.requests.per.connection
    message.copy.max.bytes message.max.bytes metadata.broker.list
    metadata.max.age.ms metadata.recovery.rebootstrap.trigger.ms
    metadata.recovery.strategy plugin.library.paths receive.message.max.bytes
    reconnect.backoff.jitter.ms reconnect.backoff.max.ms reconnect.backoff.ms
    retry.backoff.max.ms retry.backoff.ms sasl.kerberos.keytab
    sasl.kerberos.kinit.cmd sasl.kerberos.min.time.before.relogin
    sasl.kerberos.principal sasl.kerberos.service.name sasl.mechanism
    sasl.mechanisms sasl.oauthbearer.assertion.algorithm
    sasl.oauthbearer.assertion.claim.aud sasl.oauthbearer.assertion.claim.exp.seconds
    sasl.oauthbearer.assertion.claim.iss sasl.oauthbearer.assertion.claim.jti.include
    sasl.oauthbearer.assertion.claim.nbf.seconds sasl.oauthbearer.assertion.claim.sub
    sasl.oauthbearer.assertion.file sasl.oauthbearer.assertion.jwt.template.file
    sasl.oauthbearer.assertion.private.key.file
    sasl.oauthbearer.assertion.private.key.passphrase
    sasl.oauthbearer.assertion.private.key.pem
    sasl.oauthbearer.client.credentials.client.id
    sasl.oauthbearer.client.credentials.client.secret sasl.oauthbearer.client.id
    sasl.oauthbearer.client.secret sasl.oauthbearer.config
    sasl.oauthbearer.extensions sasl.oauthbearer.grant.type
    sasl.oauthbearer.metadata.authentication.type sasl.oauthbearer.method
    sasl.oauthbearer.scope sasl.oauthbearer.sub.claim.name
    sasl.oauthbearer.token.endpoint.url sasl.password sasl.username
    security.protocol socket.blocking.max.ms socket.connection.setup.timeout.ms
    socket.keepalive.enable socket.max.fails socket.nagle.disable
    socket.receive.buffer.bytes socket.send.buffer.bytes socket.timeout.ms
    ssl.ca.certificate.stores ssl.ca.location ssl.ca.pem ssl.certificate.location
    ssl.certificate.pem ssl.crl.location ssl.curves.list
    ssl.endpoint.identification.algorithm ssl.engine.id ssl.engine.location
    ssl.key.location ssl.key.password ssl.key.pem ssl.keystore.location
    ssl.keystore.password ssl.providers ssl.sigalgs.list statistics.interval.ms
    topic.blacklist topic.metadata.propagation.max.ms topic.metadata.refresh.fast.cnt
    topic.metadata.refresh.fast.interval.ms topic.metadata.refresh.interval.ms
    topic.metadata.refresh.sparse
    """.split()
)

_LIBRDKAFKA_CONSUMER_KEYS = _LIBRDKAFKA_GLOBAL_KEYS | frozenset(
    """
    auto.commit.enable auto.commit.interval.ms auto.offset.reset check.crcs
    consume.callback.max.messages coordinator.query.interval.ms enable.auto.commit
    enable.auto.offset.store enable.partition.eof fetch.error.backoff.ms
    fetch.max.bytes fetch.message.max.bytes fetch.min.bytes fetch.queue.backoff.ms
    fetch.wait.max.ms group.id group.instance.id group.protocol
    group.protocol.type group.remote.assignor heartbeat.interval.ms
    isolation.level max.partition.fetch.bytes max.poll.interval.ms
    queued.max.messages.kbytes queued.min.messages session.timeout.ms
    """.split()
)

# Names librdkafka knows but with a meaning or value syntax different from the
# Java client's; from a Connect config they are Java settings and are dropped.
_JAVA_SEMANTICS = {
    "max.poll.records": "Java's per-poll record cap; librdkafka's key of this name is for share consumers",
    "partition.assignment.strategy": "Java assignor class names; icefloe assigns partitions itself",
    "ssl.cipher.suites": (
        "Java (IANA) cipher suite names; librdkafka expects OpenSSL names, set them natively if needed"
    ),
}

# Java name -> librdkafka name, same meaning.
_RENAMED = {
    "fetch.max.wait.ms": "fetch.wait.max.ms",
    "send.buffer.bytes": "socket.send.buffer.bytes",
    "receive.buffer.bytes": "socket.receive.buffer.bytes",
    "request.timeout.ms": "socket.timeout.ms",
}

# Java SSL keys with no librdkafka counterpart once the stores are mapped.
_SSL_CONSUMED = frozenset(
    """
    ssl.truststore.location ssl.truststore.type ssl.truststore.password
    ssl.truststore.certificates ssl.keystore.type ssl.keystore.certificate.chain
    ssl.keystore.key
    """.split()
)

#: librdkafka settings that lift bounded-range consumption about 4x over its
#: defaults (which back off fetching for up to 1 s whenever the local queue is
#: "full enough"). Applied only where the user set nothing.
THROUGHPUT_DEFAULTS: dict[str, str] = {
    # Keep up to this many records prefetched per partition ...
    "queued.min.messages": "200000",
    # ... and when the queue is full, re-check it soon instead of after 1 s.
    "fetch.queue.backoff.ms": "10",
    # Do not let the broker park a fetch for 500 ms at the end of a range.
    "fetch.wait.max.ms": "10",
    # Bigger fetches: fewer round trips per record.
    "max.partition.fetch.bytes": str(8 * 1024 * 1024),
    "fetch.max.bytes": str(64 * 1024 * 1024),
}

_WORKER_CONNECTION_KEYS = frozenset({"bootstrap.servers", "security.protocol", "client.dns.lookup"})
_WORKER_CONNECTION_PREFIXES = ("sasl.", "ssl.")

# Keys a connector may override under connector.client.config.override.policy=Principal.
_PRINCIPAL_OVERRIDES = frozenset({"sasl.jaas.config", "sasl.mechanism", "security.protocol"})


@dataclass(frozen=True)
class DroppedKey:
    """A configuration key that was not passed to librdkafka, and why."""

    key: str
    reason: str


@dataclass
class ClientConfig:
    """A librdkafka configuration plus the keys that were left out of it."""

    conf: dict[str, str]
    dropped: list[DroppedKey] = field(default_factory=list)


# --------------------------------------------------------------------------
# JAAS (sasl.jaas.config)
# --------------------------------------------------------------------------
_JAAS_MODULE = re.compile(r"\s*([\w.$]+)\s+(required|requisite|sufficient|optional)\b", re.IGNORECASE)
_JAAS_OPTION = re.compile(
    r"""\s*([^\s=;]+)\s*=\s*("(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|[^\s;"']+)""", re.DOTALL
)


def parse_jaas_config(jaas: str) -> tuple[str, dict[str, str]]:
    """Split a ``sasl.jaas.config`` value into login module class and options.

    Example: ``org.apache.kafka.common.security.plain.PlainLoginModule
    required username="alice" password="secret";``. Quoted values may use
    backslash escapes.
    """
    match = _JAAS_MODULE.match(jaas)
    if not match:
        raise KafkaConfigError(
            "sasl.jaas.config must look like '<LoginModule class> required key=\"value\" ...;'"
        )
    module, position, options = match.group(1), match.end(), {}
    while True:
        option = _JAAS_OPTION.match(jaas, position)
        if not option:
            break
        options[option.group(1)] = _jaas_value(option.group(2))
        position = option.end()
    if jaas[position:].strip() != ";":
        # The unparsed rest is not quoted: it usually holds the password.
        raise KafkaConfigError(f"sasl.jaas.config: cannot parse the options of {module} from character {position} "
                               "(missing ';', or an unterminated quote?)")
    return module, options


def _jaas_value(token: str) -> str:
    if token[:1] in ("'", '"'):
        return re.sub(r"\\(.)", lambda m: ESCAPES.get(m.group(1), m.group(1)), token[1:-1])
    return token


def _translate_jaas(jaas: str) -> dict[str, str]:
    """librdkafka settings equivalent to a JAAS login module configuration."""
    module, options = parse_jaas_config(jaas)
    simple_name = module.rsplit(".", 1)[-1]
    if simple_name in ("PlainLoginModule", "ScramLoginModule"):
        return _require_options(options, simple_name, username="sasl.username", password="sasl.password")
    if simple_name == "OAuthBearerLoginModule":
        return _translate_oauthbearer(options)
    if simple_name == "Krb5LoginModule":
        conf = {
            "sasl.kerberos.keytab": options.get("keyTab", ""),
            "sasl.kerberos.principal": options.get("principal", ""),
        }
        return {key: value for key, value in conf.items() if value}
    raise KafkaConfigError(
        f"sasl.jaas.config uses login module {module}, which has no librdkafka equivalent; "
        "configure librdkafka's SASL settings (e.g. consumer.sasl.username / sasl.oauthbearer.*) instead"
    )


def _require_options(options: Mapping[str, str], module: str, **mapping: str) -> dict[str, str]:
    missing = [name for name in mapping if name not in options]
    if missing:
        raise KafkaConfigError(f"sasl.jaas.config: {module} needs option(s) {', '.join(missing)}")
    return {target: options[name] for name, target in mapping.items()}


def _translate_oauthbearer(options: Mapping[str, str]) -> dict[str, str]:
    """OAUTHBEARER: OIDC client credentials, or an unsecured test token."""
    if "clientId" in options:
        conf = {"sasl.oauthbearer.method": "oidc", "sasl.oauthbearer.client.id": options["clientId"]}
        if "clientSecret" in options:
            conf["sasl.oauthbearer.client.secret"] = options["clientSecret"]
        if "scope" in options:
            conf["sasl.oauthbearer.scope"] = options["scope"]
        return conf
    claims = {k.split("_", 1)[1]: v for k, v in options.items() if k.startswith("unsecuredLoginStringClaim_")}
    if claims:
        return {
            "enable.sasl.oauthbearer.unsecure.jwt": "true",
            "sasl.oauthbearer.config": " ".join(
                f"principal={v}" if k == "sub" else f"{k}={v}" for k, v in claims.items()
            ),
        }
    raise KafkaConfigError(
        "sasl.jaas.config: OAuthBearerLoginModule needs clientId (OIDC) or unsecuredLoginStringClaim_sub"
    )


# --------------------------------------------------------------------------
# SSL stores
# --------------------------------------------------------------------------
def _store_kind(props: Mapping[str, str], prefix: str) -> str:
    """``PEM``, ``PKCS12`` or ``JKS`` for ``ssl.truststore`` / ``ssl.keystore``.

    Java defaults the type to JKS; when it is not given, the file's first
    bytes decide (a PEM header, or DER for PKCS12), since librdkafka users
    often point these keys at PEM files without setting the type.
    """
    declared = props.get(f"{prefix}.type", "").strip().upper()
    if declared:
        return declared
    path = props[f"{prefix}.location"]
    try:
        with open(path, "rb") as handle:
            head = handle.read(64)
    except OSError:
        return "JKS"
    if b"-----BEGIN" in head:
        return "PEM"
    if head[:4] == b"\xfe\xed\xfe\xed":
        return "JKS"
    return "PKCS12" if head[:1] == b"\x30" else "JKS"


def _unreadable_store(key: str, kind: str) -> KafkaConfigError:
    return KafkaConfigError(
        f"{key}: librdkafka cannot read a {kind} store. Supply PEM instead "
        f"(convert with keytool/openssl and set {key.rsplit('.', 1)[0]}.type=PEM)."
    )


def _translate_ssl(props: Mapping[str, str]) -> dict[str, str]:
    """librdkafka settings for Java's trust store and key store keys."""
    conf: dict[str, str] = {}
    if "ssl.truststore.location" in props:
        kind = _store_kind(props, "ssl.truststore")
        if kind != "PEM":
            raise _unreadable_store("ssl.truststore.location", kind)
        conf["ssl.ca.location"] = props["ssl.truststore.location"]
    if "ssl.truststore.certificates" in props:
        conf["ssl.ca.pem"] = props["ssl.truststore.certificates"]
    if "ssl.keystore.location" in props:
        kind = _store_kind(props, "ssl.keystore")
        path = props["ssl.keystore.location"]
        if kind == "PEM":  # key and certificate chain in one PEM file
            conf["ssl.certificate.location"] = path
            conf["ssl.key.location"] = path
        elif kind == "PKCS12":
            conf["ssl.keystore.location"] = path
            if "ssl.keystore.password" in props:
                conf["ssl.keystore.password"] = props["ssl.keystore.password"]
        else:
            raise _unreadable_store("ssl.keystore.location", kind)
    if "ssl.keystore.certificate.chain" in props:
        conf["ssl.certificate.pem"] = props["ssl.keystore.certificate.chain"]
    if "ssl.keystore.key" in props:
        conf["ssl.key.pem"] = props["ssl.keystore.key"]
    return conf


# --------------------------------------------------------------------------
# Translation of one merged layer of Java-named properties
# --------------------------------------------------------------------------
def _translate_value(key: str, value: str) -> str:
    """Values whose spelling differs between the Java client and librdkafka."""
    if key == "auto.offset.reset" and value.strip().lower() == "none":
        return "error"  # both mean: fail when there is no valid offset
    if key == "ssl.endpoint.identification.algorithm":
        return value.strip().lower() or "none"  # Java's "" disables the check
    if key in ("socket.send.buffer.bytes", "socket.receive.buffer.bytes") and value.strip() == "-1":
        return "0"  # Java -1 and librdkafka 0 both mean the OS default
    if key == "bootstrap.servers":
        return ",".join(part.strip() for part in value.split(",") if part.strip())
    return value


def translate_client_properties(
    props: Mapping[str, str], allowed: frozenset[str] = _LIBRDKAFKA_CONSUMER_KEYS
) -> ClientConfig:
    """Translate Java client properties (already merged by precedence) for librdkafka.

    Settings derived from ``sasl.jaas.config`` and the SSL stores do not
    replace librdkafka-native keys set explicitly (e.g. ``ssl.ca.location``).
    """
    derived: dict[str, str] = {}
    if "sasl.jaas.config" in props:
        derived.update(_translate_jaas(props["sasl.jaas.config"]))
    derived.update(_translate_ssl(props))

    conf: dict[str, str] = {}
    dropped: list[DroppedKey] = []
    for key, value in props.items():
        target = _RENAMED.get(key, key)
        if key == "sasl.jaas.config" or key in _SSL_CONSUMED:
            continue
        if key in _JAVA_SEMANTICS:
            dropped.append(DroppedKey(key, _JAVA_SEMANTICS[key]))
        elif target in allowed:
            conf[target] = _translate_value(target, str(value))
        else:
            dropped.append(DroppedKey(key, "Java client setting with no librdkafka equivalent"))
    for key, value in derived.items():
        conf.setdefault(key, value)
    return ClientConfig(conf, dropped)


# --------------------------------------------------------------------------
# Layering, as Kafka Connect does it
# --------------------------------------------------------------------------
def _with_prefix(props: Mapping[str, str], prefix: str) -> dict[str, str]:
    """``originalsWithPrefix``: keys under ``prefix``, prefix stripped."""
    return {
        key[len(prefix) :]: str(value)
        for key, value in props.items()
        if key.startswith(prefix) and len(key) > len(prefix)
    }


def _worker_connection_keys(worker: Mapping[str, str]) -> dict[str, str]:
    return {
        key: str(value)
        for key, value in worker.items()
        if key in _WORKER_CONNECTION_KEYS or key.startswith(_WORKER_CONNECTION_PREFIXES)
    }


def _connector_overrides(worker: Mapping[str, str], connector: Mapping[str, str], prefix: str) -> dict[str, str]:
    """The connector's ``<prefix>*`` keys, checked against the worker's override policy."""
    overrides = _with_prefix(connector, prefix)
    policy = worker.get("connector.client.config.override.policy", "All").strip()
    if not overrides or policy == "All":
        return overrides
    if policy == "None":
        forbidden = sorted(overrides)
    elif policy == "Principal":
        forbidden = sorted(set(overrides) - _PRINCIPAL_OVERRIDES)
    else:
        raise KafkaConfigError(
            f"connector.client.config.override.policy={policy} is not supported (All, None, Principal)"
        )
    if forbidden:
        raise KafkaConfigError(
            f"The worker's connector.client.config.override.policy={policy} does not allow "
            + ", ".join(prefix + key for key in forbidden)
        )
    return overrides


def _merged_java_properties(
    base: Mapping[str, str], worker: Mapping[str, str], connector: Mapping[str, str], client: str
) -> dict[str, str]:
    """base < worker connection keys < worker ``<client>.*`` < connector ``<client>.override.*``."""
    merged = dict(base)
    merged.update(_worker_connection_keys(worker))
    merged.setdefault("bootstrap.servers", "localhost:9092")  # Connect's default
    merged.update(_with_prefix(worker, f"{client}."))
    merged.update(_connector_overrides(worker, connector, f"{client}.override."))
    return merged


def connect_group_id(connector_name: str) -> str:
    """Kafka Connect's consumer group for a sink connector (``SinkUtils.consumerGroupId``)."""
    return f"connect-{connector_name}"


def build_consumer_config(
    worker: Mapping[str, str], connector: Mapping[str, str], *, connector_name: str
) -> ClientConfig:
    """:func:`consumer_config`, also returning the keys that were dropped."""
    base = {
        "group.id": connect_group_id(connector_name),
        "client.id": f"connector-consumer-{connector_name}",
        "enable.auto.commit": "false",
        "enable.auto.offset.store": "false",
        "auto.offset.reset": "earliest",
        # The Java consumer's default, so icefloe reads what Connect would.
        "isolation.level": "read_uncommitted",
    }
    result = translate_client_properties(_merged_java_properties(base, worker, connector, "consumer"))
    for key, value in THROUGHPUT_DEFAULTS.items():
        result.conf.setdefault(key, value)
    return result


def consumer_config(worker: Mapping[str, str], connector: Mapping[str, str], *, connector_name: str) -> dict[str, str]:
    """librdkafka consumer configuration for a sink connector.

    ``worker`` is the worker's properties (:func:`load_worker_properties`),
    ``connector`` the connector's config. Dropped Java-only keys are logged
    as warnings; use :func:`build_consumer_config` to get them as data.
    """
    result = build_consumer_config(worker, connector, connector_name=connector_name)
    _log_dropped(result.dropped, "consumer")
    return result.conf


def build_admin_config(worker: Mapping[str, str], connector: Mapping[str, str], *, connector_name: str) -> ClientConfig:
    """:func:`admin_config`, also returning the keys that were dropped."""
    base = {"client.id": f"connector-adminclient-{connector_name}"}
    merged = _merged_java_properties(base, worker, connector, "admin")
    return translate_client_properties(merged, allowed=_LIBRDKAFKA_GLOBAL_KEYS)


def admin_config(worker: Mapping[str, str], connector: Mapping[str, str], *, connector_name: str) -> dict[str, str]:
    """librdkafka AdminClient configuration: worker < ``admin.*`` < ``admin.override.*``."""
    result = build_admin_config(worker, connector, connector_name=connector_name)
    _log_dropped(result.dropped, "admin")
    return result.conf


def admin_config_from(client_conf: Mapping[str, object]) -> dict[str, Any]:
    """The subset of a (consumer) librdkafka config an AdminClient accepts.

    AdminClient warns about every consumer-only key; this keeps connection,
    security and other global settings. (Values are librdkafka's: strings,
    numbers, booleans, or callbacks such as ``error_cb``; hence ``Any``.)
    """
    conf: dict[str, Any] = {key: value for key, value in client_conf.items() if key in _LIBRDKAFKA_GLOBAL_KEYS}
    # Short-lived admin clients often log "Purging 1 unserved events from
    # background queue" (info) when destroyed: noise, warnings still show.
    conf.setdefault("log_level", 5)
    conf.setdefault("logger", librdkafka_log())
    return conf


def reader_config(client_conf: Mapping[str, object], forced: Mapping[str, object]) -> dict[str, object]:
    """``client_conf`` with throughput defaults filled in and ``forced`` applied.

    Used by the readers, which need a few settings regardless of the user's
    (e.g. partition EOF events). A placeholder ``group.id`` is added when
    missing because librdkafka consumers require one; icefloe's readers
    never join or commit to it.
    """
    conf: dict[str, object] = dict(client_conf)
    for key, value in THROUGHPUT_DEFAULTS.items():
        conf.setdefault(key, value)
    conf.setdefault("group.id", "icefloe-reader")
    conf.setdefault("logger", librdkafka_log())  # not librdkafka's stderr: icefloe's log, repeats counted
    conf.update(forced)
    return conf


def _log_dropped(dropped: list[DroppedKey], client: str) -> None:
    for item in dropped:
        _LOG.warning("Kafka %s setting %s is not passed to librdkafka: %s", client, item.key, item.reason)
