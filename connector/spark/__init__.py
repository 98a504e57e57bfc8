"""Everything that knows Spark: the task runner, the session, and the Data Source formats (``icefloe-kafka``,
``icefloe-iceberg``). Nothing below the job imports this package (tests/structure checks it)."""
