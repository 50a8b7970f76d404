"""Reject a duplicate client-chosen id: the collision rule the client-chosen-ID design needs.

The agent hook of acplab.model.acp.extension: a prompt whose chosen messageId already names a message in
history, or a prompt the agent still holds, is refused with a JSON-RPC error (not inserted, E1), so
two clients whose generators collide never share a message ID.  The client still binds its chosen ID
on the first report that carries it, before its own answer: under colliding generators it binds another
client's message (NoMisattribution), a question for the client's strategy, not for this hook.
"""

from acplab.model.acp.extension import Reject


class RejectDuplicateClientId:
    def on_prompt(self, prompt):
        chosen = prompt.prompt_id
        if chosen is None:
            return None
        if any(m.mid == chosen for m in prompt.history) or any(held == chosen for _, held in prompt.held):
            return Reject(-32602, f"messageId {chosen} is already in use")
        return None
