"""Which decode strategy a task takes, chosen once from its converters, SMT chain and routing.

Each strategy is named as ``TaskPipeline.batches`` counts it and as the
task's log line says it:

* ``columnar``: schemaless JSON values, no SMTs, every record to every table.
  The raw JSON goes straight to each table's schema (``JsonBatchConverter``).
* ``columnar with batch SMTs``: schemaless JSON values and an SMT chain with
  batch forms (``smt.batch``), or routing by a field. The values are parsed to
  Arrow maps once, transformed and routed column-wise; a stage without a batch
  form runs record by record for that stage only (``smt.batch.records``).
* ``columnar Avro``: Confluent Avro values (``AvroConverter``), no SMTs, every
  record to every table. The values of a batch are decoded at once by a
  native Avro reader into Arrow columns (``converters/batch/avro.py``).
* ``columnar Avro with batch SMTs``: Confluent Avro values, every record to
  every table, and an SMT chain whose every stage has a typed batch form
  (``smt/batch/``, one module per SMT: InsertField, ReplaceField, MaskField, HoistField,
  ExtractField, Cast, TimestampConverter, Flatten, SetSchemaMetadata, Filter,
  RegexRouter, TimestampRouter, with the batch predicates). The decoded struct column (tombstones as null rows) runs
  through the chain with its Connect schema, which each stage changes as its
  ``apply_with_schema`` does; the result goes into the tables like the
  other typed strategies. A chain with any other stage runs per record,
  with the stage named in the task's log line. The two JSON strategies below
  take such a chain the same way (``... with batch SMTs``), their tombstones
  put back as null rows first.
* ``columnar JSON with schemas``: JsonConverter envelopes
  (``schemas.enable=true``), no SMTs, every record to every table. The
  payloads of a batch whose envelopes share one schema are read at once by
  Arrow's JSON reader, typed by that schema (``converters/batch/json_envelope.py``).
* ``columnar JSON Schema``: Confluent JSON Schema values
  (``JsonSchemaConverter``), no SMTs, every record to every table. The
  payloads of a batch framed with one schema id are read the same way, typed
  by the Connect schema of the registered JSON schema
  (``converters/batch/json_schema.py``; the JSON rules shared with the
  envelopes: ``converters/batch/json_payloads.py``).
* ``columnar Protobuf``: Confluent Protobuf values (``ProtobufConverter``), every
  record to every table. The messages of a batch framed with one schema id and
  message type are parsed by the ``protobuf`` runtime in one call and read
  column by column, typed by the Connect schema the converter derives
  (``converters/batch/protobuf.py``, ``converters/batch/protobuf_columns.py``);
  with a typed SMT chain, ``columnar Protobuf with batch SMTs``, as for Avro.

  All the typed ones go into each table's schema through ``converters/batch/typed.py``.
* ``per-record``: Connect's own contract: converters → ``SinkRecord`` → SMT
  chain → route → ``RecordConverter`` (:mod:`connector.data.per_record`).
  Every other configuration, and every batch a columnar strategy declines.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Callable, Union

from connector.data.decoder import RecordDecoder
from connector.data.router import RecordRouter
from converters.batch.avro import AvroBatchReader
from converters.batch.json_envelope import EnvelopeReader
from converters.batch.json_schema import JsonSchemaBatchReader
from converters.batch.protobuf import ProtobufBatchReader
from converters.confluent.avro import AvroConverter
from converters.confluent.json_schema import JsonSchemaConverter
from converters.confluent.protobuf import ProtobufConverter
from converters.json import JsonConverter
from smt.batch import BatchTransformationChain
from smt.batch.records import RecordsOf
from smt.chain import TransformationChain

COLUMNAR = "columnar"
COLUMNAR_WITH_SMTS = "columnar with batch SMTs"
COLUMNAR_AVRO = "columnar Avro"
COLUMNAR_JSON_SCHEMAS = "columnar JSON with schemas"
COLUMNAR_JSON_SCHEMA = "columnar JSON Schema"
COLUMNAR_PROTOBUF = "columnar Protobuf"
#: Suffix of a typed strategy's name (Avro, JSON with schemas, JSON Schema) with an SMT chain in typed batch form.
WITH_SMTS = " with batch SMTs"
COLUMNAR_AVRO_WITH_SMTS = COLUMNAR_AVRO + WITH_SMTS
COLUMNAR_JSON_SCHEMAS_WITH_SMTS = COLUMNAR_JSON_SCHEMAS + WITH_SMTS
COLUMNAR_JSON_SCHEMA_WITH_SMTS = COLUMNAR_JSON_SCHEMA + WITH_SMTS
COLUMNAR_PROTOBUF_WITH_SMTS = COLUMNAR_PROTOBUF + WITH_SMTS
PER_RECORD = "per-record"

#: The strategies whose values carry Confluent's registry frame (magic byte, schema id).
REGISTRY_FRAMED = (COLUMNAR_AVRO, COLUMNAR_AVRO_WITH_SMTS, COLUMNAR_JSON_SCHEMA, COLUMNAR_JSON_SCHEMA_WITH_SMTS,
                   COLUMNAR_PROTOBUF, COLUMNAR_PROTOBUF_WITH_SMTS)
#: The strategies whose values are JSON objects (schemaless, or JsonConverter envelopes).
JSON_OBJECTS = (COLUMNAR, COLUMNAR_WITH_SMTS, COLUMNAR_JSON_SCHEMAS, COLUMNAR_JSON_SCHEMAS_WITH_SMTS)

#: Set to "false" to run every batch through the per-record strategy (an escape hatch, and for comparisons).
COLUMNAR_ENV = "ICEFLOE_COLUMNAR"

#: The readers that decode a batch's values at once into a Connect-typed struct column.
TypedReader = Union[AvroBatchReader, EnvelopeReader, JsonSchemaBatchReader, ProtobufBatchReader]


@dataclass(frozen=True)
class Strategy:
    """The task's decode strategy: its name, why it was chosen, and what its batches run through.

    ``batch_chain``: the SMT chain's batch form (schemaless JSON) or typed batch form; None without
    SMTs and for the per-record strategy. ``reader``: the typed strategies' reader, else None.
    """

    name: str
    reason: str
    batch_chain: BatchTransformationChain | None = None
    reader: TypedReader | None = None


def columnar_switched_on() -> bool:
    """Whether ``ICEFLOE_COLUMNAR`` leaves the columnar strategies on (anything but "false" does)."""
    return os.environ.get(COLUMNAR_ENV, "true").strip().lower() != "false"


def choose_strategy(columnar: bool, decoder: RecordDecoder, chain: TransformationChain, router: RecordRouter,
                    records_of: RecordsOf) -> Strategy:
    """The strategy for these converters, SMT chain and routing (``columnar=False``: per record).

    ``records_of``: how a batch SMT chain's per-record stages get their records (keys and headers
    through the converters).
    """
    if not columnar:
        return Strategy(PER_RECORD, "columnar strategies switched off")
    converter = decoder.value_converter
    if isinstance(converter, AvroConverter):
        return _typed_strategy(COLUMNAR_AVRO, "Confluent Avro", chain, router,
                               lambda: AvroBatchReader(converter))
    if isinstance(converter, JsonSchemaConverter):
        return _typed_strategy(COLUMNAR_JSON_SCHEMA, "Confluent JSON Schema", chain, router,
                               lambda: JsonSchemaBatchReader(converter))
    if isinstance(converter, ProtobufConverter):
        return _typed_strategy(COLUMNAR_PROTOBUF, "Confluent Protobuf", chain, router,
                               lambda: ProtobufBatchReader(converter))
    if isinstance(converter, JsonConverter) and converter.config.schemas_enable:
        return _typed_strategy(COLUMNAR_JSON_SCHEMAS, "JSON with schemas", chain, router,
                               lambda: EnvelopeReader(converter))
    if not decoder.schemaless_json_value:
        return Strategy(PER_RECORD, "values are neither schemaless JSON nor Confluent Avro")
    return _schemaless_json_strategy(chain, router, records_of)


def _typed_strategy(columnar: str, values: str, chain: TransformationChain, router: RecordRouter,
                    new_reader: Callable[[], TypedReader]) -> Strategy:
    """The strategy for values a typed reader decodes (``columnar``, maybe with typed SMTs), or per record.

    ``new_reader`` makes the reader, only when the strategy is columnar.
    """
    if not router.routes_everything_everywhere:
        return Strategy(PER_RECORD, f"{values} values with routing")
    if len(chain) == 0:
        return Strategy(columnar, f"{values}, no SMTs", reader=new_reader())
    batch_chain = BatchTransformationChain.for_typed_values(chain)
    if batch_chain is None:
        return Strategy(PER_RECORD, f"{values} values: {BatchTransformationChain.why_not_typed(chain)}")
    transforms = ", ".join(s.type_name for s in chain.stages)
    return Strategy(f"{columnar}{WITH_SMTS}", f"{values}, transforms: {transforms}", batch_chain, new_reader())


def _schemaless_json_strategy(chain: TransformationChain, router: RecordRouter, records_of: RecordsOf) -> Strategy:
    """``columnar`` (no SMTs, no routing), ``columnar with batch SMTs``, or per record when the chain has no
    batch form."""
    if len(chain) == 0 and router.routes_everything_everywhere:
        return Strategy(COLUMNAR, "schemaless JSON, no SMTs")
    batch_chain = BatchTransformationChain.from_chain(chain, records_of)
    if batch_chain is None:
        return Strategy(PER_RECORD, BatchTransformationChain.why_not(chain, records_of) or "no batch form")
    routing = "" if router.routes_everything_everywhere else ", routed column-wise"
    if len(chain) == 0:
        return Strategy(COLUMNAR_WITH_SMTS, "no transforms" + routing, batch_chain)
    per_record = batch_chain.per_record_stages
    record_stages = f"; per record: {', '.join(per_record)}" if per_record else ""
    transforms = ", ".join(s.type_name for s in chain.stages)
    return Strategy(COLUMNAR_WITH_SMTS, f"transforms: {transforms}{record_stages}{routing}", batch_chain)
