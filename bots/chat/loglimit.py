"""Log lines about requests from outside, rate- and size-limited so a flood cannot fill the disk."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

#: Longest logged line; the rest of an attacker's text is cut off.
MAX_LINE = 300


class LimitedLog:
    """Log at most ``per_window`` lines every ``window`` seconds, each cut to ``max_chars``.

    Lines over the limit are counted, and the count is logged with the first line of the
    next window, so an admin still learns that a flood happened.
    """

    def __init__(
        self, logger: logging.Logger, *, per_window: int = 20, window: float = 60.0,
        max_chars: int = MAX_LINE, clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if per_window < 1 or window <= 0 or max_chars < 20:
            raise ValueError("per_window >= 1, window > 0 and max_chars >= 20 are required")
        self.logger = logger
        self.per_window = per_window
        self.window = window
        self.max_chars = max_chars
        self._clock = clock
        self._started = clock()
        self._logged = 0
        self.suppressed = 0

    def warning(self, message: str) -> bool:
        """Log ``message`` (cut, one line) unless over the limit; True when it was logged."""
        now = self._clock()
        if now - self._started >= self.window:
            if self.suppressed:
                self.logger.warning("%d similar lines suppressed in the last %.0f s", self.suppressed,
                                    now - self._started)
            self._started, self._logged, self.suppressed = now, 0, 0
        if self._logged >= self.per_window:
            self.suppressed += 1
            return False
        self._logged += 1
        line = " ".join(message.split())  # one line: no newline from outside reaches the log
        if len(line) > self.max_chars:
            line = line[: self.max_chars - 1] + "…"
        self.logger.warning("%s", line)
        return True
