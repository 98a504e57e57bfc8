"""The Kafka Connect data API in Python: schemas, structs, records, errors.

This package imports nothing heavy (no Spark, no Arrow), so converters, SMTs
and user plugins can depend on it freely.
"""

from connector.api.errors import (
    AlreadyExistsException,
    ConfigException,
    ConnectException,
    DataException,
    NotFoundException,
    RetriableException,
    SchemaBuilderException,
    SchemaProjectorException,
)
from connector.api.logical import Date, Decimal, Time, Timestamp, logical_type_of
from connector.api.record import Header, SchemaAndValue, SinkRecord, TimestampType
from connector.api.schema import Field, Schema, SchemaBuilder, Type, validate_value
from connector.api.struct import Struct

__all__ = [
    "AlreadyExistsException", "ConfigException", "ConnectException", "DataException",
    "NotFoundException", "RetriableException", "SchemaBuilderException",
    "SchemaProjectorException", "Date", "Decimal", "Time", "Timestamp", "logical_type_of",
    "Header", "SchemaAndValue", "SinkRecord", "TimestampType", "Field", "Schema",
    "SchemaBuilder", "Type", "validate_value", "Struct",
]
