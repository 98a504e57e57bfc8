"""Settings dataclasses whose fields are filled from a ConfigDef's parsed values.

A field made with :func:`key_field` names its key next to it and takes the key's
declared default, so a key's default is written once (in its ConfigDef) and its
value reaches the dataclass through :func:`from_values` without a stanza of
``field=values["key"]`` lines. Fields that are computed (lists made tuples,
prefixed keys gathered, checked values) are passed to :func:`from_values` as they are.
"""

from __future__ import annotations

from dataclasses import field, fields
from typing import TYPE_CHECKING, Any, Mapping, TypeVar

from connector.api.config_def import ConfigDef

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

_KEY = "config_key"  # the field metadata entry that names the key

Settings = TypeVar("Settings", bound="DataclassInstance")


def key_field(config_def: ConfigDef, name: str) -> Any:
    """A dataclass field that holds key ``name``'s parsed value; by default the key's declared default."""
    default = config_def.config_keys[name].default
    if isinstance(default, (list, dict)):  # a mutable default is made anew for each instance
        return field(default_factory=lambda: type(default)(default), metadata={_KEY: name})
    return field(default=default, metadata={_KEY: name})


def from_values(cls: type[Settings], values: Mapping[str, Any], **computed: Any) -> Settings:
    """A ``cls`` whose :func:`key_field` fields take their keys' values in ``values`` (a ConfigDef's
    ``parse``), and whose other fields are ``computed``."""
    own = {f.name: values[f.metadata[_KEY]] for f in fields(cls) if _KEY in f.metadata}
    return cls(**own, **computed)
