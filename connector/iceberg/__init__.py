"""pyiceberg, extended the way pyiceberg extends itself, where icefloe needs what its Java writers do.

Snapshot producers (a fast append, a row delta of data and delete files, commits to a branch of a table
without snapshots), snapshot summaries as Java writes them, the Kafka offsets a snapshot summary records,
position delete files, the live data files of a head, and metadata cleanup by the table's own rules.
The commit path (``connector.commit``) and maintenance (``connector.maintenance``) both build on it.
"""
