"""Front matter: YAML-ish (between ``---`` lines, the keys docs use, without a YAML parser) or TOML."""

from __future__ import annotations

import re
import tomllib
from typing import Any

_FM_KEY = re.compile(r"^([A-Za-z_][\w-]*)\s*:(?:\s+(.*?))?\s*$")
_FM_ITEM = re.compile(r"^\s+-\s*(.*?)\s*$")


def parse_front_matter(text: str) -> tuple[dict[str, Any], str]:
    """Split front matter, YAML-ish between ``---`` lines or TOML between ``+++`` ones, from the body.

    Only what docs use is understood: ``key: value`` with optional quotes and
    ``# comments``, inline lists ``[a, "b c"]`` and block lists (``- item``; an
    item written as ``label: x`` gives ``x``). Nested maps are skipped.

    TOML front matter (between ``+++`` lines, as Hugo and Zola sites write it) is read by
    :mod:`tomllib`; when it does not parse it still goes, with no keys.

    Returns:
        (front matter as a dict, the text after it); ``({}, text)`` when there is none.
    """
    if text.startswith("+++"):
        return _toml_front_matter(text)
    if not text.startswith("---"):
        return {}, text
    lines = text.split("\n")
    if lines[0].strip() != "---":
        return {}, text
    end = next((i for i in range(1, len(lines)) if lines[i].strip() in ("---", "...")), None)
    if end is None:
        return {}, text
    data: dict[str, Any] = {}
    key: str | None = None
    for line in lines[1:end]:
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        item = _FM_ITEM.match(line)
        if item and key is not None:
            value = item.group(1)
            nested = _FM_KEY.match(value)
            if nested:  # "- label: ros2": keep the value, the common shape of tag objects.
                value = nested.group(2) or ""
            current = data.get(key)
            if not isinstance(current, list):
                current = data[key] = []
            parsed = _fm_scalar(value)
            if parsed != "":
                current.append(parsed)
            continue
        match = _FM_KEY.match(line)
        if match is None:
            continue  # nested map lines and multi-line scalars are not needed
        key, raw_value = match.group(1), match.group(2) or ""
        data[key] = _fm_value(raw_value) if raw_value else None
    return data, "\n".join(lines[end + 1 :])


def _toml_front_matter(text: str) -> tuple[dict[str, Any], str]:
    """TOML front matter between ``+++`` lines, and the text after it; ``({}, text)`` without it."""
    lines = text.split("\n")
    end = next((i for i in range(1, len(lines)) if lines[i].strip() == "+++"), None)
    if lines[0].strip() != "+++" or end is None:
        return {}, text
    try:
        # The loader evens out line ends only after this; tomllib refuses a bare "\r".
        data = tomllib.loads("\n".join(line.rstrip("\r") for line in lines[1:end]))
    except (tomllib.TOMLDecodeError, RecursionError):  # nested thousands deep, tomllib recurses
        # Shown as the page's opening text it was worse than lost: every answer from the page opened with it.
        data = {}
    taxonomies = data.get("taxonomies")
    if "tags" not in data and isinstance(taxonomies, dict) and "tags" in taxonomies:
        data["tags"] = taxonomies["tags"]  # Zola keeps a page's tags under [taxonomies]
    return data, "\n".join(lines[end + 1 :])


def _fm_value(raw: str) -> Any:
    raw = raw.strip()
    if raw.startswith("[") and "]" in raw:
        inner = raw[1 : raw.rindex("]")]
        return [v for v in (_fm_scalar(p) for p in _split_inline_list(inner)) if v != ""]
    if raw in ("|", ">", "|-", ">-"):
        return None  # block scalars span lines we do not read; no field we use is one
    return _fm_scalar(raw)


def _split_inline_list(inner: str) -> list[str]:
    parts: list[str] = []
    current: list[str] = []
    quote_char: str | None = None
    for ch in inner:
        if quote_char:
            current.append(ch)
            if ch == quote_char:
                quote_char = None
        elif ch in "\"'":
            quote_char = ch
            current.append(ch)
        elif ch == ",":
            parts.append("".join(current))
            current = []
        else:
            current.append(ch)
    parts.append("".join(current))
    return parts


def _fm_scalar(raw: str) -> str:
    raw = raw.strip()
    if len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in "\"'":
        return raw[1:-1]
    if raw and raw[0] in "\"'":
        # A quoted value followed by a comment: "Title"  # shown in the tab
        closing = raw.find(raw[0], 1)
        if closing > 0:
            return raw[1:closing]
    comment = re.search(r"\s#", raw)
    return (raw[: comment.start()] if comment else raw).strip()


def text_value(value: Any) -> str:
    """A front matter value as one stripped string; "" for none, a list or a map."""
    if value is None or isinstance(value, (list, dict)):
        return ""
    return str(value).strip()


def tag_list(value: Any) -> list[str]:
    """Front matter ``tags`` (one value or a list) as distinct strings, in order."""
    if value is None:
        return []
    items = value if isinstance(value, list) else [value]
    tags: list[str] = []
    for item in items:
        text = text_value(item)
        if text and text not in tags:
            tags.append(text)
    return tags


#: An API reference page's operation, as Mintlify's front matter names it: ``openapi: "/openapi.json
#: POST /project/{id}"`` (the spec's file first, or not) or ``api: "POST https://api.x.test/v1/user"``.
_OPERATION = re.compile(r"(?:^|\s)(GET|POST|PUT|PATCH|DELETE|HEAD|OPTIONS)\s+(\S+)\s*$", re.IGNORECASE)


def endpoint(front_matter: dict[str, Any]) -> str | None:
    """The operation an API reference page documents ("POST /project/{id}"), which its site shows first.

    The page's body may be empty: the site builds it from the spec, which is no page here.
    """
    for key in ("openapi", "api"):
        found = _OPERATION.search(text_value(front_matter.get(key)))
        if found is not None:
            return f"{found[1].upper()} {found[2]}"
    return None

