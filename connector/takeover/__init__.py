"""Taking over from the Java Iceberg sinks: where they keep progress, and finishing their commits.

* :mod:`connector.commit.resume_groups` — the consumer groups a connector without
  icefloe offsets in its tables resumes from (Tabular's ``cg-control-<name>``,
  then ``connect-<name>``);
* :mod:`connector.takeover.events` — the control topic's Avro events
  (Iceberg's ``AvroEncoderUtil`` framing, Java's name resolution);
* :mod:`connector.takeover.replay` — finish the Java coordinator's complete
  commits from the control topic and resume from the source offsets they cover.
"""
