"""The Kafka Connect REST API of ``icefloe serve``: FastAPI app, error mapping, plugins, loggers, server."""
