"""Kafka Connect's exception hierarchy.

Names and meaning follow ``org.apache.kafka.connect.errors`` and
``org.apache.kafka.common.config.ConfigException`` so that error handling
(``errors.tolerance``, retries, the dead-letter queue) can reason about them the
way Connect does.
"""

from __future__ import annotations

from connector.api.java.value_of import java_str


class ConnectException(Exception):
    """Base class of every error raised by Connect-style code."""


class DataException(ConnectException):
    """A record, schema or value is invalid (conversion and transformation errors)."""


class SchemaBuilderException(DataException):
    """A schema was built inconsistently (e.g. a field added to a non-struct)."""


class SchemaProjectorException(DataException):
    """A value cannot be projected onto another schema."""


class RetriableException(ConnectException):
    """A transient failure: the operation may succeed if retried."""


class NotFoundException(ConnectException):
    """A named resource (connector, task, schema, ...) does not exist."""


class AlreadyExistsException(ConnectException):
    """A named resource already exists."""


class ConfigException(ConnectException):
    """A configuration value is missing or invalid.

    Mirrors Kafka's ``ConfigException(name, value, message)``: when given a key
    and a value, the message reads ``Invalid value <value> for configuration
    <name>: <message>``.
    """

    #: Set by ConfigDef when a validator refuses a key: which key and parsed value.
    config_key: str | None = None
    config_value: object = None

    def __init__(self, name_or_message: str, value: object = None, message: str | None = None):
        self.name = name_or_message if message is not None or value is not None else None
        self.value = value
        self.reason = message
        if message is None and value is None:
            text = name_or_message
        else:
            text = f"Invalid value {java_str(value)} for configuration {name_or_message}"
            if message:
                text += f": {message}"
        super().__init__(text)
