"""Plain text files (``.txt``) and the UTF-8 check every loader uses."""

from __future__ import annotations

import re

from core.errors import IngestSourceError
from core.ingest.document import Section


def decode_text(raw: bytes, *, name: str) -> str:
    """Decode UTF-8 text (a BOM is allowed), refusing binary data.

    Raises:
        IngestSourceError: naming ``name`` when the bytes are binary or not UTF-8.
    """
    # A NUL byte never occurs in text files but almost always in binary ones.
    if b"\x00" in raw[:8192]:
        raise IngestSourceError(f"{name}: looks binary (contains NUL bytes), not a text document")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise IngestSourceError(
            f"{name}: not valid UTF-8 (byte 0x{raw[exc.start]:02x} at offset {exc.start})"
        ) from exc


def parse_plain_text(text: str) -> list[Section]:
    """Split plain text (``.txt``, or RST docutils cannot read) into paragraphs under no heading."""
    normalised = text.replace("\r\n", "\n").replace("\r", "\n")
    blocks = [b.strip("\n") for b in re.split(r"\n[ \t]*\n", normalised) if b.strip()]
    return [Section([], [b.rstrip() for b in blocks])] if blocks else []
