"""Converters a batch at a time: the columnar decoders that give, for a whole Arrow batch of raw values,
what the record converters (``converters.json``, ``converters.confluent``) give one record at a time, as
``smt.batch`` mirrors ``smt.transforms``.

A batch a decoder cannot take exactly as its converter would is declined with a named reason
(``connector.api.declined``) and goes record by record. Like the converters, these modules know only
``connector.api`` and ``converters``.
"""
