"""The commit path: from planned offset ranges to one atomic Iceberg commit per table.

The coordinator (:mod:`.coordinator`) plans a cycle's ranges into task assignments (:mod:`.messages`),
collects the tasks' results, applies schema changes (:mod:`.schema_changes`), checks the fence
(:mod:`.fencing`), commits each table (:mod:`.commit`, upserts through :mod:`.upserts` and
:mod:`.key_index`), then mirrors the offsets to the consumer group (:mod:`.group_mirror`). Where a
connector resumes: :mod:`.resume_groups`, said once per start by :mod:`.resume_log`.
"""
