"""The task pipeline (the Iceberg sink's ``data`` package): a task's batches of raw records → the tables'
data files.

Runs inside Spark tasks and on the driver but never imports Spark.

=====================  ==========================================================
``pipeline``           one task's pipeline, per batch: decode, transform, route, convert, write
``strategy``           which decode strategy a task runs (column-wise where a batch form exists)
``decoder``            per-record decoding through the converters
``per_record``         the per-record path (decode → SMTs → route → convert)
``columnar_rows``      the column-wise paths side by side
``columnar_tries``     a batch a column-wise path declines: per record, or screened and split
``suspicious_rows``    the rows of a batch screened one at a time under error tolerance
``router``             static, route-field, route-regex and dynamic routing, one rule
``table_rows``         each table's rows and their source coordinates; the committed ones dropped
``schema_ids``         Schema Registry ids seen in a batch
``missing_tables``     records routed to tables that do not exist (and are not auto-created)
``catalog``            the Iceberg catalog a sink config names
``convert/``           Connect values → the table's Arrow rows; schema changes; upsert operations
``write/``             Arrow rows → Parquet data files; new tables as the Java sink creates them
=====================  ==========================================================
"""
