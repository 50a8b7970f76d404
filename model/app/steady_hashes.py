"""Hash values that stay the same from one process to the next, so a checkpoint made by one run fits the next.

A search's fingerprints are ``hash`` values (:mod:`acplab.model.engine.checkpoint`), and two things make
them differ between two runs of one command:

- Python salts the hash of every string per process unless ``PYTHONHASHSEED`` is fixed;
- before Python 3.12, ``hash(None)`` is ``None``'s address, which address-space randomization moves at
  every start (the ACP model's states hold ``None`` in many places).

:func:`reexec_for_checkpoints` starts ``acplab check --checkpoint`` again with ``PYTHONHASHSEED=0`` and,
where Python hashes ``None`` by address, without address randomization for this one process (Linux's
``personality(ADDR_NO_RANDOMIZE)``, as ``setarch -R`` does).  Where that cannot be had, the run goes on
and a later resume under other hashes is refused by the checkpoint's hash probe, never miscounted.
"""

from __future__ import annotations

import os
import sys

#: Linux's personality flag for "no address-space randomization" (``linux/personality.h``)
ADDR_NO_RANDOMIZE = 0x0040000
_QUERY = 0xFFFFFFFF


def reexec_for_checkpoints(args: list[str]) -> None:
    """Run again with steady hashes when a check keeps checkpoints and its hashes would not be steady."""
    before = args[: args.index("--")] if "--" in args else args
    if not any(a == "--checkpoint" or a.startswith("--checkpoint=") for a in before):
        return
    again = os.environ.get("PYTHONHASHSEED") is None
    if again:
        os.environ["PYTHONHASHSEED"] = "0"
    if sys.version_info < (3, 12) and sys.platform.startswith("linux"):
        again |= _stop_address_randomization()
    if again:
        os.execv(sys.executable, [sys.executable, "-m", "acplab.model.app.cli", *args])


def _stop_address_randomization() -> bool:
    """Ask that the next ``exec`` of this process runs without address randomization; whether that is new."""
    try:
        import ctypes

        personality = ctypes.CDLL(None, use_errno=True).personality
        personality.argtypes, personality.restype = [ctypes.c_ulong], ctypes.c_int
        current = personality(_QUERY)
        if current == -1 or current & ADDR_NO_RANDOMIZE:
            return False
        return personality(current | ADDR_NO_RANDOMIZE) != -1
    except (OSError, AttributeError):  # no C library to ask, or no personality call in it
        return False
