"""A connector's configuration: Connect's framework keys, the Iceberg sink's, icefloe's own, the catalog
settings, config providers and Java ``.properties`` files, parsed and checked before anything runs."""
