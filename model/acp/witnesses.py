"""Witnesses: states a scenario must reach, so a model that cannot get there fails loudly.

Each witness is ``(name, predicate on World, rule IDs, description)`` and
becomes a ``sometimes`` property.  Predicates read the ground truth the model
keeps (which submission inserted which history entry) next to what the
clients see.
"""

from __future__ import annotations

from .state import World


def _subs_of(world: World):
    for c, client in enumerate(world.clients):
        for sub in client.subs:
            yield c, client, sub


def _entry(world: World, mid):
    for e in world.agent.history:
        if e.mid == mid:
            return e
    return None


def echo_before_response(w: World) -> bool:
    """A client shows its own message under its ID while its response is still pending (U2)."""
    for c, client in enumerate(w.clients):
        for item in client.feed:
            if item.mid is None:
                continue
            e = _entry(w, item.mid)
            if e is not None and e.sub is not None and e.sub[0] == c:
                for sub in client.subs:
                    if (c, sub.epoch, sub.rid) == e.sub and sub.status == "pending":
                        return True
    return False


def response_before_echo(w: World) -> bool:
    """A client has its response (the ID) while the agent's report has not reached it (U2)."""
    for _, client, sub in _subs_of(w):
        if sub.status == "accepted" and sub.mid is not None:
            for item in client.feed:
                if item.mid == sub.mid and item.provisional:
                    return True
    return False


def pending_with_id_minted(w: World) -> bool:
    """A prompt is held at the agent, not inserted and not answered (P1, P3)."""
    return any(not r.inserted and not r.answered for r in w.agent.reqs) and w.agent.work is not None


def identical_prompts_distinct_ids(w: World) -> bool:
    """Two accepted submissions with identical content have distinct IDs (P5)."""
    prompts = [e for e in w.agent.history if e.origin == "prompt"]
    return any(a.content == b.content and a.mid != b.mid for i, a in enumerate(prompts) for b in prompts[i + 1 :])


def both_accepted_identical(w: World) -> bool:
    """A client holds two accepted submissions of the same text under two IDs (P5, U2)."""
    for client in w.clients:
        acc = [s for s in client.subs if s.status == "accepted"]
        if any(a.content == b.content and a.mid != b.mid for i, a in enumerate(acc) for b in acc[i + 1 :]):
            return True
    return False


def two_clients_submitted(w: World) -> bool:
    """Messages from two different clients are inserted into the one session (P9)."""
    return len({e.sub[0] for e in w.agent.history if e.sub is not None}) >= 2


def other_client_renders(w: World) -> bool:
    """A client renders another client's message by its ID alone (P9, U1 fan-out)."""
    for c, client in enumerate(w.clients):
        for item in client.feed:
            e = _entry(w, item.mid) if item.mid else None
            if e is not None and e.sub is not None and e.sub[0] != c and item.content == e.content:
                return True
    return False


def replayed_and_recognized(w: World) -> bool:
    """A client rebuilt by replay shows its accepted message once, under the returned ID (R5, R12)."""
    for client in w.clients:
        if client.view != "replayed":
            continue
        for sub in client.subs:
            if sub.status == "accepted" and [i.mid for i in client.feed].count(sub.mid) == 1:
                return True
    return False


def imported_rendered(w: World) -> bool:
    """A client renders an imported message that no prompt response announced (U14)."""
    imported = {e.mid for e in w.agent.history if e.origin == "imported"}
    return any(item.mid in imported for client in w.clients for item in client.feed)


def streamed_user_message(w: World) -> bool:
    """A user message reported with chunks is complete in a client's feed (U7, U13)."""
    for client in w.clients:
        for item in client.feed:
            e = _entry(w, item.mid) if item.mid else None
            if e is not None and e.origin == "prompt" and item.content == e.content and not item.provisional:
                return True
    return False


def command_live_not_replayed(w: World) -> bool:
    """A live-only command, answered on the client's first connection (so in the history before the replay),
    is shown live by a client that a later replay rebuilt without it (P10, R4)."""
    live_only = {e.mid for e in w.agent.history if e.origin == "command" and not e.retained}
    for client in w.clients:
        before = {s.mid for s in client.subs if s.status == "accepted" and s.epoch == 0} & live_only
        if client.view == "replayed" and client.epoch > 0 and any(
                item.mid in before and not item.provisional for item in client.feed):
            return True
    return False


def retained_command_replayed(w: World) -> bool:
    """A retained command comes back on replay under its ID (R9)."""
    kept = {e.mid for e in w.agent.history if e.origin == "command" and e.retained}
    return any(client.view == "replayed" and any(i.mid in kept for i in client.feed) for client in w.clients)


def ambiguous_submission(w: World) -> bool:
    """A client lost its connection before the response: the outcome is ambiguous (R11)."""
    return any(sub.status == "ambiguous" for _, _, sub in _subs_of(w))


def ambiguous_but_inserted(w: World) -> bool:
    """An ambiguous submission was in fact inserted: the client cannot know (R11, P12)."""
    for c, _, sub in _subs_of(w):
        if sub.status == "ambiguous" and any(e.sub == (c, sub.epoch, sub.rid) for e in w.agent.history):
            return True
    return False


def retry_created_second_message(w: World) -> bool:
    """After an ambiguous outcome, a retry of the same text is a second message (P12)."""
    for c, client, sub in _subs_of(w):
        if sub.status != "ambiguous":
            continue
        if not any(e.sub == (c, sub.epoch, sub.rid) for e in w.agent.history):
            continue
        for other in client.subs:
            if other.status == "accepted" and other.content == sub.content and other.epoch > sub.epoch:
                return True
    return False


def failed_before_response(w: World) -> bool:
    """Work failed while its prompt's response was still unsent (E2)."""
    return w.agent.last_stop == "error" and any(r.inserted and not r.answered for r in w.agent.reqs)


def error_idle_seen(w: World) -> bool:
    """A client saw the work end with the error stop reason and still holds an accepted prompt (E3)."""
    return w.agent.last_stop == "error" and any(sub.status == "accepted" for _, _, sub in _subs_of(w))


def resumed_after_failure(w: World) -> bool:
    """A client that reconnected after the work failed knows it failed (E13: the snapshot carries it)."""
    return any(c.view in ("resumed", "replayed") and c.last_stop == "error" for c in w.clients)


def rejected_before_insertion(w: World) -> bool:
    """A prompt was rejected with a JSON-RPC error and nothing was inserted (E1)."""
    return any(sub.status == "rejected" for _, _, sub in _subs_of(w))


def cancelled_before_insertion(w: World) -> bool:
    """A prompt was answered -32800 before insertion (C1, C4)."""
    return any(sub.status == "cancelled" for _, _, sub in _subs_of(w))


def cancel_request_after_insertion(w: World) -> bool:
    """A ``$/cancel_request`` reached an inserted prompt, which still succeeds (C1)."""
    return any(r.inserted and r.cancel_asked and not r.answered for r in w.agent.reqs)


def work_cancelled(w: World) -> bool:
    """Work ended with stopReason cancelled (C7)."""
    return w.agent.last_stop == "cancelled"


def replay_while_running(w: World) -> bool:
    """A client was rebuilt by replay while foreground work was still running (X28): its feed shows the
    running work's message, which it can only have from the replay, since its live report is still due."""
    work = w.agent.work
    if work is None:
        return False
    due = {r.mid for r in w.agent.reqs if r.inserted and not r.echoed and r.mid in work.mids}
    return any(c.view == "replayed" and any(i.mid in due and not i.provisional for i in c.feed) for c in w.clients)


def permission_pending(w: World) -> bool:
    """Work is blocked on a permission answer (S8, requires_action)."""
    return w.agent.fg == "requires_action"


def restart_kept_retained(w: World) -> bool:
    """After an agent restart a client rebuilt by replay shows retained history (R5)."""
    return w.budget.restarts == 0 and any(
        c.view == "replayed" and any(i.mid for i in c.feed) for c in w.clients
    ) and any(e.retained for e in w.agent.history)


def id_assigned_before_insertion(w: World) -> bool:
    """A held prompt has an ID assigned in advance and no response yet (P1, P3, P7: not evidence)."""
    return any(r.mid is not None and not r.inserted and not r.answered for r in w.agent.reqs)


def assigned_id_withdrawn(w: World) -> bool:
    """A prompt with an ID assigned in advance was rejected or withdrawn; the ID is retired (P5, P16)."""
    return bool(w.agent.withdrawn) and any(sub.status in ("rejected", "cancelled") for _, _, sub in _subs_of(w))


def inserted_while_busy(w: World) -> bool:
    """A prompt was inserted while work ran and joined it (S1, S3): one work, two messages, or a
    prompt in the agent's own work."""
    work = w.agent.work
    return work is not None and (len(work.mids) >= 2 or (work.origin == "agent" and bool(work.mids)))


def agent_initiated_work(w: World) -> bool:
    """The agent works on its own (no prompt) and a client sees it running (S17)."""
    work = w.agent.work
    return work is not None and work.origin == "agent" and any(c.fg == "running" for c in w.clients)


def running_before_insertion(w: World) -> bool:
    """A client sees running while its own prompt is still held, not inserted (S4)."""
    work = w.agent.work
    if work is None or work.origin != "hook" or work.hook is None:
        return False
    c = work.hook[0]
    return w.clients[c].fg == "running" and any(r.token == work.hook and not r.inserted for r in w.agent.reqs)


def hook_outlives_rejection(w: World) -> bool:
    """A prompt was rejected before insertion while its hook's work goes on (S4, E11)."""
    work = w.agent.work
    return work is not None and work.origin == "hook" and work.hook is None and any(
        sub.status == "rejected" for _, _, sub in _subs_of(w))


def custom_stop_reason_seen(w: World) -> bool:
    """A client learned that work ended with a custom, ``_``-prefixed stop reason (S5, W6)."""
    return any((c.last_stop or "").startswith("_") for c in w.clients)


def refusal_seen(w: World) -> bool:
    """A client learned that work ended with the standard stop reason refusal (S5)."""
    return any(c.last_stop == "refusal" for c in w.clients)


def live_inside_replay_window(w: World) -> bool:
    """A client whose resume with replay is still being served already shows a message inserted after its
    resume arrived: live work went on inside the replay window and reached it live (R3)."""
    for r in w.agent.resumes:
        later = {e.mid for e in w.agent.history[r.end:]}
        if r.replay and r.cursor < r.end and any(i.mid in later for i in w.clients[r.client].feed):
            return True
    return False


def retry_made_second_message(w: World) -> bool:
    """A client that timed out and retried on the same connection has two accepted submissions of one text
    under two IDs: the retry was a second message (P12; the RFD's FAQ: retrying is not safe)."""
    for client in w.clients:
        accepted = [s for s in client.subs if s.status == "accepted"]
        if any(a.epoch == b.epoch and a.content == b.content and a.mid != b.mid
               for i, a in enumerate(accepted) for b in accepted[i + 1:]):
            return True
    return False


def _after_work_started(w: World, origin: str) -> bool:
    """An entry of ``origin`` sits in the history after the first message of the prompt work still running."""
    work = w.agent.work
    if work is None or work.command or not work.mids:
        return False
    mids = [e.mid for e in w.agent.history]
    start = mids.index(work.mids[0]) if work.mids[0] in mids else len(mids)
    return any(e.origin == origin for e in w.agent.history[start + 1:])


def imported_while_busy(w: World) -> bool:
    """A message was imported while a prompt's work ran (U14, S6)."""
    return _after_work_started(w, "imported")


def command_while_busy(w: World) -> bool:
    """A locally handled command was inserted while a prompt's work ran (P10, P11)."""
    return _after_work_started(w, "command")


def late_joiner_replayed(w: World) -> bool:
    """A client that joined the live session late (its first connection is epoch 0 after none) was rebuilt by
    replay and shows another client's message under its ID (R1, R5)."""
    for c, client in enumerate(w.clients):
        if client.epoch == 0 and client.cut and client.view == "replayed":
            theirs = {e.mid for e in w.agent.history if e.sub is not None and e.sub[0] != c}
            if any(i.mid in theirs and not i.provisional for i in client.feed):
                return True
    return False


def late_joiner_without_replay(w: World) -> bool:
    """A late joiner resumed without replay knows the session's current state from the snapshot alone (S13)."""
    return any(client.epoch == 0 and client.cut and client.view == "resumed" and not client.subs
               and client.fg == w.agent.fg for client in w.clients) and w.agent.fg != "idle"


def notice_in_flight(w: World) -> bool:
    """An advisory notice is on its way to a client while a prompt's work runs (N5)."""
    return w.agent.work is not None and any(
        getattr(getattr(m, "update", None), "kind", None) == "notice" for link in w.links for m in link.to_client)


def _in_flight_updates(w: World):
    for link in w.links:
        for m in link.to_client:
            u = getattr(m, "update", None)
            if u is not None:
                yield u


def background_reports_while_idle(w: World) -> bool:
    """Background work listed by the idle that ended its turn reported a final status while the agent is idle
    (S11, G1): updates after idle that change no state."""
    return w.agent.fg == "idle" and w.agent.work is None and any(final for _t, final in w.agent.background)


def background_finished_during_turn(w: World) -> bool:
    """A background call's final status went out while later foreground work runs (``background_overlap``):
    the drop then comes in that work's own state updates (G1, G4, G7, S11)."""
    return w.agent.work is not None and any(final for _t, final in w.agent.background)


def background_ended_by_snapshot(w: World) -> bool:
    """A ``background: []`` snapshot is on its way: the work the last idle listed has ended (G1, G4)."""
    return any(u.kind == "state_update" and u.background == () for u in _in_flight_updates(w))


def close_answered_after_cancelled_idle(w: World) -> bool:
    """A ``session/close`` response is on its way behind the cancelled idle of the work the close ended (C14)."""
    for link in w.links:
        kinds = [(m.kind, getattr(getattr(m, "update", None), "stop_reason", None)) for m in link.to_client]
        if ("close_result", None) in kinds and ("update", "cancelled") in kinds[:kinds.index(("close_result", None))]:
            return True
    return False


def held_prompt_withdrawn_by_close(w: World) -> bool:
    """A client that closed the session had a held prompt withdrawn with -32800 by the close (C14, C4)."""
    return any(c.closed and any(s.status == "cancelled" for s in c.subs) for c in w.clients)


def two_permissions_outstanding(w: World) -> bool:
    """A client holds two permission requests of one turn's parallel tool calls, both still to answer (S8)."""
    return any(len(c.perms) == 2 and not any(cancelled for _rid, cancelled in c.perms) for c in w.clients)


def second_permission_answered_first(w: World) -> bool:
    """Of two parallel tool calls, the second's permission was answered while the first's is still open (S9)."""
    work = w.agent.work
    return work is not None and len(work.tools) == 2 and work.tools[0] == "pending" and work.tools[1] != "pending"


def cancel_with_two_permissions_pending(w: World) -> bool:
    """``session/cancel`` found two permission requests outstanding: the client got a ``$/cancel_request`` for
    each (C11)."""
    return any(len(c.perms) == 2 and all(cancelled for _rid, cancelled in c.perms) for c in w.clients)


def native_id_accepted(w: World) -> bool:
    """A client's prompt was accepted under the runtime's native ID and the client shows it under that ID (P8)."""
    return any(s.status == "accepted" and s.mid is not None and s.mid.startswith("n")
               and any(i.mid == s.mid and not i.provisional for i in c.feed) for c in w.clients for s in c.subs)


def native_and_adapter_ids(w: World) -> bool:
    """The history holds a prompt under a native ID and a message under an adapter-owned one (P5, P8)."""
    owners = {e.mid[0] for e in w.agent.history if e.role == "user"}
    return owners == {"n", "m"}


def _in_flight_user_updates(w: World):
    """``(update, its history entry)`` for every user message update on its way to a client."""
    for u in _in_flight_updates(w):
        if u.kind in ("user_message", "user_message_chunk"):
            e = _entry(w, u.message_id)
            if e is not None and e.origin == "prompt":
                yield u, e


def chunked_live_replayed_full(w: World) -> bool:
    """A prompt reported live as chunks is rebuilt by replay as one full-content update (U13, R7)."""
    return any(u.kind == "user_message" and u.content and e.chunked for u, e in _in_flight_user_updates(w))


def full_live_replayed_chunked(w: World) -> bool:
    """A prompt reported live as one full-content update is rebuilt by replay as chunks (U13, R7)."""
    return any(u.kind == "user_message_chunk" and not e.chunked for u, e in _in_flight_user_updates(w))


def later_message_replayed_after_trim(w: World) -> bool:
    """The retention policy forgot the first user message; a replay then showed a later one under its own ID
    (R4, R5)."""
    prompts = [e for e in w.agent.history if e.role == "user"]
    if len(prompts) < 2 or prompts[0].retained or not prompts[1].retained:
        return False
    return any(c.view == "replayed" and any(i.mid == prompts[1].mid and not i.provisional for i in c.feed)
               and all(i.mid != prompts[0].mid for i in c.feed) for c in w.clients)


def late_joiner_loaded(w: World) -> bool:
    """A late joiner attached with ``session/load``: its response is on the way and it already shows another
    client's message, rebuilt by the load's replay (R1, R5)."""
    for c, link in enumerate(w.links):
        if any(m.kind == "load_result" for m in link.to_client):
            theirs = {e.mid for e in w.agent.history if e.sub is not None and e.sub[0] != c}
            if any(i.mid in theirs and not i.provisional for i in w.clients[c].feed):
                return True
    return False


def load_reset_before_chunks(w: World) -> bool:
    """A ``session/load`` rebuilds a chunk-reported message on its way to the joiner: the ``content: []`` reset,
    then the chunks, then the load's response (R7, R13)."""
    for link in w.links:
        kinds = [(m.kind, getattr(getattr(m, "update", None), "kind", None), getattr(m, "update", None))
                 for m in link.to_client]
        if not any(k == "load_result" for k, _u, _x in kinds):
            continue
        reset = [u.message_id for _k, kind, u in kinds if kind == "user_message" and u.content == ()]
        if any(kind == "user_message_chunk" and u.message_id in reset for _k, kind, u in kinds):
            return True
    return False


def forgotten_not_replayed(w: World) -> bool:
    """A prompt retained at insertion was forgotten by the retention policy before a replay, which left it
    out (R4): at rest, the replayed client shows every other message, not that one."""
    if w.agent.reqs or w.agent.work is not None:
        return False
    forgotten = {e.mid for e in w.agent.history if e.origin == "prompt" and not e.retained}
    for c, client in enumerate(w.clients):
        if client.view == "replayed" and not w.links[c].to_client and forgotten - {i.mid for i in client.feed}:
            return True
    return False


def hook_withdrawn_by_cancel_request(w: World) -> bool:
    """A hook runs cancelled after ``$/cancel_request`` withdrew its prompt and retired the ID the prompt
    was assigned in advance (C1, C7, P16, S4)."""
    work = w.agent.work
    return work is not None and work.origin == "hook" and work.cancelled and work.hook is None and bool(
        w.agent.withdrawn) and any(sub.status == "cancelled" for _, _, sub in _subs_of(w))


def hook_cancelled_by_session_cancel(w: World) -> bool:
    """``session/cancel`` cancelled a hook while its prompt was still held (C4, C7, S4)."""
    work = w.agent.work
    return work is not None and work.origin == "hook" and work.cancelled and work.hook is not None


def requires_action_after_reconnect(w: World) -> bool:
    """A client that reconnected learns from the resume snapshot that work awaits the user (S9, S13)."""
    return w.agent.fg == "requires_action" and any(
        c.view in ("resumed", "replayed") and c.fg == "requires_action" for c in w.clients)


def requires_action_seen_by_other(w: World) -> bool:
    """A client that was not asked sees requires_action (the state is session-wide, S8)."""
    work = w.agent.work
    askers = {asked for _k, _rid, asked in work.perms} - {None} if work is not None else set()
    if not askers:
        return False
    return any(c not in askers and client.fg == "requires_action" for c, client in enumerate(w.clients))


def fresh_id_after_restart(w: World) -> bool:
    """After an agent restart a new prompt is accepted under an ID never given before (P5)."""
    if w.budget.restarts != 0:
        return False
    accepted = [(c, sub) for c, _, sub in _subs_of(w) if sub.status == "accepted"]
    after = [sub.mid for c, sub in accepted if sub.epoch >= 1]
    before = [sub.mid for c, sub in accepted if sub.epoch == 0]
    return bool(after) and bool(before) and not set(after) & set(before)


def abort_failure_reported_cancelled(w: World) -> bool:
    """Aborting cancelled work raised an error, and the work still ended cancelled (C9)."""
    return w.budget.failures == 0 and w.agent.last_stop == "cancelled" and w.budget.cancels == 0 and any(
        c.last_stop == "cancelled" for c in w.clients)


def output_follows_report(w: World) -> bool:
    """A client that did not submit shows a user message, then the agent output it led to (P1)."""
    for c, client in enumerate(w.clients):
        shown = [item.mid for item in client.feed if item.mid is not None and not item.provisional]
        for e in w.agent.history:
            if e.sub is not None and e.sub[0] != c and e.mid in shown:
                after = shown[shown.index(e.mid) + 1:]
                if any(x.startswith("a") for x in after):
                    return True
    return False


def _w(fn, *rules):
    return (fn.__name__, fn, rules, (fn.__doc__ or "").strip())


WITNESSES = {
    w[0]: w
    for w in (
        _w(echo_before_response, "U2"),
        _w(response_before_echo, "U2"),
        _w(pending_with_id_minted, "P1", "P3"),
        _w(identical_prompts_distinct_ids, "P5"),
        _w(both_accepted_identical, "P5", "U2"),
        _w(two_clients_submitted, "P9"),
        _w(other_client_renders, "P9", "U1"),
        _w(replayed_and_recognized, "R5", "R12"),
        _w(imported_rendered, "U14"),
        _w(streamed_user_message, "U7", "U13"),
        _w(command_live_not_replayed, "P10", "R4"),
        _w(retained_command_replayed, "R9"),
        _w(ambiguous_submission, "R11"),
        _w(ambiguous_but_inserted, "R11", "P12"),
        _w(retry_created_second_message, "P12"),
        _w(failed_before_response, "E2"),
        _w(error_idle_seen, "E3"),
        _w(rejected_before_insertion, "E1"),
        _w(resumed_after_failure, "E13"),
        _w(cancelled_before_insertion, "C1", "C4"),
        _w(cancel_request_after_insertion, "C1"),
        _w(work_cancelled, "C7"),
        _w(replay_while_running, "R3"),
        _w(permission_pending, "S8"),
        _w(restart_kept_retained, "R5"),
        _w(id_assigned_before_insertion, "P1", "P3", "P7"),
        _w(assigned_id_withdrawn, "P5", "P16"),
        _w(inserted_while_busy, "S1", "S3"),
        _w(agent_initiated_work, "S17"),
        _w(running_before_insertion, "S4"),
        _w(hook_outlives_rejection, "S4", "E11"),
        _w(forgotten_not_replayed, "R4", "R1"),
        _w(notice_in_flight, "N5"),
        _w(background_reports_while_idle, "S11", "G1"),
        _w(close_answered_after_cancelled_idle, "C14", "G6"),
        _w(two_permissions_outstanding, "S8"),
        _w(native_id_accepted, "P8", "P4"),
        _w(late_joiner_loaded, "R1", "R5"),
        _w(load_reset_before_chunks, "R7", "R13"),
        _w(later_message_replayed_after_trim, "R4", "R5"),
        _w(chunked_live_replayed_full, "U13", "R7"),
        _w(full_live_replayed_chunked, "U13", "R7"),
        _w(native_and_adapter_ids, "P5", "P8"),
        _w(second_permission_answered_first, "S9"),
        _w(cancel_with_two_permissions_pending, "C11"),
        _w(held_prompt_withdrawn_by_close, "C14", "C4"),
        _w(background_ended_by_snapshot, "G1", "G4"),
        _w(background_finished_during_turn, "G7", "S11"),
        _w(late_joiner_replayed, "R1", "R5"),
        _w(late_joiner_without_replay, "S13"),
        _w(imported_while_busy, "U14", "S6"),
        _w(command_while_busy, "P10", "P11"),
        _w(retry_made_second_message, "P12"),
        _w(live_inside_replay_window, "R3", "S13"),
        _w(custom_stop_reason_seen, "S5", "W6"),
        _w(refusal_seen, "S5"),
        _w(hook_withdrawn_by_cancel_request, "C1", "C7", "P16", "S4"),
        _w(hook_cancelled_by_session_cancel, "C4", "C7", "S4"),
        _w(requires_action_after_reconnect, "S9", "S13"),
        _w(requires_action_seen_by_other, "S8"),
        _w(fresh_id_after_restart, "P5"),
        _w(abort_failure_reported_cancelled, "C9"),
        _w(output_follows_report, "P1", "U1"),
    )
}
