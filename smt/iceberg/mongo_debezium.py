"""``MongoDebeziumTransform``: type Debezium MongoDB change events.

``org.apache.iceberg.connect.transforms.MongoDebeziumTransform``. Debezium's
MongoDB connector sends the document images ``before``/``after`` (and, for
partial updates, ``updateDescription.updatedFields``) as Extended JSON
strings. This transform parses them and infers a Connect schema from the BSON
types, so that the event carries typed optional ``before``/``after`` structs --
the shape :class:`smt.iceberg.debezium.DebeziumTransform` expects next in the
chain. The record key becomes a struct ``{id}`` typed the same way.

Records without a Debezium MongoDB key (schema name ending ``.Key``) and
envelope (value schema name ending ``.Envelope``), heartbeats for example,
become tombstones; tombstones pass through.
"""

from __future__ import annotations

import logging

from connector.api.config_def import ConfigDef, ConfigType
from connector.api.errors import DataException
from connector.api.java.value_of import java_str
from connector.api.record import SinkRecord
from connector.api.schema import Schema, SchemaBuilder
from connector.api.struct import Struct
from smt.base import Transformation, require_struct
from smt.iceberg._bson import BsonValue, parse_document
from smt.iceberg._mongo_converter import ArrayEncoding, MongoDataConverter
from smt.iceberg._util import struct_get

LOG = logging.getLogger(__name__)

ARRAY_HANDLING_MODE = "array_handling_mode"
KEY_SCHEMA_NAME_SUFFIX = ".Key"
ENVELOPE_SCHEMA_NAME_SUFFIX = ".Envelope"

UPDATE_DESCRIPTION = "updateDescription"
UPDATED_FIELDS = "updatedFields"
REMOVED_FIELDS = "removedFields"
AFTER = "after"
BEFORE = "before"


class MongoDebeziumTransform(Transformation):
    """Parse ``before``/``after`` Extended JSON into typed structs; key -> ``{id}`` struct.

    ``array_handling_mode``: ``array`` (default) types BSON arrays as Connect
    arrays (elements must share one type); ``document`` turns each array into
    a struct with fields ``_0``, ``_1``, ...
    """

    CONFIG_DEF = ConfigDef().define(
        ARRAY_HANDLING_MODE, ConfigType.STRING, "array", importance="medium",
        doc="array or document handling for mongodb arrays",
    )

    def __init__(self) -> None:
        self.converter = MongoDataConverter(ArrayEncoding.ARRAY)

    def _configure(self, config: dict) -> None:
        # Like the Java transform, an unknown mode falls back to "array".
        self.converter = MongoDataConverter(ArrayEncoding.parse(config[ARRAY_HANDLING_MODE]) or ArrayEncoding.ARRAY)

    def apply(self, record: SinkRecord) -> SinkRecord:
        if record.value is None:
            return record
        if not _has_name_suffix(record.key_schema, KEY_SCHEMA_NAME_SUFFIX) or not _has_name_suffix(
            record.value_schema, ENVELOPE_SCHEMA_NAME_SUFFIX
        ):
            LOG.debug(
                'Expected Key Schema/Envelope for transformation, converting to tombstone. Message key: "%s"',
                record.key,
            )
            return record.new_record(
                record.topic, record.kafka_partition, None, None, None, None, record.timestamp, record.headers,
            )

        envelope = require_struct(record.value, "MongoDebeziumTransform")
        key = require_struct(record.key, "MongoDebeziumTransform key")
        after_text = struct_get(envelope, AFTER)
        before_text = struct_get(envelope, BEFORE)
        update_description = struct_get(envelope, UPDATE_DESCRIPTION)
        if before_text is None and after_text is None and update_description is None:
            raise DataException(
                f"malformed record topic: {record.topic}, partition: {record.kafka_partition}, "
                f"offset: {record.kafka_offset}"
            )

        key_id = struct_get(key, "id")
        if key_id is None:
            raise DataException(f"Debezium MongoDB key has no id ({record.describe()})")
        key_doc = parse_document("{ \"id\" : " + java_str(key_id) + "}")

        before_doc = parse_document(str(before_text)) if before_text is not None else None
        if after_text is None and update_description is not None:
            after_doc = self._after_from_partials(update_description, dict(before_doc or {}), key_doc)
        elif after_text is not None:
            after_doc = parse_document(str(after_text))
        else:
            after_doc = None
        return self._new_record(record, envelope, key_doc, before_doc, after_doc)

    @staticmethod
    def _after_from_partials(
        update_description: object, document: dict[str, BsonValue], key_doc: dict[str, BsonValue]
    ) -> dict[str, BsonValue]:
        """An ``after`` image from ``before`` (if any) plus updatedFields minus removedFields.

        The key's id is added as ``_id`` when the result has none (its BSON type
        is what the key's text parses to, so a long id may become an int).
        """
        update = require_struct(update_description, UPDATE_DESCRIPTION)
        updated = struct_get(update, UPDATED_FIELDS)
        removed = struct_get(update, REMOVED_FIELDS)
        if updated is not None:
            document.update(parse_document(str(updated)))
        for name in removed or ():
            document.pop(name, None)
        if "_id" not in document:
            document["_id"] = key_doc["id"]
        return document

    def _new_record(
        self,
        record: SinkRecord,
        envelope: Struct,
        key_doc: dict[str, BsonValue],
        before_doc: dict[str, BsonValue] | None,
        after_doc: dict[str, BsonValue] | None,
    ) -> SinkRecord:
        converter = self.converter
        key_schema = converter.document_schema(key_doc)
        key = converter.document_struct(key_doc, key_schema)

        images = {AFTER: after_doc, BEFORE: before_doc}
        old_schema = envelope.schema
        builder = SchemaBuilder.struct()
        if old_schema.name is not None:
            builder.name(old_schema.name)
        image_schemas: dict[str, Schema] = {}
        image_docs: dict[str, dict[str, BsonValue]] = {}
        for field in old_schema.fields():
            if field.name in images:
                doc = images[field.name]
                if doc is not None:
                    image_docs[field.name] = doc
                    image_schemas[field.name] = converter.document_schema(doc, optional=True)
                    builder.field(field.name, image_schemas[field.name])
            else:
                builder.field(field.name, field.schema)
        value_schema = builder.build()

        value = Struct(value_schema)
        for field in value_schema.fields():
            if field.name in image_schemas:
                value.put(field, converter.document_struct(image_docs[field.name], field.schema))
            else:
                value.put(field, envelope.get(field.name))
        return record.new_record(
            record.topic, record.kafka_partition, key_schema, key, value_schema, value,
            record.timestamp, record.headers,
        )


def _has_name_suffix(schema: Schema | None, suffix: str) -> bool:
    return schema is not None and schema.name is not None and schema.name.endswith(suffix)
