"""What the explorer's bounds allow and no explored transition did: the ACP model's coverage warnings.

The explorer counts its transitions per action kind ("agent fail", "net
cut", ...: :meth:`.model.AcpModel.action_kind`).  A bound that allows a fault
or an optional behaviour whose action never fired says the verdict was
reached without it: the spec disables it, or the rest of the bounds never
open its window (a drop with no message in flight, a failure with no work).
:func:`bound_warnings` names each such bound in a sentence.
"""

from __future__ import annotations

#: counted bounds: (field, one of them, several of them, the action kinds that spend it)
COUNTED = (
    ("drops", "drop", "drops", ("net drop_to_agent", "net drop_to_client")),
    ("disconnects", "connection cut", "connection cuts", ("net cut",)),
    ("failures", "failure of running work", "failures of running work", ("agent fail",)),
    ("failures", "rejection of a held prompt", "rejections of held prompts", ("agent reject",)),
    ("cancels", "session/cancel", "session/cancels", ("client cancel",)),
    ("cancel_requests", "$/cancel_request", "$/cancel_requests", ("client cancel_request",)),
    ("restarts", "restart", "restarts", ("agent restart",)),
    ("imports", "imported message", "imported messages", ("agent import",)),
    ("forgets", "forgotten message", "forgotten messages", ("agent forget",)),
    ("retries", "retry after a timeout", "retries after a timeout", ("client retry",)),
    ("notices", "notice", "notices", ("agent notice",)),
    ("closes", "session/close", "session/closes", ("client close",)),
    ("own_work", "start of work by the agent on its own", "starts of work by the agent on its own",
     ("agent start_own_work",)),
)

#: yes/no bounds: (field, what it allows, the action kinds that use it)
SWITCHES = (
    ("hooks", "a foreground hook before insertion", ("agent hook",)),
    ("early_ids", "an ID assigned before insertion", ("agent assign_id",)),
    ("tools", "a tool call", ("agent start_tool",)),
    ("permission", "a permission request", ("agent ask_permission",)),
    ("output", "agent output", ("agent output",)),
    ("slow_work", "a silent work step", ("agent keep_working",)),
    ("stop_reasons", "an ending with another stop reason", ("agent finish",)),
    ("busy_imports", "an import while work runs", ("agent import",)),
    ("busy_commands", "a command inserted while work runs", ("agent insert",)),
    ("interleaved_resume", "a resume served in steps", ("agent resume_step",)),
    ("background", "a tool call detached into background work", ("agent detach",)),
    ("native_ids", "an insertion under a native ID", ("agent insert",)),
    ("mixed_shapes", "a live report of a chosen shape", ("agent echo",)),
)


def bound_warnings(bounds, actions: dict[str, int]) -> list[str]:
    """A sentence per bound that allows something no explored transition did.

    >>> from acplab.model.acp.model import Bounds
    >>> bound_warnings(Bounds(drops=1), {"net deliver_to_agent": 3})
    ['the bounds allow 1 drop (drops=1), but no explored transition is a drop']
    """
    out = []
    for field, one, several, kinds in COUNTED:
        allowed = getattr(bounds, field)
        if allowed and not any(actions.get(k) for k in kinds):
            out.append(f"the bounds allow {allowed} {one if allowed == 1 else several} ({field}={allowed}), "
                       f"but no explored transition is a {one}")
    for field, what, kinds in SWITCHES:
        if getattr(bounds, field) and not any(actions.get(k) for k in kinds):
            out.append(f"the bounds allow {what} ({field}=yes), but no explored transition is {what}")
    return out
