"""Tests of the Confluent Schema Registry converters, and helpers they share."""

from __future__ import annotations

import itertools
import warnings
from typing import Any

_counter = itertools.count()

try:  # authlib (imported by confluent_kafka.schema_registry) warns about httpx at import time
    import authlib.deprecate  # noqa: F401  (installs its own "always" filter first)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import confluent_kafka.schema_registry  # noqa: F401
except ImportError:  # pragma: no cover
    pass


def unique(prefix: str = "topic") -> str:
    """A topic/subject name no other test uses (the test registry is session-wide)."""
    return f"{prefix}-{next(_counter)}"


def confluent_client(url: str, **conf: Any):
    """confluent-kafka's own SchemaRegistryClient (its import warns about authlib's httpx)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from confluent_kafka.schema_registry import SchemaRegistryClient
    return SchemaRegistryClient({"url": url, **conf})


def serialization_context(topic: str, is_key: bool = False, headers: Any = None):
    from confluent_kafka.serialization import MessageField, SerializationContext

    return SerializationContext(topic, MessageField.KEY if is_key else MessageField.VALUE, headers)


def converter(cls: type, url: str, is_key: bool = False, **config: Any):
    """A configured converter; ``config`` keys use ``_`` for ``.``."""
    conv = cls()
    conv.configure({"schema.registry.url": url, **{k.replace("_", "."): v for k, v in config.items()}},
                   is_key)
    return conv
