"""Kafka's JsonConverter (``org.apache.kafka.connect.json``)."""

from converters.json.config import DecimalFormat, JsonConverterConfig
from converters.json.converter import JsonConverter

__all__ = ["JsonConverter", "JsonConverterConfig", "DecimalFormat"]
