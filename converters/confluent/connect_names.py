"""Names Confluent's Avro, JSON Schema and Protobuf data classes all give Connect schemas.

Schema properties (``connect.*``), the parameters of Connect's generalized sum
types (``generalized.sum.type.support``), the field names of map entries and
the name of an unnamed record: each format's own names (``io.confluent.connect.avro.*``,
...) stay in its data module.
"""

from __future__ import annotations

CONNECT_TYPE_PROP = "connect.type"
CONNECT_VERSION_PROP = "connect.version"
CONNECT_PARAMETERS_PROP = "connect.parameters"
CONNECT_DECIMAL_PRECISION_PROP = "connect.decimal.precision"

GENERALIZED_TYPE_UNION = "org.apache.kafka.connect.data.Union"
GENERALIZED_TYPE_ENUM = "org.apache.kafka.connect.data.Enum"
GENERALIZED_TYPE_UNION_PREFIX = "connect_union_"
GENERALIZED_TYPE_UNION_FIELD_PREFIX = GENERALIZED_TYPE_UNION_PREFIX + "field_"

KEY_FIELD = "key"
VALUE_FIELD = "value"
DEFAULT_SCHEMA_NAME = "ConnectDefault"
