"""Subject name strategies (``key.subject.name.strategy`` / ``value.subject.name.strategy``).

The subject is where a schema is registered (``from_connect_data`` with
``auto.register.schemas``) and where the converters look a schema up (its
version, or the latest version with ``use.latest.version``).

===================================================================== ===========================
``io.confluent.kafka.serializers.subject.TopicNameStrategy`` (default) ``<topic>-key`` / ``<topic>-value``
``io.confluent.kafka.serializers.subject.RecordNameStrategy``          the record's full name
``io.confluent.kafka.serializers.subject.TopicRecordNameStrategy``     ``<topic>-<record full name>``
===================================================================== ===========================

The "record name" is the Avro record's full name, the Protobuf message's full
name, or the JSON Schema's ``title``. A schema without one (an Avro ``string``,
a JSON Schema without title) cannot be used with the two record strategies:
that is a :class:`~connector.api.errors.DataException`, as in Confluent's
serializers. The simple class name (``RecordNameStrategy``) and
``module:Class`` (a Python class with the same ``subject_name`` method) are
accepted too.
"""

from __future__ import annotations

import abc
from typing import Any

from connector.api.errors import ConfigException, DataException
from connector.api.plugins import import_object

PACKAGE = "io.confluent.kafka.serializers.subject."
KEY_SUBJECT_NAME_STRATEGY = "key.subject.name.strategy"
VALUE_SUBJECT_NAME_STRATEGY = "value.subject.name.strategy"


class SubjectNameStrategy(abc.ABC):
    """Base class: ``subject_name(topic, is_key, record_name)``."""

    JAVA_NAME = ""
    #: True when the subject depends on the schema (so it needs the record name).
    uses_schema = False

    def configure(self, config: dict) -> None:  # pragma: no cover - nothing to configure  # noqa: B027 - optional hook
        pass

    @abc.abstractmethod
    def subject_name(self, topic: str | None, is_key: bool, record_name: str | None) -> str | None:
        """The registry subject for a record of ``topic`` (and ``record_name``)."""


class TopicNameStrategy(SubjectNameStrategy):
    """``<topic>-key`` or ``<topic>-value``: one schema lineage per topic."""

    JAVA_NAME = PACKAGE + "TopicNameStrategy"

    def subject_name(self, topic, is_key, record_name):
        if topic is None:
            return None
        return f"{topic}-key" if is_key else f"{topic}-value"


class RecordNameStrategy(SubjectNameStrategy):
    """The fully-qualified record name: several record types per topic, one lineage per type."""

    JAVA_NAME = PACKAGE + "RecordNameStrategy"
    uses_schema = True

    def record_name(self, record_name: str | None, is_key: bool) -> str:
        if record_name:
            return record_name
        key = KEY_SUBJECT_NAME_STRATEGY if is_key else VALUE_SUBJECT_NAME_STRATEGY
        side = "key" if is_key else "value"
        raise DataException(
            f"In configuration {key} = {self.JAVA_NAME}, the message {side} must only be a record "
            f"schema (a named Avro record, a Protobuf message or a JSON Schema with a title)")

    def subject_name(self, topic, is_key, record_name):
        return self.record_name(record_name, is_key)


class TopicRecordNameStrategy(RecordNameStrategy):
    """``<topic>-<record full name>``."""

    JAVA_NAME = PACKAGE + "TopicRecordNameStrategy"

    def subject_name(self, topic, is_key, record_name):
        if topic is None:
            return None
        return f"{topic}-{self.record_name(record_name, is_key)}"


STRATEGIES: dict[str, type[SubjectNameStrategy]] = {
    cls.JAVA_NAME: cls for cls in (TopicNameStrategy, RecordNameStrategy, TopicRecordNameStrategy)
}
# Older Confluent releases had the same classes in another package.
STRATEGIES.update({
    "io.confluent.kafka.serializers.subject.strategy." + cls.__name__: cls
    for cls in (TopicNameStrategy, RecordNameStrategy, TopicRecordNameStrategy)
})


def load_strategy(value: Any, config_key: str = VALUE_SUBJECT_NAME_STRATEGY) -> SubjectNameStrategy:
    """A strategy instance from a config value (Java class name, simple name or ``module:Class``)."""
    if value is None or value == "":
        return TopicNameStrategy()
    if isinstance(value, SubjectNameStrategy):
        return value
    if isinstance(value, type) and issubclass(value, SubjectNameStrategy):
        return value()
    name = str(value).strip()
    cls: Any = STRATEGIES.get(name)
    if cls is None:
        simple = {c.__name__: c for c in STRATEGIES.values()}
        cls = simple.get(name)
    if cls is None and ":" in name:
        cls = import_object(name)
    if cls is None:
        raise ConfigException(
            config_key, value,
            "unknown subject name strategy; use one of " + ", ".join(
                sorted(c.JAVA_NAME for c in (TopicNameStrategy, RecordNameStrategy,
                                             TopicRecordNameStrategy)))
            + " or 'python.module:Class'")
    strategy = cls() if isinstance(cls, type) else cls
    if not hasattr(strategy, "subject_name"):
        raise ConfigException(config_key, value, "a subject name strategy needs subject_name()")
    return strategy
