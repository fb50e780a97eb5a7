"""Entry points: how worksheetgen finds its families and exporters, its own and other packages'.

A package adds a family or an exporter by naming it in its metadata, e.g. in pyproject.toml::

    [project.entry-points."worksheetgen.families"]
    dot-product = "worksheetgen_dot_product:DotProduct"

worksheetgen's bundled ones are registered the same way. ``names`` reads the names only
(metadata, no import: cheap enough for ``--help``); ``load`` imports each object once, checks
it and turns every fault (a module that fails to import, an object of the wrong kind, a name
that two packages claim) into one ``PluginError`` naming the plugin and its package.
"""

from __future__ import annotations

import contextlib
import importlib
import io
import os
import stat
import sys
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from worksheetgen.errors import WorksheetgenError, shorten
from worksheetgen.textrules import shown

#: the distribution whose entry points are the bundled families and exporters
BUNDLED = "worksheetgen"
#: the entry point groups: names -> ``Family`` subclasses, names -> ``Exporter`` classes
FAMILIES = "worksheetgen.families"
EXPORTERS = "worksheetgen.exporters"
#: the largest ``entry_points.txt`` read (worksheetgen's own is a few hundred bytes)
MAX_ENTRY_POINTS_BYTES = 1_000_000

#: what went wrong with plugins without stopping the command (a distribution skipped, a
#: plugin that printed while it was imported), one line each, for the CLI to show on stderr
#: (library functions never print)
WARNINGS: list[str] = []


def warnings_since(start: int = 0) -> list[str]:
    """The warnings recorded since ``start`` (a length of :data:`WARNINGS` taken before)."""
    return WARNINGS[start:]


class PluginError(WorksheetgenError):
    """An installed plugin (an entry point) cannot be used."""


class Unfit(Exception):
    """Raised by a group's ``adopt`` function: the loaded object is not what the group needs
    (the message says what was expected and what was found)."""


@dataclass(frozen=True)
class Plugin:
    """One entry point of a group: its name, what it points at, and the package declaring it."""

    group: str
    name: str
    value: str
    package: str
    entry: Any  # an Entry (or, in tests, an importlib.metadata.EntryPoint)

    def error(self, problem: str) -> PluginError:
        """The one-line error for this plugin."""
        return PluginError(
            f"plugin {self.name!r} ({self.group}, from package {self.package}): {problem}"
        )


@dataclass(frozen=True)
class Entry:
    """One entry point as an installed distribution's ``entry_points.txt`` states it."""

    name: str
    value: str
    package: str

    def load(self) -> Any:
        """The object ``module:attr.attr`` names, imported."""
        module, _, attrs = self.value.partition(":")
        obj: Any = importlib.import_module(module.strip())
        for attr in filter(None, attrs.strip().split(".")):
            obj = getattr(obj, attr)
        return obj


def _package_name(info: Path) -> str:
    """A distribution's name from its METADATA (or PKG-INFO) header, else its folder's."""
    for file in ("METADATA", "PKG-INFO"):
        try:
            with open(info / file, encoding="utf-8", errors="replace") as fh:
                for line in fh:
                    if line.startswith("Name:"):
                        return line[5:].strip()
                    if not line.strip():
                        break
        except OSError:
            continue
    return info.name.split("-", 1)[0]


def _entry_points(group: str) -> list[Entry]:
    """The entry points of ``group`` in every distribution on ``sys.path`` (tests replace
    this). Read from each ``*.dist-info``/``*.egg-info`` folder's ``entry_points.txt``
    directly: importing importlib.metadata (email, zipfile, csv ...) cost a class build
    about a tenth of its time, for a file of a few INI lines."""
    found: list[Entry] = []
    header = f"[{group}]"
    for base in sys.path:
        try:
            names = sorted(os.listdir(base or "."))
        except OSError:
            continue
        for folder in names:
            if not folder.endswith((".dist-info", ".egg-info")):
                continue
            info = Path(base or ".", folder)
            text = _entry_points_text(info, header)
            if text is None:
                continue
            inside = False
            for raw in text.splitlines():
                line = raw.strip()
                if not line or line.startswith(("#", ";")):
                    continue
                if line.startswith("["):
                    inside = line == header
                    continue
                if inside and "=" in line:
                    name, _, value = line.partition("=")
                    found.append(Entry(name.strip(), value.strip(), _package_name(info)))
    return found


def _entry_points_text(info: Path, header: str) -> str | None:
    """The text of a distribution's ``entry_points.txt``, or None when there is none or it
    cannot be read as it should: not a regular file (a FIFO would hang), too large, not
    UTF-8. Such a distribution is skipped, with a warning when it names one of our groups:
    another package's broken metadata must not stop a command that does not use it."""
    path = info / "entry_points.txt"
    try:
        found = os.stat(path)
        if not stat.S_ISREG(found.st_mode) or found.st_size > MAX_ENTRY_POINTS_BYTES:
            return None
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        with os.fdopen(fd, "rb") as fh:
            data = fh.read(MAX_ENTRY_POINTS_BYTES + 1)
    except OSError:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        if header.encode("ascii") in data or b"[worksheetgen." in data:
            WARNINGS.append(
                f"{shown(str(path))}: expected UTF-8 text, got other bytes; the entry points "
                f"of package {shown(_package_name(info))} were skipped"
            )
        return None


def _package(entry: Any) -> str:
    package = getattr(entry, "package", None)
    if package:
        return str(package)
    dist = getattr(entry, "dist", None)  # an importlib.metadata.EntryPoint (tests make them)
    name = None if dist is None else dist.metadata["Name"]
    return str(name) if name else "unknown"


#: the entry points of each group, read once per process
_FOUND: dict[str, list[Plugin]] = {}


def plugins(group: str) -> list[Plugin]:
    """The entry points of ``group``, one per name (read once); a name claimed by two
    packages is an error naming the one that is not worksheetgen (or the second, when
    neither is)."""
    if group not in _FOUND:
        _FOUND[group] = _read(group)
    return _FOUND[group]


def _read(group: str) -> list[Plugin]:
    found: dict[str, Plugin] = {}
    for entry in _entry_points(group):
        plugin = Plugin(group, entry.name, entry.value, _package(entry), entry)
        other = found.get(plugin.name)
        if other is None:
            found[plugin.name] = plugin
            continue
        if other.package == plugin.package and other.value == plugin.value:
            continue  # one distribution seen twice on the path
        if plugin.package == BUNDLED:
            plugin, other = other, plugin
        what = "a bundled one" if other.package == BUNDLED else f"package {other.package}'s"
        raise plugin.error(f"name clash: the name is taken by {what} ({other.value})")
    if not any(p.package == BUNDLED for p in found.values()):
        raise PluginError(
            f"{group}: expected worksheetgen's own entry points, got none (is worksheetgen "
            "installed? run: pip install -e .)"
        )
    return list(found.values())


def names(group: str) -> list[str]:
    """The names in ``group``, sorted. Reads metadata only, imports nothing."""
    return sorted(p.name for p in plugins(group))


def load(group: str, adopt: Callable[[Any, str], Any]) -> dict[str, Any]:
    """Every object of ``group`` by name (sorted): each entry point imported and passed to
    ``adopt(obj, name)``, which returns what the registry keeps (the class, an instance) or
    raises ``Unfit``."""
    found = {p.name: p for p in plugins(group)}
    out: dict[str, Any] = {}
    for name in names(group):
        plugin = found[name]
        try:
            with _stdout_kept_from(plugin):
                obj = plugin.entry.load()
        except Exception as exc:  # any failure of a foreign module: its one line, no traceback
            text = " ".join(str(exc).split()) or "(no message)"
            text = text if len(text) <= 200 else text[:197] + "..."
            raise plugin.error(
                f"cannot import {plugin.value}: {type(exc).__name__}: {text}"
            ) from None
        try:
            out[name] = adopt(obj, name)
        except Unfit as exc:
            raise plugin.error(f"{plugin.value}: {exc}") from None
    return out


@contextlib.contextmanager
def _stdout_kept_from(plugin: Plugin) -> Iterator[None]:
    """Import ``plugin`` with standard output taken away from it, at the file descriptor
    too: a module that prints while it is imported would otherwise put its line into the
    file a command writes to standard output (``export --out -``). What it printed is
    dropped and said in a warning."""
    sys.stdout.flush()
    try:
        saved: int | None = os.dup(1)
    except OSError:  # no standard output at all: nothing to protect
        saved = None
    sink = tempfile.TemporaryFile() if saved is not None else None
    text = io.StringIO()
    try:
        if sink is not None:
            os.dup2(sink.fileno(), 1)
        with contextlib.redirect_stdout(text):
            yield
    finally:
        with contextlib.suppress(OSError, ValueError):
            sys.stdout.flush()
        printed = text.getvalue().encode("utf-8", "replace")
        if saved is not None and sink is not None:
            os.dup2(saved, 1)
            os.close(saved)
            sink.seek(0)
            printed += sink.read(4096)
            sink.close()
        if printed:
            excerpt = shorten(" ".join(printed.decode("utf-8", "replace").split()), 60)
            WARNINGS.append(
                f"plugin {plugin.name!r} ({plugin.group}, from package "
                f"{shown(plugin.package)}) wrote to standard output while it was imported; "
                f"dropped, so it cannot land in our output: {shown(repr(excerpt))}"
            )
