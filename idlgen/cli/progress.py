"""Build progress on stderr: a rewritten status line on a terminal, sparse lines in CI logs.

On a TTY the line ``idlgen: <phase> <done>/<total>`` is redrawn in place (at most ~10 times
a second) and erased at the end. Elsewhere (CI logs, pipes) a phase is announced once, when it
starts; ``verbose`` adds a closing line per phase. Nothing is printed when ``quiet``.
"""

from __future__ import annotations

import sys
import time
from typing import TextIO

__all__ = ["Progress"]

_INTERVAL = 0.1


class Progress:
    def __init__(
        self, stream: TextIO | None = None, *, quiet: bool = False, verbose: bool = False
    ) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.quiet = quiet
        self.verbose = verbose
        isatty = getattr(self.stream, "isatty", None)
        self.tty = bool(isatty and isatty())
        self._phase: str | None = None
        self._last = 0.0
        self._drawn = False

    def __call__(self, phase: str, done: int, total: int) -> None:
        if self.quiet:
            return
        if self.tty:
            now = time.monotonic()
            if phase == self._phase and done < total and now - self._last < _INTERVAL:
                return
            self._phase, self._last = phase, now
            self.stream.write(f"\r\x1b[Kidlgen: {phase} {done}/{total}")
            self.stream.flush()
            self._drawn = True
            return
        if phase != self._phase:
            self._phase = phase
            self.stream.write(f"idlgen: {phase} ({total} file(s))\n")
        elif self.verbose and done == total:
            self.stream.write(f"idlgen: {phase} done\n")

    def close(self) -> None:
        """Erase the status line so the summary and diagnostics print on a clean line."""
        if self.tty and self._drawn:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self._drawn = False
