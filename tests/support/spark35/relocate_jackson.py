"""Build the shaded Jackson jar that the PyPI build of Iceberg's Spark runtime leaves out.

``snowpark-connect-deps-iceberg`` ships ``iceberg-spark-runtime-3.5_2.12-1.10.2.jar``
with every reference to Jackson relocated to ``org.apache.iceberg.shaded.com.fasterxml.jackson``,
as Iceberg's own build does, but without those classes (the package's users bring
them otherwise): Spark then fails at the first metadata file it parses, with
``ClassNotFoundException: org.apache.iceberg.shaded.com.fasterxml.jackson.core.JsonFactoryBuilder``.
Maven Central cannot be reached from the project's machines, so this script
makes the missing classes from the Jackson jars that pyspark 3.5 ships, by
renaming the package in every class file's constant pool (the strings that
name classes, descriptors and signatures); no bytecode offset depends on those
strings' lengths, so nothing else in a class file changes.

Run with the Spark 3.5 venv's Python, stdlib only: ``relocate_jackson.py <venv>``
writes ``<venv>/iceberg-shaded-jackson.jar``.
"""

from __future__ import annotations

import struct
import sys
import zipfile
from pathlib import Path

OLD_PATH, NEW_PATH = b"com/fasterxml/jackson/", b"org/apache/iceberg/shaded/com/fasterxml/jackson/"
OLD_NAME, NEW_NAME = b"com.fasterxml.jackson.", b"org.apache.iceberg.shaded.com.fasterxml.jackson."
# The Jackson modules the runtime's classes refer to (found by scanning its constant pools).
MODULES = ("jackson-annotations", "jackson-core", "jackson-databind", "jackson-datatype-jsr310")
OUTPUT = "iceberg-shaded-jackson.jar"

# Constant pool tags (JVM spec 4.4) and the size of each entry after its tag; Utf8 has its own length.
UTF8, LONG, DOUBLE = 1, 5, 6
FIXED_SIZE = {3: 4, 4: 4, 5: 8, 6: 8, 7: 2, 8: 2, 9: 4, 10: 4, 11: 4, 12: 4, 15: 3, 16: 2, 17: 4, 18: 4,
              19: 2, 20: 2}


def relocate_string(value: bytes) -> bytes:
    # Slashed names (class files) and dotted ones (Class.forName strings, service files) alike; an
    # already relocated name is left alone so running twice changes nothing.
    if NEW_PATH in value or NEW_NAME in value:
        return value
    return value.replace(OLD_PATH, NEW_PATH).replace(OLD_NAME, NEW_NAME)


def relocate_class(data: bytes) -> bytes:
    """The class file with every Utf8 constant relocated; everything after the constant pool as it was."""
    if data[:4] != b"\xca\xfe\xba\xbe":
        raise ValueError("not a class file")
    count = struct.unpack_from(">H", data, 8)[0]
    out = [data[:10]]
    offset, index = 10, 1
    while index < count:
        tag = data[offset]
        if tag == UTF8:
            length = struct.unpack_from(">H", data, offset + 1)[0]
            value = relocate_string(data[offset + 3:offset + 3 + length])
            out.append(struct.pack(">BH", UTF8, len(value)) + value)
            offset += 3 + length
        else:
            size = FIXED_SIZE[tag]  # a KeyError here is a tag this script does not know: fail loudly
            out.append(data[offset:offset + 1 + size])
            offset += 1 + size
        index += 2 if tag in (LONG, DOUBLE) else 1  # 8-byte constants take two slots
    out.append(data[offset:])
    return b"".join(out)


def relocate_jars(jars: list[Path], target: Path) -> int:
    """Write ``target`` with the relocated classes and service files of ``jars``; the number of classes."""
    classes = 0
    partial = target.with_suffix(".partial")
    with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED) as out:
        out.writestr("META-INF/MANIFEST.MF", "Manifest-Version: 1.0\nCreated-By: icefloe relocate_jackson.py\n")
        for jar in jars:
            with zipfile.ZipFile(jar) as source:
                for name in source.namelist():
                    # module-info and the multi-release copies would name the unrelocated module; the
                    # base classes are enough on Java 17 (the output jar is not multi-release).
                    if name.startswith("META-INF/versions/") or name.endswith("module-info.class"):
                        continue
                    if name.endswith(".class") and name.startswith("com/fasterxml/jackson/"):
                        out.writestr(relocate_string(name.encode()).decode(), relocate_class(source.read(name)))
                        classes += 1
                    elif name.startswith("META-INF/services/com.fasterxml.jackson."):
                        out.writestr(relocate_string(name.encode()).decode(),
                                     relocate_string(source.read(name)))
    partial.replace(target)  # whole or absent: an interrupted run leaves no half jar behind
    return classes


def main(venv: Path) -> None:
    found = sorted(venv.glob("lib/python3*/site-packages/pyspark/jars/jackson-*.jar"))
    jars = [j for j in found if j.name.rsplit("-", 1)[0] in MODULES]
    missing = set(MODULES) - {j.name.rsplit("-", 1)[0] for j in jars}
    if missing:
        sys.exit(f"pyspark in {venv} has no jar for {sorted(missing)}: is pyspark 3.5 installed there?")
    classes = relocate_jars(jars, venv / OUTPUT)
    print(f"{venv / OUTPUT}: {classes} classes from {', '.join(j.name for j in jars)}")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
