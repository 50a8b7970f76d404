"""Dedup by promptId: a retry carries its first submission's promptId, and the agent answers it with the
message that submission inserted instead of inserting it again.

Both halves of the mechanism, on the two protocols of acplab.model.acp.extension: the client strategy
(``retry_prompt_id``) and the agent hook (``on_prompt``).  A retry that arrives while its first
submission is still held (received, not yet inserted) is refused with an error: it is not inserted
(E1), and the first submission's own answer is still to come.  The key is the client's own
(client, promptId): scoped to one client, colliding generators of two clients never merge their
requests (the first build keyed by promptId alone did, under the matrix's id-collision run).
"""

from acplab.model.acp.extension import Answer, Reject


class DedupByPromptId:
    def retry_prompt_id(self, original, fresh):
        """A retry is the same request: send the promptId of the submission it retries."""
        return original if original is not None else fresh

    def on_prompt(self, prompt):
        """Deduplicate within the client's own submissions: two clients' equal tokens are two requests."""
        if prompt.prompt_id is None:
            return None
        for message in prompt.history:
            if (message.client, message.prompt_id) == (prompt.client, prompt.prompt_id):
                return Answer(message.mid)  # already inserted: its ID, nothing new
        if (prompt.client, prompt.prompt_id) in prompt.held:
            return Reject(-32600, "a prompt with this promptId is in progress")
        return None
