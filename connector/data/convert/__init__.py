"""The task pipeline's convert step: a record (or a batch of rows) as the Iceberg table's rows.

Connect values and schemas to Iceberg types and values (``type_mapping``, ``value_converters``,
``temporal``, ``coercion``, ``java_text``), a record at a time (``record_converter``) or column-wise from
JSON (``json_rows``), per table (``table_conversion``); the schema changes a record asks for
(``schema_update``); upsert and CDC operations (``cdc_ops``, ``changes``, ``collapse``).
"""
