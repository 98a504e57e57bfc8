"""icefloe: Kafka Connect sink configurations, run as Apache Spark jobs.

The top level re-exports the Connect data API (records, schemas, errors) and
must stay light: importing ``connector`` never imports or starts Spark.
"""

from connector.api import *  # noqa: F401,F403
from connector.api import __all__  # noqa: F401
