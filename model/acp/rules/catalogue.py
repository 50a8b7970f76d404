"""The rules catalogue the tool cites, shipped with it (``catalogue.json``), so verdicts can be looked up offline.

One entry per rule ID of the project's shared ``RULES.md`` (the IDs are that
catalogue's): a one-line paraphrase in acplab's own words, the strength
(MUST, SHOULD, def, ...), the source, whether a wire observer can check it
(``yes``, ``yes*`` for a trace proxy, ``internal``, ``no``) and, where one
was taken, the RFD sentence it rests on (``rfd``, a short quote).
"""

from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources
from typing import NamedTuple


class Rule(NamedTuple):
    id: str
    text: str
    strength: str
    source: str
    checkable: str
    wire_note: str
    normative: bool
    #: the RFD sentence the rule rests on (a short quote) where one was taken; else ``source`` anchors it
    rfd: str = ""


@lru_cache(maxsize=1)
def catalogue() -> dict[str, Rule]:
    """Every rule by ID, in catalogue order."""
    text = resources.files(__package__).joinpath("catalogue.json").read_text(encoding="utf-8")
    return {r["id"]: Rule(**r) for r in json.loads(text)}


def wire_checkable_musts() -> list[str]:
    """The MUST / MUST NOT rules a wire observer can check (``yes`` or ``yes*``): 56 by the literal reading."""
    return [r.id for r in catalogue().values() if r.normative and r.checkable in ("yes", "yes*")]
