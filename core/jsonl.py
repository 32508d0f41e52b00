"""Read JSON Lines files given by users, with messages that name the file and line."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from core.errors import InputError


def read_jsonl(path: Path, *, required: str, example: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield (line number, object) for each non-blank line.

    Args:
        path: the file.
        required: a key every object must have.
        example: how a good line looks, for the error message.

    Raises:
        InputError: the file is missing, a line is not JSON, or an object lacks ``required``.
    """
    if path.is_dir():
        raise InputError(f"{str(path)!r} is a folder, not a JSON Lines file")
    if not path.is_file():
        raise InputError(f"{str(path)!r} does not exist")
    with path.open(encoding="utf-8") as handle:
        number = 0
        try:
            for number, line in enumerate(handle, start=1):
                if not line.strip():
                    continue
                try:
                    item = json.loads(line)
                except ValueError as exc:
                    raise InputError(f"{path}:{number}: not JSON ({exc})") from None
                if not isinstance(item, dict) or required not in item:
                    raise InputError(f"{path}:{number}: expected {example}")
                yield number, item
        except UnicodeDecodeError as exc:
            raise InputError(f"{path}:{number + 1}: not UTF-8 text ({exc.reason})") from None
