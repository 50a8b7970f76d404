"""Metrics of simulated runs: what one run observes, and the aggregate over runs.

Definitions (times in simulated milliseconds; a *submission* is one
``session/prompt`` a client sent, first tries and retries alike; its token is
``(client, epoch, rid)``, the same triple the agent stores in
``Entry.sub``):

* ``response_ms``: submit -> the success response delivered to the submitter
  on the connection it was sent on (v2: the ``messageId`` result at
  insertion; v1: the ``stopReason`` result at the end of the turn).
* ``user_message_ms``: submit -> the first live ``user_message`` /
  ``user_message_chunk`` of the message it inserted, delivered to the submitter
  on that same connection (the v2 insertion receipt).
* ``work_end_ms``: submit -> the idle ``state_update`` that ended the work the
  message started, delivered to the submitter on that same connection (what a
  v1 end-of-turn response would have waited for; in v1 it is that response).
* ``ambiguous_rate``: per submission, 1 if the client never learned its
  outcome: cut while pending (status ``ambiguous``) or still pending when the
  run ended at rest (its prompt or its response was dropped).  Submissions
  still in progress when a run hit ``duration_s`` are left out.
* ``duplicate_rate``: per retry, 1 if the submission it repeats had in fact
  been inserted (ground truth: ``world.agent.history[*].sub``).
  ``duplicates_per_prompt``: such retries per submission.
* ``misattributed_<how>``: per submission, 1 if a client correlating by
  ``content`` / ``order`` would have bound it to another submission's message.
  These two are **counterfactuals** ("if clients matched by content"): what
  clients correlating another way would have done, never a failure of the spec.
  Computed by shadow clients fed the real deliveries (the client code's
  ``_guess`` rule: an unknown ``user_message`` binds to the first pending or
  ambiguous submission, with equal content for ``content``); ``message_id``
  counts the real clients' ``Bind`` events whose message is not the
  submission's (0 unless a spec breaks P4/P9).
* ``replay_divergent_items``: per run, at the end, the feed items of clients
  whose view was rebuilt by replay (view ``replayed``) whose content differs
  from the agent's history entry (e.g. blocks duplicated by a replay without
  the ``content []`` reset).
* ``wire_messages_per_prompt`` / ``wire_bytes_per_prompt``: per run, every
  ``Send`` put on a live connection (not ``lost``; later drops and cuts still
  count: the bytes were sent) divided by the run's submissions; bytes are
  ``len(json.dumps(wire.encode(msg)))``.

Each metric is a *proportion* (samples 0 or 1) or a *mean*; :mod:`.stats`
gives each kind its interval.  A metric that means nothing for a spec is
``n/a`` with the reason (:func:`not_applicable`): a spec with no live report
of the user message (v1) has no receipt time and nothing to misattribute.
"""

from __future__ import annotations

import json
from typing import NamedTuple

from acplab.model import wire

LATENCIES = ("response_ms", "user_message_ms", "work_end_ms")
STRATEGIES = ("content", "order")

class Metric(NamedTuple):
    """What a metric is, for every reader: the sample's unit and kind (:mod:`.stats`), a short label,
    what it means and in which unit, the question it answers, and whether it is a counterfactual (what
    clients that correlate another way *would* have done, measured by shadow clients: not a failure
    of the spec being simulated)."""

    unit: str
    kind: str
    description: str
    meaning: str
    measured_in: str
    question: str
    counterfactual: bool = False


_IF = "counterfactual: if clients matched by {how} (shadow clients fed the real deliveries)"

#: every metric, in table order
METRICS: dict[str, Metric] = {
    "response_ms": Metric("submission", "mean", "submit -> prompt response (ms)",
                          "time from sending session/prompt to its success response on the same connection",
                          "simulated ms", "How long does a client wait for its prompt to be answered?"),
    "user_message_ms": Metric("submission", "mean", "submit -> own user_message received (ms)",
                              "time from sending session/prompt to the live user_message of the message it inserted",
                              "simulated ms", "How soon does a client see its own message in the feed?"),
    "work_end_ms": Metric("submission", "mean", "submit -> idle ending its work received (ms, v1 response)",
                          "time from sending session/prompt to the idle state_update ending the work it started",
                          "simulated ms", "How long until the turn is over (what a v1 response waited for)?"),
    "ambiguous_rate": Metric("submission", "proportion", "outcome never learned (fraction)",
                             "share of submissions whose client never learned whether they were inserted",
                             "fraction of submissions", "How often is a client left not knowing what happened?"),
    "duplicate_rate": Metric("retry", "proportion", "retry of an inserted submission (fraction)",
                             "share of retries that repeated a submission the agent had in fact inserted",
                             "fraction of retries", "When a client retries, how often does it duplicate a message?"),
    "duplicates_per_prompt": Metric("submission", "proportion", "duplicate retries per submission",
                                    "duplicate retries divided by all submissions", "per submission",
                                    "How many duplicate messages does retrying add per prompt?"),
    "misattributed_message_id": Metric("submission", "proportion", "wrong binding, messageId correlation (fraction)",
                                       "share of submissions the real clients (correlating by messageId) bound to "
                                       "another submission's message", "fraction of submissions",
                                       "Does correlating by the returned messageId ever bind the wrong message?"),
    "misattributed_content": Metric("submission", "proportion",
                                    "wrong binding if clients matched by content (counterfactual)",
                                    "share of submissions a client matching user_message by content would have bound "
                                    "to another submission's message; " + _IF.format(how="content"),
                                    "fraction of submissions",
                                    "What would go wrong if clients matched messages by their content?", True),
    "misattributed_order": Metric("submission", "proportion",
                                  "wrong binding if clients matched by arrival order (counterfactual)",
                                  "share of submissions a client matching user_message by arrival order would have "
                                  "bound to another submission's message; " + _IF.format(how="arrival order"),
                                  "fraction of submissions",
                                  "What would go wrong if clients matched messages by arrival order?", True),
    "replay_divergent_items": Metric("run", "mean", "replayed feed items unlike the agent's (count)",
                                     "feed items, rebuilt by replay, whose content differs from the agent's history",
                                     "items per run", "Does a replayed view match the agent's history?"),
    "wire_messages_per_prompt": Metric("run", "mean", "messages sent per submission",
                                       "JSON-RPC messages put on live connections, divided by the run's submissions",
                                       "messages per submission", "How chatty is the protocol per prompt?"),
    "wire_bytes_per_prompt": Metric("run", "mean", "JSON bytes sent per submission",
                                    "JSON bytes of those messages, divided by the run's submissions",
                                    "bytes per submission", "How many bytes does a prompt cost on the wire?"),
}


def explanation(name: str) -> dict:
    """The fields ``--json`` carries for metric ``name`` beside its numbers."""
    m = METRICS[name]
    return {"unit": m.unit, "kind": m.kind, "description": m.description, "meaning": m.meaning,
            "measured_in": m.measured_in, "question": m.question, "counterfactual": m.counterfactual}


def not_applicable(spec) -> dict[str, str]:
    """Metrics that mean nothing for ``spec``, each with the reason."""
    out = {}
    if not spec.echo:
        why = "the spec does not report the user message live, so there is no receipt"
        out["user_message_ms"] = why
        out.update({f"misattributed_{how}": why + " to misattribute" for how in ("message_id", *STRATEGIES)})
    reasons = dict(spec.not_applicable)
    if "ViewMatchesHistory" in reasons or "*" in reasons:
        out["replay_divergent_items"] = reasons.get("ViewMatchesHistory", reasons.get("*"))
    return out


class _Shadow:
    """A client that correlates by content or by order, fed the real client's deliveries."""

    __slots__ = ("how", "subs", "seen")

    def __init__(self, how: str) -> None:
        self.how = how
        self.subs: list[list] = []  # [token, content, status, mid]
        self.seen: set = set()

    def submit(self, token, content) -> None:
        self.subs.append([token, content, "pending", None])

    def response(self, token, mid) -> None:
        for s in self.subs:
            if s[0] == token and s[2] == "pending":
                s[2], s[3] = "accepted", mid
                if mid is not None:
                    self.seen.add(mid)
                return

    def error(self, token) -> None:
        for s in self.subs:
            if s[0] == token and s[2] == "pending":
                s[2] = "rejected"
                return

    def cut(self) -> None:
        for s in self.subs:
            if s[2] == "pending":
                s[2] = "ambiguous"

    def report(self, mid, content) -> None:
        if mid in self.seen:
            return
        self.seen.add(mid)
        for s in self.subs:
            if s[2] not in ("pending", "ambiguous"):
                continue
            if self.how == "content" and s[1] != content:
                continue
            s[2], s[3] = "guessed", mid
            return


class RunMetrics:
    """Everything one run observes, fed by the runtime after every applied step."""

    def __init__(self, clients: int) -> None:
        self.subs: dict = {}  # token -> submit time (s)
        self.order: list = []  # tokens in submit order
        self.content: dict = {}
        self.retries: list = []  # (original token, retry token)
        self.truth: dict = {}  # mid -> token that inserted it
        self.inserted: dict = {}  # token -> mid
        self.t_response: dict = {}
        self.t_user: dict = {}
        self.t_end: dict = {}
        self.wire_messages = 0
        self.wire_bytes = 0
        self.real_misbinds: set = set()
        self.replays = 0
        self.shadows = [{how: _Shadow(how) for how in STRATEGIES} for _ in range(clients)]
        self._sizes: dict = {}
        self.windows: dict[str, int] = {}  # window label -> times it opened (simulations.coverage)
        # set by finish()
        self.final = None
        self.at_rest = False

    # -- feeding --------------------------------------------------------------

    def size(self, msg) -> int:
        try:
            return self._sizes[msg]
        except KeyError:
            n = len(json.dumps(wire.encode(msg)))
            self._sizes[msg] = n
            return n
        except TypeError:  # unhashable: no cache
            return len(json.dumps(wire.encode(msg)))

    def observe(self, now: float, action, events) -> None:
        if action.actor == "client" and action.name == "reconnect" and action.args[1]:
            self.replays += 1
        for e in events:
            k = e.kind
            if k == "send":
                if e.lost:
                    continue
                self.wire_messages += 1
                self.wire_bytes += self.size(e.msg)
                if e.msg.kind == "prompt" and action.name == "submit":
                    c = e.conn[0]
                    token = (c, e.conn[1], e.msg.rid)
                    self.subs[token] = now
                    self.order.append(token)
                    self.content[token] = tuple(e.msg.content)
                    for sh in self.shadows[c].values():
                        sh.submit(token, tuple(e.msg.content))
            elif k == "insert":
                if e.sub is not None:
                    self.truth[e.mid] = e.sub
                    self.inserted.setdefault(e.sub, e.mid)
            elif k == "deliver":
                if e.dir == "agent->client":
                    self._delivered(now, e.conn, e.msg)
            elif k == "cut":
                for sh in self.shadows[e.conn[0]].values():
                    sh.cut()
            elif k == "bind":
                if self.truth.get(e.mid) != e.sub:
                    self.real_misbinds.add(e.sub)

    def _delivered(self, now, conn, msg) -> None:
        c, epoch = conn
        kind = msg.kind
        if kind in ("prompt_result", "prompt_result_v1"):
            token = (c, epoch, msg.rid)
            if token in self.subs and token not in self.t_response:
                self.t_response[token] = now
            if kind == "prompt_result_v1" and token in self.subs and token not in self.t_end:
                self.t_end[token] = now  # v1: the response is the end of the turn
            for sh in self.shadows[c].values():
                sh.response(token, getattr(msg, "message_id", None))
        elif kind == "error_response":
            for sh in self.shadows[c].values():
                sh.error((c, epoch, msg.rid))
        elif kind == "update":
            u = msg.update
            if u.kind not in ("user_message", "user_message_chunk"):
                if u.kind in ("agent_message", "agent_message_chunk"):
                    for sh in self.shadows[c].values():
                        sh.seen.add(u.message_id)
                return
            mid = u.message_id
            token = self.truth.get(mid)
            if token is not None and token[0] == c and token[1] == epoch and token not in self.t_user:
                self.t_user[token] = now
            if u.kind == "user_message_chunk":
                content = (u.block,)
            else:
                content = tuple(u.content) if isinstance(u.content, tuple) else ()
            for sh in self.shadows[c].values():
                sh.report(mid, content)

    def idle_delivered(self, now: float, conn, mids) -> None:
        """The idle that ended the work of ``mids`` reached connection ``conn``."""
        c, epoch = conn
        for mid in mids:
            token = self.truth.get(mid)
            if token is not None and token[0] == c and token[1] == epoch and token not in self.t_end:
                self.t_end[token] = now

    def opened(self, labels) -> None:
        """The step opened these fault windows (see :mod:`.fault_windows`)."""
        for label in labels:
            self.windows[label] = self.windows.get(label, 0) + 1

    def retry(self, original, again) -> None:
        self.retries.append((original, again))

    def finish(self, world, at_rest: bool) -> None:
        self.final = world
        self.at_rest = at_rest

    # -- results --------------------------------------------------------------

    def samples(self) -> dict[str, list[float]]:
        """Per-metric samples of this run (see the module docstring for the units)."""
        w = self.final
        out: dict[str, list[float]] = {name: [] for name in METRICS}
        for name, table in (("response_ms", self.t_response), ("user_message_ms", self.t_user), ("work_end_ms", self.t_end)):
            out[name] = [(table[t] - self.subs[t]) * 1000.0 for t in self.order if t in table]
        status = {}
        for c, client in enumerate(w.clients):
            for s in client.subs:
                status[(c, s.epoch, s.rid)] = s.status
        for t in self.order:
            st = status.get(t, "pending")
            if st == "ambiguous" or (st == "pending" and self.at_rest):
                out["ambiguous_rate"].append(1.0)
            elif st != "pending":
                out["ambiguous_rate"].append(0.0)
        dups = [1.0 if orig in self.inserted else 0.0 for orig, _ in self.retries]
        out["duplicate_rate"] = dups
        n = len(self.order)
        if n:
            d = sum(dups)
            out["duplicates_per_prompt"] = [1.0] * int(d) + [0.0] * (n - int(d))
        guessed = {how: set() for how in STRATEGIES}
        for c, shadows in enumerate(self.shadows):
            for how, sh in shadows.items():
                for token, _content, st, mid in sh.subs:
                    if st == "guessed" and self.truth.get(mid) != token:
                        guessed[how].add(token)
        for t in self.order:
            out["misattributed_message_id"].append(1.0 if t in self.real_misbinds else 0.0)
            for how in STRATEGIES:
                out[f"misattributed_{how}"].append(1.0 if t in guessed[how] else 0.0)
        history = {e.mid: e for e in w.agent.history}
        divergent = 0
        for client in w.clients:
            if not client.up or client.view != "replayed":
                continue
            for item in client.feed:
                entry = history.get(item.mid)
                if entry is not None and entry.retained and tuple(item.content) != tuple(entry.content):
                    divergent += 1
        out["replay_divergent_items"] = [float(divergent)]
        if n:
            out["wire_messages_per_prompt"] = [self.wire_messages / n]
            out["wire_bytes_per_prompt"] = [self.wire_bytes / n]
        return out

    def counts(self) -> dict[str, int]:
        return {
            "submissions": len(self.order),
            "retries": len(self.retries),
            "inserted": len(self.inserted),
            "replays": self.replays,
            "wire_messages": self.wire_messages,
            "wire_bytes": self.wire_bytes,
        }
