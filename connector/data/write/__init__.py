"""The task pipeline's write step: a table's rows buffered and written as Parquet data files
(``table_writer``, ``writer``), and tables created as the Java sink creates them (``table_factory``,
``partition_spec``)."""
