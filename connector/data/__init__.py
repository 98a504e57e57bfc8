"""Record → Iceberg conversion and writing: the Iceberg sink's ``data`` package.

Runs inside Spark tasks and on the driver but never imports Spark.

=====================  ==========================================================
``catalog``            Iceberg catalog from the sink's ``iceberg.catalog.*`` config
``type_mapping``       Connect schemas and schemaless values → Iceberg types
``partition_spec``     ``partition-by`` config text → ``PartitionSpec``
``schema_update``      schema-evolution requests, merged across tasks, applied once
``record_converter``   Connect values (Struct/dict) → Arrow table of the table schema
``json_batch``         schemaless JSON bytes → the same Arrow table, via pyarrow.json
``writer``             Arrow table → Parquet data files of the table
``table_factory``      load or auto-create a table
``coercion``           single-value coercions of the sink's RecordConverter
``value_converters``   per-Iceberg-type converters (nested types, evolution hooks)
``temporal``           Java-compatible date/time/timestamp parsing
``java_text``          Jackson-compatible JSON of the values written to string columns
=====================  ==========================================================
"""
