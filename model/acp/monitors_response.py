"""A response held until the work ends (P2, S1): the v1 shape, judged on behaviour."""

from __future__ import annotations

from .events import A2C
from .monitors_base import Monitor, conn_name as _conn, work_ended


class ResponseNotHeldForWorkEnd(Monitor):
    """P2/S1: judged on behaviour: a response to a prompt sent in the very step that ended the
    work that prompt's message started (or joined) was released by the end of the work."""

    name = "ResponseNotHeldForWorkEnd"
    rules = ("P2", "S1")
    description = "the prompt response does not wait for the end of the work (insertion is the acknowledgement)"
    kinds = frozenset({"send"})

    def observe(self, m, e, before, after):
        if e.kind != "send" or e.dir != A2C or not work_ended(before, after):
            return m, None
        if e.msg.kind not in ("prompt_result", "prompt_result_v1", "error_response"):
            return m, None
        mids = before.agent.work.mids
        for r in before.agent.reqs:
            if (r.client, r.epoch, r.rid) == (*e.conn, e.msg.rid) and r.mid in mids:
                return m, f"the response to prompt #{e.msg.rid} on {_conn(e.conn)} was sent by the step " \
                          f"that ended its work: it was held until the work ended"
        return m, None
