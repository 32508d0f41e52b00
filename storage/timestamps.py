"""How datetimes are stored in SQLite: ISO 8601 UTC text that sorts like time."""

from __future__ import annotations

from datetime import UTC, datetime


def to_db(value: datetime, *, name: str = "timestamp") -> str:
    """Format an aware datetime as ``YYYY-MM-DDTHH:MM:SS.ffffffZ`` in UTC.

    Every value has the same width (microseconds always present), so comparing the
    text compares the instants and ``ORDER BY``/range filters can use an index.

    Args:
        value: an aware datetime, in any time zone.
        name: what the value is, for the error message.

    Raises:
        ValueError: the datetime is naive (its instant would be a guess).
    """
    if value.tzinfo is None or value.utcoffset() is None:
        raise ValueError(f"{name} {value.isoformat()} has no time zone; pass an aware datetime")
    return value.astimezone(UTC).replace(tzinfo=None).isoformat(timespec="microseconds") + "Z"


def from_db(text: str) -> datetime:
    """Parse text written by ``to_db`` back into an aware UTC datetime."""
    return datetime.fromisoformat(text).astimezone(UTC)
