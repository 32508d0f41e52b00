"""Read JSON Lines files given by users, with messages that name the file and line."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from pydantic import AliasChoices, BaseModel, ValidationError

from core.errors import InputError


@dataclass(frozen=True, slots=True)
class BadLine:
    """Why one line could not be read; the lines around it still can."""

    problem: str


def iter_jsonl(
    path: Path, *, required: str | None, example: str
) -> Iterator[tuple[int, dict[str, Any] | BadLine]]:
    """Yield (line number, object or ``BadLine``) for each non-blank line; one bad line stops nothing.

    Each line is decoded on its own, so a line that is not UTF-8, not JSON, or not an object
    with ``required`` is reported where it is and the next line is read as usual.

    Raises:
        InputError: the file is missing or is a folder.
    """
    if path.is_dir():
        raise InputError(f"{str(path)!r} is a folder, not a JSON Lines file")
    if not path.is_file():
        raise InputError(f"{str(path)!r} does not exist")
    return _lines(path, required=required, example=example)  # the checks above run at the call


def _lines(
    path: Path, *, required: str | None, example: str
) -> Iterator[tuple[int, dict[str, Any] | BadLine]]:
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                yield number, BadLine(f"not UTF-8 text ({exc.reason} at byte {exc.start})")
                continue
            if not line.strip():
                continue
            try:
                item = json.loads(line)
            except ValueError as exc:
                yield number, BadLine(f"not JSON ({exc})")
                continue
            if not isinstance(item, dict) or (required is not None and required not in item):
                yield number, BadLine(f"expected {example}")
                continue
            yield number, item


def read_jsonl(path: Path, *, required: str, example: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield (line number, object) for each non-blank line.

    Args:
        path: the file.
        required: a key every object must have.
        example: how a good line looks, for the error message.

    Raises:
        InputError: the file is missing, a line is not JSON, or an object lacks ``required``.
    """
    for number, item in iter_jsonl(path, required=required, example=example):
        if isinstance(item, BadLine):
            raise InputError(f"{path}:{number}: {item.problem}")
        yield number, item


Model = TypeVar("Model", bound=BaseModel)


def iter_models(path: Path, model: type[Model], *, example: str) -> Iterator[tuple[int, Model | BadLine]]:
    """Yield (line number, ``model`` or ``BadLine``) for each non-blank line of ``path``.

    A line breaking the model's rules (an unknown key, a wrong type, a value out of range)
    is a ``BadLine`` naming the key; the other lines are read as usual.

    Raises:
        InputError: the file is missing or is a folder.
    """
    for number, item in iter_jsonl(path, required=None, example=example):
        if isinstance(item, BadLine):
            yield number, item
            continue
        try:
            yield number, model.model_validate(item)
        except ValidationError as exc:
            yield number, BadLine(validation_message(exc, model))


def validation_message(exc: ValidationError, model: type[BaseModel]) -> str:
    """The first problem of a validation error as one line naming the key (and the accepted ones)."""
    first = exc.errors()[0]
    key = ".".join(str(p) for p in first["loc"]) or "line"
    if first["type"] == "extra_forbidden":
        return f"unknown key {key!r}; use {', '.join(accepted_keys(model))}"
    if first["type"] == "missing":
        return f"{key} is missing"
    return f"{key}: {str(first['msg']).removeprefix('Value error, ')} (got {first['input']!r})"


def accepted_keys(model: type[BaseModel]) -> list[str]:
    """Every key ``model`` accepts on input: field names and their alternative spellings."""
    keys: list[str] = []
    for name, info in model.model_fields.items():
        alias = info.validation_alias
        keys.extend(str(a) for a in alias.choices) if isinstance(alias, AliasChoices) else keys.append(name)
    return list(dict.fromkeys(keys))
