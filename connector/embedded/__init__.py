"""Embedded components for the demo and local runs (a Tansu broker)."""
