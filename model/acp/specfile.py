"""Variants as files: a TOML file names a preset to start from and the switches it changes.

.. code-block:: toml

    name = "ack-at-echo"                 # required: letters, digits and dashes; not a preset's name
    base = "rfd"                         # a preset (``acplab specs``); default rfd
    description = "answer at receipt"    # optional
    no_difference = "..."                # optional: why the model cannot tell it from rfd, if it cannot
    extension = "mine.py:MyHook"         # optional: a class the model loads, FILE relative to this file
                                         # (:mod:`.extension`; loading the spec file RUNS that code)

    [switches]                           # any behaviour switch of model/acp/spec.py's Spec
    respond_at = "receipt"
    rejection_signal = true

    [by_design]                          # optional: RFD rules it breaks by definition (never findings);
                                         # without the table, the base's (an empty table: none)
    ResponsesFollowInsertion = "the success is a receipt"

    [not_applicable]                     # optional: properties it does not speak to
    PromptsAnswered = "no request"

``acplab check|matrix|simulate --spec-file FILE`` load it; a loaded spec
lives in :data:`.spec.USER_SPECS` for the process, never in the presets,
so it never reaches the committed figures.  An unknown key or switch, or a
value of the wrong type or outside a switch's choices, or a combination of
switches :mod:`.switch_rules` refuses, is an
:class:`~acplab.model.errors.InputError` (one line, exit 2) that names what
is known or points at ``acplab switches``.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from acplab.model.errors import InputError

from .extension import resolve
from .spec import FINDINGS, MUTANTS, RFD, SPECS, USER_SPECS, VARIANTS, Spec
from .switch_rules import refuse_invalid, unknown_switch

#: the values each text switch accepts (the actors read exactly these)
CHOICES: dict[str, tuple[str, ...]] = {
    "respond_at": ("insertion", "receipt", "end_of_turn", "never"),
    "response": ("message_id", "empty", "stop_reason"),
    "message_ids": ("agent", "jsonrpc_id", "client_chosen"),
    "failure_before_response": ("success", "error_response"),
    "failure_report": ("idle_error", "idle_silent", "failed_state", "error_update", "error_notice", "error_response"),
    "cancel_request_after_insertion": ("success", "error"),
    "client_correlation": ("message_id", "content", "order", "token", "jsonrpc_id", "token_after_cut"),
    "client_ids": ("global", "per_client"),
    "duplicate_ids": ("accept", "reject"),
    "error_update_stop": ("none", "error"),
    "hook_rejection_stop": ("error", "end_turn"),
    "withdrawn_ids": ("retired", "recycled"),
    "report_id": ("inserted", "runtime"),
    "cancel_request_match": ("sender", "id_only"),
    "abort_failure_stop": ("cancelled", "error"),
    "permission_on_disconnect": ("deny", "reask"),
    "error_shape": ("variant", "sibling"),
    "error_type": ("jsonrpc", "new"),
}
#: Spec fields a file sets outside ``[switches]`` (or not at all)
_NOT_SWITCHES = ("name", "description", "not_applicable", "by_design", "no_difference", "breaks", "extension")
SWITCHES: tuple[str, ...] = tuple(f for f in Spec._fields if f not in _NOT_SWITCHES)
TOP_LEVEL = ("name", "base", "description", "no_difference", "switches", "by_design", "not_applicable", "extension")
_NAME = re.compile(r"^[a-z0-9][a-z0-9-]{0,63}$")


def load(path: str | Path) -> Spec:
    """The spec a TOML file describes (not registered: see :func:`register`)."""
    path = Path(path)
    where = f"spec file {path}"
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as err:
        raise InputError(f"{where}: not TOML: {err}") from None
    except UnicodeDecodeError:
        raise InputError(f"{where}: not UTF-8 text") from None
    unknown = sorted(set(data) - set(TOP_LEVEL))
    if unknown:
        raise InputError(f"{where}: unknown key {unknown[0]!r}; known keys: {', '.join(TOP_LEVEL)}")
    name = data.get("name")
    if not isinstance(name, str) or not _NAME.match(name):
        raise InputError(f"{where}: name must be lower-case letters, digits and dashes (at most 64), got {name!r}")
    base_name = data.get("base", "rfd")
    presets = {"rfd": RFD, **VARIANTS, **MUTANTS, **FINDINGS}
    if base_name not in presets:
        raise InputError(f"{where}: unknown base {base_name!r}; known presets: {', '.join(presets)}")
    switches = data.get("switches", {})
    if not isinstance(switches, dict):
        raise InputError(f"{where}: [switches] must be a table of switch = value")
    changes = {key: _switch(where, key, value) for key, value in switches.items()}
    base = presets[base_name]
    description = data.get("description", _describe(base_name, changes))
    spec = base._replace(name=name, description=_text(where, "description", description), **changes,
                         by_design=_reasons(where, data, "by_design") if "by_design" in data else base.by_design,
                         not_applicable=_reasons(where, data, "not_applicable") or base.not_applicable,
                         no_difference=_text(where, "no_difference", data.get("no_difference", "")), breaks="",
                         extension=resolve(data["extension"], path) if "extension" in data else base.extension)
    return refuse_invalid(spec, where)  # a combination of switches the model cannot give a meaning to


def register(spec: Spec) -> Spec:
    """Make ``spec`` known by name for this process (``get_spec``); a preset's name is refused."""
    if spec.name in SPECS and spec.name not in USER_SPECS:
        raise InputError(f"spec file name {spec.name!r} is a preset's; choose another name")
    USER_SPECS[spec.name] = spec
    return spec


def load_and_register(path: str | Path) -> str:
    """Load a spec file, register it, and return its name."""
    return register(load(path)).name


def _switch(where: str, key: str, value):
    if key not in SWITCHES:
        raise unknown_switch(where, key, SWITCHES)
    default = getattr(RFD, key)
    kind = type(default)
    if kind is bool and not isinstance(value, bool) or kind is int and (isinstance(value, bool) or not isinstance(
            value, int)) or kind is str and not isinstance(value, str):
        raise InputError(f"{where}: switch {key} takes {_kind(default)}, got {value!r}; see `acplab switches`")
    if key in CHOICES and value not in CHOICES[key]:
        raise InputError(f"{where}: switch {key} is one of {', '.join(CHOICES[key])}, got {value!r}; "
                         f"see `acplab switches`")
    if kind is int and not 0 <= value <= 10 ** 6:
        raise InputError(f"{where}: switch {key} is a whole number from 0 to 1000000, got {value}; "
                         f"see `acplab switches`")
    return value


def _kind(default) -> str:
    return {bool: "true or false", int: "a whole number", str: "a text"}[type(default)]


def _text(where: str, key: str, value) -> str:
    if not isinstance(value, str) or len(value) > 500:
        raise InputError(f"{where}: {key} must be a text of at most 500 characters")
    return value


def _reasons(where: str, data: dict, key: str) -> tuple:
    """A ``[by_design]`` or ``[not_applicable]`` table: property name -> reason."""
    from .goals import GOAL_NAMES
    from .monitor_set import monitor_names, replaced_by

    table = data.get(key, {})
    if not isinstance(table, dict):
        raise InputError(f"{where}: [{key}] must be a table of property = \"reason\"")
    known = monitor_names() + list(GOAL_NAMES) + list(bridge_property_names())
    for prop, reason in table.items():
        if prop not in known:
            hint = replaced_by(prop) or "see `acplab properties`"
            raise InputError(f"{where}: [{key}] names unknown property {prop!r}; {hint}")
        _text(where, f"[{key}] {prop}", reason)
    if key == "by_design" and set(table) & set(GOAL_NAMES):
        raise InputError(f"{where}: [by_design] lists goals; goals are design-neutral, only rules can be by design")
    return tuple(sorted(table.items()))


def bridge_property_names() -> list[str]:
    """The rules of the v1<->v2 bridge models (a spec may declare some by design)."""
    from .bridges import V1AgentBehindBridge
    from .bridges_v2 import V2AgentBehindBridge

    return [p.name for m in (V1AgentBehindBridge(), V2AgentBehindBridge(updates=True)) for p in m.properties()
            if p.expectation == "always"]


def _describe(base: str, changes: dict) -> str:
    said = ", ".join(f"{k}={v}" for k, v in changes.items()) or "no change"
    return f"{base} with {said} (a spec file)"
