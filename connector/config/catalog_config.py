"""The catalog settings of a sink config: Java's ``iceberg.catalog.*`` properties as pyiceberg reads them.

Users bring configs written for the Java sink, whose properties go to
``CatalogUtil.buildIcebergCatalog``. pyiceberg understands most of them as
they are (``uri``, ``warehouse``, ``credential``, ``s3.*``, ...); this module
translates what differs:

* ``type``: ``rest``, ``glue``, ``hive`` and ``sql`` pass through; ``jdbc``
  becomes pyiceberg's ``sql`` catalog with the JDBC ``uri`` turned into a
  SQLAlchemy URL (``jdbc:sqlite:`` and ``jdbc:postgresql:``); ``hadoop`` and
  ``nessie`` have no pyiceberg implementation and are rejected with a
  ConfigException naming ``iceberg.catalog.type``;
* ``catalog-impl``: Java class names of the REST, Glue, Hive and JDBC
  catalogs map to the matching type;
* neither set: Java's default, ``hive`` (said so if it cannot be loaded);
* ``io-impl``: Java FileIO classes become pyiceberg's ``py-io-impl``
  (``S3FileIO`` → the pyarrow FileIO, which reads the same ``s3.*`` keys);
  ``s3.path-style-access`` becomes ``s3.force-virtual-addressing``.

Loading the catalog itself is :func:`connector.data.catalog.load_catalog`.
"""


from __future__ import annotations

import importlib.util
import logging
import os
from urllib.parse import quote, urlsplit

from connector.api.errors import ConfigException
from connector.config.locations import local_location, local_path

log = logging.getLogger(__name__)

CATALOG_NAME_KEY = "iceberg.catalog"
CATALOG_PREFIX = "iceberg.catalog."
DEFAULT_CATALOG_NAME = "iceberg"
TYPE_KEY = CATALOG_PREFIX + "type"
#: Keys whose suffix is a table property: for new tables, and laid over tables' properties for icefloe's writes.
TABLE_PROPERTY_PREFIXES = ("iceberg.tables.auto-create-props.", "iceberg.tables.write-props.",
                           "iceberg.table.write-props.")
#: Table properties holding a location, read as Hadoop reads it when a config gives them to new tables.
TABLE_LOCATION_PROPERTIES = ("write.data.path", "write.metadata.path", "write.object-storage.path")

_PASS_THROUGH_TYPES = {"rest", "glue", "hive", "sql", "dynamodb", "bigquery", "in-memory"}
_UNSUPPORTED_TYPES = {
    "hadoop": "pyiceberg has no Hadoop (file-system) catalog; use rest, sql, glue or hive",
    "nessie": "pyiceberg has no Nessie catalog; use Nessie's Iceberg REST endpoint with type=rest",
}
_CATALOG_IMPLS = {
    "org.apache.iceberg.rest.RESTCatalog": "rest",
    "org.apache.iceberg.aws.glue.GlueCatalog": "glue",
    "org.apache.iceberg.hive.HiveCatalog": "hive",
    "org.apache.iceberg.jdbc.JdbcCatalog": "jdbc",
    "org.apache.iceberg.aws.dynamodb.DynamoDbCatalog": "dynamodb",
    "org.apache.iceberg.hadoop.HadoopCatalog": "hadoop",
    "org.apache.iceberg.nessie.NessieCatalog": "nessie",
}
_PYARROW_IO = "pyiceberg.io.pyarrow.PyArrowFileIO"
_FSSPEC_IO = "pyiceberg.io.fsspec.FsspecFileIO"
_IO_IMPLS = {
    "org.apache.iceberg.aws.s3.S3FileIO": _PYARROW_IO,
    "org.apache.iceberg.hadoop.HadoopFileIO": _PYARROW_IO,
    "org.apache.iceberg.gcp.gcs.GCSFileIO": _PYARROW_IO,
    "org.apache.iceberg.io.ResolvingFileIO": _PYARROW_IO,
    "org.apache.iceberg.azure.adlsv2.ADLSFileIO": _FSSPEC_IO,
}


def catalog_properties(config: dict[str, str]) -> tuple[str, dict[str, str]]:
    """The catalog name and its ``iceberg.catalog.*`` properties (prefix stripped, untranslated)."""
    name = config.get(CATALOG_NAME_KEY) or DEFAULT_CATALOG_NAME
    props = {k[len(CATALOG_PREFIX):]: v for k, v in config.items() if k.startswith(CATALOG_PREFIX)}
    if not props:
        raise ConfigException("Must specify Iceberg catalog properties")
    return name, props


def pyiceberg_properties(props: dict[str, str], *, create_folders: bool = True) -> tuple[dict[str, str], bool]:
    """Java catalog properties translated for pyiceberg, and whether the type was defaulted.

    ``create_folders=False`` (validation) makes local paths absolute without creating anything.
    """
    result = dict(props)
    catalog_type, defaulted = _catalog_type(result)
    if catalog_type == "jdbc":
        catalog_type = "sql"
        result["uri"] = sqlalchemy_url(result.get("uri"), result.get("jdbc.user"), result.get("jdbc.password"))
    result["type"] = catalog_type
    _translate_io(result)
    _resolve_local_paths(result, create_folders=create_folders)
    return result, defaulted


def with_absolute_local_paths(config: dict[str, str]) -> dict[str, str]:
    """``config`` with its local locations spelled as pyiceberg reads them, relative ones made absolute.

    The SQLite catalog file, the warehouse and the table locations (:data:`TABLE_LOCATION_PROPERTIES`)
    under ``iceberg.tables.auto-create-props.*`` or ``write-props.*``, each read as Hadoop reads it
    (:mod:`connector.config.locations`). Resolved once on the driver, so executors (whose
    working directory may differ) use the same folders. Nothing is created here: parsing a config
    (``icefloe validate``) leaves the disk alone; :func:`load_catalog` creates the folders.
    """
    props = {k[len(CATALOG_PREFIX):]: v for k, v in config.items() if k.startswith(CATALOG_PREFIX)}
    _resolve_local_paths(props, create_folders=False)
    resolved = {**config, **{CATALOG_PREFIX + k: v for k, v in props.items()}}
    for key in (prefix + name for prefix in TABLE_PROPERTY_PREFIXES for name in TABLE_LOCATION_PROPERTIES):
        if resolved.get(key):
            resolved[key] = local_location(resolved[key])
    return resolved


def _resolve_local_paths(props: dict[str, str], *, create_folders: bool = True) -> None:
    """Make a relative SQLite file and a local warehouse absolute, creating their folders if asked.

    Lets a config such as the quickstart's (``sqlite:///icefloe-work/catalog.db``,
    ``warehouse=icefloe-work/warehouse``) work from whatever directory it is run in, and a Java
    config's ``warehouse=file:/abs/warehouse`` name the folder Java writes to. A REST catalog's
    warehouse is the server's business (often a name, not a location): it is passed as given.
    """
    uri = props.get("uri", "")
    if uri.startswith("sqlite:///") and uri != "sqlite:///:memory:":
        path = os.path.abspath(uri[len("sqlite:///"):])
        if create_folders:
            os.makedirs(os.path.dirname(path), exist_ok=True)
        props["uri"] = f"sqlite:///{path}"
    warehouse = props.get("warehouse")
    if warehouse and not _is_rest(props):
        folder = local_path(warehouse)
        if folder is not None:
            if create_folders:
                os.makedirs(folder, exist_ok=True)
            props["warehouse"] = local_location(warehouse)


def _is_rest(props: dict[str, str]) -> bool:
    declared = (props.get("type") or "").strip().lower()
    return declared == "rest" or _CATALOG_IMPLS.get(props.get("catalog-impl", "")) == "rest"


def _catalog_type(props: dict[str, str]) -> tuple[str, bool]:
    declared = props.pop("type", None)
    impl = props.pop("catalog-impl", None)
    if declared and impl:
        raise ConfigException(TYPE_KEY, declared, "cannot be set together with iceberg.catalog.catalog-impl")
    if impl:
        if impl not in _CATALOG_IMPLS:
            raise ConfigException(
                CATALOG_PREFIX + "catalog-impl", impl, "unknown catalog class; set iceberg.catalog.type instead"
            )
        declared = _CATALOG_IMPLS[impl]
    defaulted = not declared
    catalog_type = (declared or "hive").strip().lower()
    if catalog_type in _UNSUPPORTED_TYPES:
        raise ConfigException(TYPE_KEY, catalog_type, _UNSUPPORTED_TYPES[catalog_type])
    if catalog_type not in _PASS_THROUGH_TYPES and catalog_type != "jdbc":
        raise ConfigException(TYPE_KEY, catalog_type, "unknown catalog type (use rest, sql, glue, hive or jdbc)")
    return catalog_type, defaulted


def _translate_io(props: dict[str, str]) -> None:
    impl = props.pop("io-impl", None)
    if impl is not None and "py-io-impl" not in props:
        if impl not in _IO_IMPLS:
            raise ConfigException(
                CATALOG_PREFIX + "io-impl", impl, f"unknown FileIO class (known: {', '.join(_IO_IMPLS)})"
            )
        props["py-io-impl"] = _IO_IMPLS[impl]
    if props.get("s3.endpoint") and not (props.get("s3.region") or props.get("client.region")):
        # A custom endpoint (MinIO, moto, ...) must not make pyiceberg ask real AWS
        # for the bucket's region; Java's S3FileIO takes the usual AWS defaults.
        props["s3.region"] = os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION") or "us-east-1"
    path_style = props.get("s3.path-style-access")
    if path_style is not None and "s3.force-virtual-addressing" not in props:
        props["s3.force-virtual-addressing"] = "false" if path_style.strip().lower() == "true" else "true"


def sqlalchemy_url(jdbc_uri: str | None, user: str | None = None, password: str | None = None) -> str:
    """A SQLAlchemy URL for a JDBC URI (``jdbc:sqlite:`` or ``jdbc:postgresql:``)."""
    key = CATALOG_PREFIX + "uri"
    if not jdbc_uri:
        raise ConfigException(key, jdbc_uri, "a JDBC catalog needs a uri (jdbc:sqlite:... or jdbc:postgresql:...)")
    if jdbc_uri.startswith("jdbc:sqlite:"):
        return _sqlite_url(jdbc_uri[len("jdbc:sqlite:"):])
    if jdbc_uri.startswith("jdbc:postgresql:"):
        return _postgresql_url(jdbc_uri[len("jdbc:postgresql:"):], user, password)
    if not jdbc_uri.startswith("jdbc:"):
        return jdbc_uri  # already a SQLAlchemy URL
    raise ConfigException(key, jdbc_uri, "only jdbc:sqlite: and jdbc:postgresql: URIs are supported")


def _sqlite_url(location: str) -> str:
    location = location.split("?", 1)[0]
    if location in ("", ":memory:", "file::memory:"):
        return "sqlite:///:memory:"
    if location.startswith("file:"):
        location = location[len("file:"):]
        if location.startswith("//"):
            location = "/" + location.lstrip("/")
    return f"sqlite:///{location}"


def _postgresql_url(rest: str, user: str | None, password: str | None) -> str:
    parts = urlsplit(rest if rest.startswith("//") else "//" + rest)
    query = dict(p.split("=", 1) for p in parts.query.split("&") if "=" in p)
    user = user or query.pop("user", None)
    password = password or query.pop("password", None)
    credentials = ""
    if user:
        credentials = quote(user, safe="") + (f":{quote(password, safe='')}" if password else "") + "@"
    remaining = "&".join(f"{k}={v}" for k, v in query.items())
    return f"{_postgres_dialect()}://{credentials}{parts.netloc}{parts.path}" + (f"?{remaining}" if remaining else "")


def _postgres_dialect() -> str:
    if importlib.util.find_spec("psycopg2") is not None:
        return "postgresql+psycopg2"
    if importlib.util.find_spec("psycopg") is not None:
        return "postgresql+psycopg"
    return "postgresql"


def shown_uri(uri: str | None) -> str | None:
    """The URI for an error message, unless it may carry credentials (``user:password@``, ``password=``)."""
    return "[hidden]" if uri and ("@" in uri or "password" in uri.lower()) else uri


def missing_library(exc: BaseException) -> str:
    """What is missing and the pip command that installs it (``No module named 'psycopg'`` → its extra)."""
    exc = _innermost_import_error(exc)
    module = (getattr(exc, "name", None) or "").split(".")[0]
    for prefix, install in _EXTRAS:
        if module == prefix or (not module and prefix in str(exc).lower()):
            return f"{exc}; install it with: pip install {install}"
    return f"{exc}; install the Python package that provides it"


def _innermost_import_error(exc: BaseException) -> BaseException:
    """The ImportError naming the module behind ``exc`` (pyiceberg's "support not installed" wraps it)."""
    current: BaseException | None = exc
    while current is not None:
        if isinstance(current, ImportError) and current.name:
            return current
        current = current.__cause__ or current.__context__
    return exc


#: Modules catalogs and their database URLs import, and what installs them (setup.cfg's extras).
_EXTRAS = (
    ("psycopg2", "'icefloe[postgres]'"),
    ("psycopg", "'icefloe[postgres]' (or, for a postgresql+psycopg:// URL, 'psycopg[binary]')"),
    ("pymysql", "pymysql"),
    ("thrift", "'icefloe[hive]'"),
    ("hive_metastore", "'icefloe[hive]'"),
    ("boto3", "'icefloe[glue]'"),
    ("google", "'icefloe[bigquery]'"),
    ("s3fs", "'pyiceberg[s3fs]'"),
    ("adlfs", "'pyiceberg[adlfs]'"),
    ("gcsfs", "'pyiceberg[gcsfs]'"),
)
