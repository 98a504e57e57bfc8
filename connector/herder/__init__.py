"""The Connect worker's brain (Kafka Connect calls it the herder): connectors, their states, their configs.

``icefloe serve`` answers Connect's REST API (``connector.rest``) by calling a
``Herder``; the herder keeps every connector's config and target state in a
store that survives restarts, and runs each connector as a continuous icefloe
job on the worker's one Spark session.
"""
