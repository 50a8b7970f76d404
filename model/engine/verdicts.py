"""Verdicts and their exit codes: the command-line contract (DESIGN.md), named once.

``holds`` 0 (every property holds and the run was complete), ``violated`` 1,
``error`` 2 (bad usage or bad input, one line on stderr), ``incomplete`` 3
(a limit was hit, nothing violated).
"""

from __future__ import annotations

EXIT_CODES = {"holds": 0, "violated": 1, "error": 2, "incomplete": 3}


def exit_code(verdict: str) -> int:
    """The process exit code for a verdict."""
    return EXIT_CODES[verdict]
