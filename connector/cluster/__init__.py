"""Kafka Connect's distributed mode for ``icefloe serve``: a group of workers sharing their state through Kafka.

Workers started with the same ``group.id`` keep connector configs and target
states in ``config.storage.topic`` and statuses in ``status.storage.topic``, in
the records a Kafka Connect 3.9 cluster writes (:mod:`.config_records`,
:mod:`.status_records`), find each other through heartbeats on a membership
topic (:mod:`.membership`), and follow the connector assignment their leader
computes (:mod:`.assignment`). :mod:`.herder` puts it together behind the same
REST API as the standalone worker. docs/architecture.md explains the choices.
"""
