"""Table descriptors (column families with REPLICATION_SCOPE and VERSIONS) and where they are kept.

Mirrors HBase's ``TableDescriptor``/``ColumnFamilyDescriptor``: a family's ``scope`` is
``REPLICATION_SCOPE`` (LOCAL=0, GLOBAL=1; HBase 2.x has no per-family SERIAL scope, serial is a peer
property), ``max_versions`` is ``VERSIONS`` (default 1). ``TableRegistry`` stores one JSON descriptor per
table at ``<root>/data/<ns>/<qualifier>/.tabledesc/descriptor.json`` (HBase keeps a protobuf
``.tableinfo.<seq>`` there; JSON is our choice so people can read it), written atomically through the
FileSystem so a reader sees the old or the new descriptor, never part of one.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace

from replication.fs import FileSystem, FileSystemError, LocalFileSystem
from replication.tables.errors import (
    CorruptTableFile,
    IllegalDescriptor,
    TableExists,
    TableNotDisabled,
    TableNotEnabled,
    UnknownFamily,
    UnknownTable,
)
from replication.tables.names import TableName, validate_family_name

REPLICATION_SCOPE_LOCAL = 0
REPLICATION_SCOPE_GLOBAL = 1
VALID_SCOPES = (REPLICATION_SCOPE_LOCAL, REPLICATION_SCOPE_GLOBAL)
DEFAULT_VERSIONS = 1
TABLEDESC_DIR = ".tabledesc"
DESCRIPTOR_FILE = "descriptor.json"
FORMAT_VERSION = 1


def check_scope(scope: object, table: str, family: str) -> int:
    """``scope`` as an int if it is 0 (LOCAL) or 1 (GLOBAL), else IllegalDescriptor naming table and family."""
    if isinstance(scope, bool) or not isinstance(scope, int) or scope not in VALID_SCOPES:
        raise IllegalDescriptor(
            f"illegal REPLICATION_SCOPE {scope!r} for family {family} of table {table}: use 0 (LOCAL) or 1 (GLOBAL)"
        )
    return scope


@dataclass(frozen=True)
class ColumnFamilyDescriptor:
    """One column family: its name, REPLICATION_SCOPE (0/1) and VERSIONS (>= 1)."""

    name: str
    scope: int = REPLICATION_SCOPE_LOCAL
    max_versions: int = DEFAULT_VERSIONS

    def __post_init__(self) -> None:
        validate_family_name(self.name)
        check_scope(self.scope, "?", self.name)
        if isinstance(self.max_versions, bool) or not isinstance(self.max_versions, int) or self.max_versions < 1:
            raise IllegalDescriptor(f"illegal VERSIONS {self.max_versions!r} for family {self.name}: must be >= 1")

    @property
    def name_bytes(self) -> bytes:
        return self.name.encode("utf-8")


@dataclass(frozen=True)
class TableDescriptor:
    """A table: its name (``t1`` or ``ns:t1``) and its families by name (at least one)."""

    name: str
    families: dict[str, ColumnFamilyDescriptor] = field(default_factory=dict)
    enabled: bool = True  # the table's state (HBase keeps it in hbase:meta); writes to a disabled one fail

    def __post_init__(self) -> None:
        table = TableName.parse(self.name)
        object.__setattr__(self, "name", str(table))  # canonical: "default:t1" -> "t1"
        if not self.families:
            raise IllegalDescriptor(f"table {self.name} must have at least one column family")
        for key, family in self.families.items():
            if key != family.name:
                raise IllegalDescriptor(
                    f"table {self.name}: family key {key!r} differs from descriptor name {family.name!r}"
                )

    @classmethod
    def of(cls, name: str, *families: ColumnFamilyDescriptor | str) -> TableDescriptor:
        """Build from family descriptors or plain names (plain names get scope 0, one version)."""
        fams = [f if isinstance(f, ColumnFamilyDescriptor) else ColumnFamilyDescriptor(f) for f in families]
        seen: dict[str, ColumnFamilyDescriptor] = {}
        for fam in fams:
            if fam.name in seen:
                raise IllegalDescriptor(f"table {name}: family {fam.name} given twice")
            seen[fam.name] = fam
        return cls(name, seen)

    @property
    def table_name(self) -> TableName:
        return TableName.parse(self.name)

    @property
    def namespace(self) -> str:
        return self.table_name.namespace

    @property
    def qualifier(self) -> str:
        return self.table_name.qualifier

    @property
    def is_system(self) -> bool:
        """True in the reserved ``hbase`` namespace: such tables never replicate."""
        return self.table_name.is_system

    def family(self, name: str | bytes) -> ColumnFamilyDescriptor:
        """The family called ``name``; UnknownFamily naming the table and family if there is none."""
        key = name.decode("utf-8", "replace") if isinstance(name, bytes) else name
        try:
            return self.families[key]
        except KeyError:
            raise UnknownFamily(f"table {self.name} has no column family {key!r}") from None

    def scopes_for_wal(self) -> dict[bytes, int]:
        """Family → scope for the WALKey: only families with scope != 0, as HRegion fills it."""
        return {f.name_bytes: f.scope for f in self.families.values() if f.scope != REPLICATION_SCOPE_LOCAL}

    def max_versions_by_family(self) -> dict[bytes, int]:
        """Family (bytes) → VERSIONS, what a non-raw scan caps its versions with."""
        return {f.name_bytes: f.max_versions for f in self.families.values()}

    def with_scope(self, family: str, scope: int) -> TableDescriptor:
        """A copy with ``family``'s scope changed (UnknownFamily / IllegalDescriptor on bad input)."""
        fam = self.family(family)
        check_scope(scope, self.name, fam.name)
        families = dict(self.families)
        families[fam.name] = replace(fam, scope=scope)
        return replace(self, families=families)

    def to_json(self) -> str:
        """The stored form (stable key order)."""
        doc = {
            "format": FORMAT_VERSION,
            "name": self.name,
            "families": [
                {"name": f.name, "scope": f.scope, "max_versions": f.max_versions}
                for f in sorted(self.families.values(), key=lambda f: f.name)
            ],
        }
        if not self.enabled:
            doc["enabled"] = False  # written only when disabled: enabled tables' files stay as before
        return json.dumps(doc, indent=2, sort_keys=True) + "\n"

    @classmethod
    def from_json(cls, text: str, source: str = "<descriptor>") -> TableDescriptor:
        """Parse the stored form; CorruptTableFile naming ``source`` if it is not a valid descriptor."""
        try:
            doc = json.loads(text)
            if doc.get("format") != FORMAT_VERSION:
                raise ValueError(f"unsupported format {doc.get('format')!r}")
            fams = [ColumnFamilyDescriptor(f["name"], int(f["scope"]), int(f["max_versions"])) for f in doc["families"]]
            enabled = doc.get("enabled", True)
            if not isinstance(enabled, bool):
                raise ValueError(f"'enabled' must be true or false, not {enabled!r}")
            return replace(cls.of(doc["name"], *fams), enabled=enabled)
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise CorruptTableFile(f"bad table descriptor {source}: {exc}") from None


def table_dir(fs: FileSystem, root: str, table: str | TableName) -> str:
    """``<root>/data/<namespace>/<qualifier>`` (namespace ``default`` when the name has none)."""
    name = TableName.parse(table)
    return fs.join(root, "data", name.namespace, name.qualifier)


class TableRegistry:
    """The table descriptors of one cluster root (create, alter scope, get, list, exists, delete)."""

    def __init__(self, fs: FileSystem | None, root: str):
        self.fs: FileSystem = fs or LocalFileSystem()
        self.root = root

    def descriptor_path(self, table: str | TableName) -> str:
        """Where ``table``'s descriptor lives."""
        return self.fs.join(table_dir(self.fs, self.root, table), TABLEDESC_DIR, DESCRIPTOR_FILE)

    def create(self, desc: TableDescriptor, *, system: bool = False) -> TableDescriptor:
        """Store a new table. TableExists if it is there; tables in ``hbase:`` need ``system=True``.

        Not guarded against two processes creating the same table at the same instant (last one
        wins, whole file either way); the CLI creates tables one at a time.
        """
        if desc.is_system and not system:
            raise IllegalDescriptor(f"table {desc.name}: namespace 'hbase' is reserved for system tables")
        if self.exists(desc.name):
            raise TableExists(f"table {desc.name} already exists")
        self.fs.write_atomic(self.descriptor_path(desc.name), desc.to_json().encode("utf-8"))
        return desc

    def get(self, table: str | TableName) -> TableDescriptor:
        """The descriptor of ``table``; UnknownTable naming it if there is none."""
        path = self.descriptor_path(table)
        try:
            data = self.fs.read_range(path, 0)
        except FileSystemError:
            raise UnknownTable(f"table {TableName.parse(table)} does not exist") from None
        return TableDescriptor.from_json(data.decode("utf-8", "replace"), path)

    def exists(self, table: str | TableName) -> bool:
        """True if ``table`` has a descriptor."""
        return self.fs.exists(self.descriptor_path(table))

    def set_enabled(self, table: str | TableName, enabled: bool) -> TableDescriptor:
        """``enable`` / ``disable``: store the table's state; TableNotDisabled / TableNotEnabled (HBase's
        exceptions) when it already is in that state."""
        desc = self.get(table)
        if desc.enabled == enabled:
            kind = TableNotDisabled if enabled else TableNotEnabled
            raise kind(f"table {desc.name} is already {'enabled' if enabled else 'disabled'}")
        new = replace(desc, enabled=enabled)
        self.fs.write_atomic(self.descriptor_path(table), new.to_json().encode("utf-8"))
        return new

    def alter_scope(self, table: str | TableName, family: str, scope: int) -> TableDescriptor:
        """Set REPLICATION_SCOPE of one family and store it; returns the new descriptor."""
        new = self.get(table).with_scope(family, scope)
        self.fs.write_atomic(self.descriptor_path(table), new.to_json().encode("utf-8"))
        return new

    def list(self) -> list[TableDescriptor]:
        """Every table under the root, sorted by name (user and system tables)."""
        out = []
        for ns in self.fs.list(self.fs.join(self.root, "data")):
            if not ns.is_dir:
                continue
            for tdir in self.fs.list(ns.path):
                if tdir.is_dir and self.fs.exists(self.fs.join(tdir.path, TABLEDESC_DIR, DESCRIPTOR_FILE)):
                    out.append(self.get(f"{ns.name}:{tdir.name}"))
        return sorted(out, key=lambda d: (d.namespace, d.qualifier))

    def delete(self, table: str | TableName) -> None:
        """Drop ``table``: its descriptor and its files (UnknownTable if absent)."""
        if not self.exists(table):
            raise UnknownTable(f"table {TableName.parse(table)} does not exist")
        # Descriptor first: a crash halfway leaves orphan files, never files of a "live" table.
        self.fs.delete(self.descriptor_path(table))
        self.fs.delete(table_dir(self.fs, self.root, table), recursive=True)
