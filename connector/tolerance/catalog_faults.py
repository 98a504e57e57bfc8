"""What a catalog's failure means: a fault to ride out, or a refusal to report in one line.

The catalog is opened when a job starts (and by ``icefloe validate``). What
pyiceberg and its HTTP or database clients raise then is classified as the
broker's and the Schema Registry's errors are (:func:`connector.tolerance.transient.transient`):

* unreachable, timing out, answering 5xx or 429: :class:`CatalogUnavailable`, a
  ``RetriableException`` the job rides out with backoff;
* refusing the credentials, the access, the warehouse or the request, or a
  library missing: :class:`CatalogRefused`, which ends the job with one line
  naming the catalog, the cause and the key to look at;
* anything else (a table that does not exist, ...) is left as it is.

Every message names the catalog as ``catalog 'NAME' (TYPE at URI)``; a URI that
may carry credentials is hidden.
"""

from __future__ import annotations

from collections.abc import Mapping

from pyiceberg.exceptions import (
    AuthorizationExpiredError,
    BadRequestError,
    ForbiddenError,
    NotInstalledError,
    OAuthError,
    RESTError,
    UnauthorizedError,
)

from connector.api.errors import ConfigException, ConnectException, RetriableException
from connector.config.catalog_config import (
    CATALOG_NAME_KEY,
    CATALOG_PREFIX,
    DEFAULT_CATALOG_NAME,
    missing_library,
    shown_uri,
)
from connector.tolerance.transient import transient

CREDENTIAL_KEYS = f"{CATALOG_PREFIX}credential or {CATALOG_PREFIX}token"


class CatalogUnavailable(RetriableException):
    """The catalog could not be reached or answered 5xx: a transient fault."""


class CatalogRefused(ConnectException):
    """The catalog refused the job (credentials, access, warehouse), or cannot be loaded here."""


def catalog_label(config: Mapping[str, str]) -> str:
    """``catalog 'iceberg' (rest at https://catalog:8181)``: which catalog a message is about."""
    name = config.get(CATALOG_NAME_KEY) or DEFAULT_CATALOG_NAME
    kind = config.get(CATALOG_PREFIX + "type") or config.get(CATALOG_PREFIX + "catalog-impl", "hive").rsplit(".")[-1]
    uri = shown_uri(config.get(CATALOG_PREFIX + "uri"))
    return f"catalog '{name}' ({kind}{f' at {uri}' if uri else ''})"


def classified(exc: BaseException, config: Mapping[str, str]) -> BaseException:
    """``exc`` as :class:`CatalogUnavailable` or :class:`CatalogRefused` (see the module doc), or as it is."""
    if isinstance(exc, (ConnectException, ConfigException)):
        return exc
    label = catalog_label(config)
    if isinstance(exc, (UnauthorizedError, OAuthError, AuthorizationExpiredError)):
        return CatalogRefused(f"The {label} refused the credentials ({_text(exc)}); check {CREDENTIAL_KEYS}")
    if isinstance(exc, ForbiddenError):
        return CatalogRefused(f"The {label} refused access ({_text(exc)}); the credentials in {CREDENTIAL_KEYS} "
                              "lack a permission the job needs")
    if isinstance(exc, BadRequestError) or (isinstance(exc, RESTError) and "warehouse" in str(exc).lower()):
        return CatalogRefused(f"The {label} refused the request ({_text(exc)}); check {CATALOG_PREFIX}warehouse "
                              f"(does the catalog serve it?) and {CATALOG_PREFIX}prefix")
    if isinstance(exc, (ImportError, NotInstalledError)):
        return CatalogRefused(f"The {label} cannot be loaded: {missing_library(exc)}")
    if transient(exc):
        return CatalogUnavailable(f"The {label} is unreachable: {_text(exc)}")
    return exc


def _text(exc: BaseException) -> str:
    """The innermost useful words of ``exc``: for an HTTP client's retries, the URL and the socket's error."""
    reason = getattr(exc.args[0], "reason", None) if exc.args else None  # urllib3's MaxRetryError
    url = getattr(exc.args[0], "url", None) if exc.args else None
    if reason is not None:
        words = str(reason)
        cause = words.split("): ", 1)[-1] if "): " in words else words
        return f"{url}: {cause.rstrip(')')}" if url else cause
    return str(exc) or type(exc).__name__
