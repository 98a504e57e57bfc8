"""Error handling, in one place: what a failure means and what is done about it.

- :mod:`.errant`: one record that fails (Connect's ``errors.tolerance``, ``errors.log.*``, the stages a
  record fails in), kept for the dead letter queue;
- :mod:`.dead_letters`: the dead letter queue itself, written exactly once across re-runs;
- :mod:`.transient`: faults of a service (broker, registry, catalog) a job rides out, with
- :mod:`.backoff`: Connect's retry backoff, shared by record retries and re-run cycles;
- :mod:`.catalog_faults`: what a catalog's failure means (ride it out, or report it in one line).
"""
