"""Tests of the Kafka client layer (connector.kafka) against a real Tansu broker."""
