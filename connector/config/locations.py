"""Local locations read as Hadoop and Iceberg's Java FileIO read them, spelled for pyiceberg.

Java configs spell a local folder in several ways, all meaning the same
folder to Hadoop's ``Path`` (on its default file system, the local one when no
Hadoop configuration says otherwise):

* ``file:/abs/warehouse`` (one slash: what Hadoop itself prints),
  ``file:///abs/warehouse``, ``file://localhost/abs/warehouse`` (the local file
  system ignores the authority);
* ``/abs/warehouse``;
* ``warehouse`` or ``file:warehouse``: relative to the working directory of
  the process that reads the config.

:func:`local_location` turns each into ``file:///abs/warehouse``, which
pyiceberg and pyarrow read as that folder (``file:/abs`` read naively as a
path gives ``./file:/abs``); a location with any other scheme (``s3://``,
``gs://``, ``hdfs://``, ...) is returned unchanged. A relative one is made
absolute once, on the driver, so that executors whose working directory
differs use the same folder.
"""

from __future__ import annotations

import os
import re

_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.\-]*):(.*)$", re.DOTALL)


def local_path(location: str) -> str | None:
    """The absolute local path ``location`` names, or None when it is not a local location."""
    match = _SCHEME.match(location)
    if match and len(match.group(1)) > 1:  # one letter: a Windows drive, not a scheme
        if match.group(1).lower() != "file":
            return None
        location = match.group(2)
        if location.startswith("//"):  # an authority (empty, or a host the local file system ignores)
            location = "/" + location[2:].partition("/")[2]
    path = os.path.abspath(location) if location else os.getcwd()
    return re.sub(r"/{2,}", "/", path)


def local_location(location: str) -> str:
    """``location`` as pyiceberg should be given it: a local one as ``file:///abs``, any other unchanged."""
    path = local_path(location)
    return location if path is None else f"file://{path}"
