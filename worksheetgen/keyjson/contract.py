"""Read key.json for ``grade`` and ``export``: one reader, one verdict.

Both commands read the file with ``read_key_data`` (a regular file of at most
``MAX_KEY_BYTES``, JSON within ``inputs.MAX_JSON_DEPTH`` levels, text without lone
surrogates) and check it with ``worksheetgen.keyjson.read.parse_key``, which starts with
``check_format`` here: a key of another format or version is refused before anything else.
So a key one command refuses, the other refuses with the same line.
"""

from __future__ import annotations

import os
from typing import Any

from worksheetgen.errors import WorksheetgenError
from worksheetgen.inputs import read_json
from worksheetgen.keyjson.write import KEY_FORMAT, KEY_VERSION

#: the largest key.json read: well above the key of the largest class build (40,000
#: questions), far below what would exhaust memory before it is refused
MAX_KEY_BYTES = 1_000_000_000


def read_key_data(path: str | os.PathLike[str], error: type[WorksheetgenError]) -> Any:
    """The parsed JSON of a key.json file (not yet checked against the contract)."""
    return read_json(path, MAX_KEY_BYTES, what="a key.json file", error=error)


def _shown(x: Any) -> str:
    if x is None:
        return "nothing"
    if isinstance(x, str):
        return repr(x if len(x) <= 40 else x[:37] + "...")
    if isinstance(x, bool | int | float):
        return repr(x)
    return "a list" if isinstance(x, list) else "an object"


def check_format(data: Any, source: str, error: type[WorksheetgenError]) -> None:
    """Refuse a document that is not a worksheetgen key of the version this release reads."""
    if not isinstance(data, dict):
        raise error(
            f"expected a worksheetgen key.json (a JSON object), got {_shown(data)}", file=source
        )
    fmt = data.get("format")
    if fmt != KEY_FORMAT:
        raise error(
            f"expected {KEY_FORMAT!r} (a key.json written by worksheetgen build), got "
            f"{_shown(fmt)}",
            file=source,
            field="format",
        )
    version = data.get("version")
    if type(version) is not int or version != KEY_VERSION:  # not true, not 1.0
        raise error(f"expected {KEY_VERSION}, got {_shown(version)}", file=source, field="version")
