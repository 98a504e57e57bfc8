"""Table maintenance run by the coordinator between its commit cycles (and by ``icefloe maintain``).

* :mod:`.policy` — what a table's properties and the ``icefloe.maintenance.*`` keys ask for;
* :mod:`.planner` — bin-packing of a partition's small data files into target-sized groups;
* :mod:`.compaction` — rewriting a group into one file, committed as one overwrite snapshot;
* :mod:`.expiry` — snapshot expiry, then deletion of the files only expired snapshots referenced,
  and of metadata files dropped from the metadata log;
* :mod:`.orphans` — deletion of old files under the table's location that nothing references;
* :mod:`.runner` — one round over the connector's tables within a time budget, resuming where the
  last round stopped.
"""
