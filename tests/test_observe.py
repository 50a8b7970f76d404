"""The monitor protocol: frozen books are canonical, stamps stay out of the explored state, dispatch is by key."""

from hypothesis import given, strategies as st

from acplab.model.acp.rule_monitor import (NO_STAMP, Conn, Monitor, Obs, Switches, freeze, frozen_initial, new_book,
                                           obligation, rename_conns, settle, thaw, violation)
from acplab.model.acp.wire_reading import Dispatch, Frontend, classify

FIELDS = {"table": dict, "seen": set, "flag": False}


@given(st.lists(st.tuples(st.text(max_size=3), st.integers(0, 5)), max_size=8))
def test_frozen_books_are_canonical_whatever_the_order(items):
    a, b = new_book(FIELDS), new_book(FIELDS)
    for k, v in items:
        a.table[k] = v
        a.seen.add(k)
    for k, v in reversed(items):
        b.seen.add(k)
    for k, v in items:
        b.table[k] = v
    assert freeze(FIELDS, a) == freeze(FIELDS, b) and hash(freeze(FIELDS, a)) == hash(freeze(FIELDS, b))
    again = thaw(FIELDS, freeze(FIELDS, a))
    assert again.table == a.table and again.seen == a.seen and again.flag is False


def test_rename_conns_reaches_every_connection_in_a_book():
    frozen = (frozenset({((Conn(0, 1), "s1"), ("x", Conn(1, 0)))}), frozenset({Conn(1, 2)}), 7)
    renamed = rename_conns(frozen, {0: 1, 1: 0})
    assert renamed == (frozenset({((Conn(1, 1), "s1"), ("x", Conn(0, 0)))}), frozenset({Conn(0, 2)}), 7)
    assert rename_conns((0, 1), {0: 1, 1: 0}) == (0, 1)  # a plain pair is not a connection
    from acplab.model.acp.rules.insertion import Pending

    kept = rename_conns((Pending("s1", ("hi",), Conn(0, 1)),), {0: 1, 1: 0})[0]
    assert type(kept) is Pending and kept.stamp == Conn(1, 1)  # a named tuple keeps its type


def test_a_lazily_thawed_book_refreezes_to_what_thaw_and_freeze_give():
    from acplab.model.acp.rule_monitor import refreeze, thaw_lazily

    a = new_book(FIELDS)
    a.table["k"] = 1
    a.seen.add(2)
    frozen = freeze(FIELDS, a)
    untouched = thaw_lazily(FIELDS, frozen)
    assert refreeze(FIELDS, untouched) == frozen and refreeze(FIELDS, untouched)[0] is frozen[0]
    lazy = thaw_lazily(FIELDS, frozen)
    lazy.seen.add(3)
    lazy.flag = True
    eager = thaw(FIELDS, frozen)
    eager.seen.add(3)
    eager.flag = True
    assert refreeze(FIELDS, lazy) == freeze(FIELDS, eager) and lazy.table == {"k": 1}


def test_no_stamp_never_reaches_a_finding():
    f = violation(("P5",), "x", NO_STAMP, 7, None)
    assert f.stamps == (7,)
    late = obligation(("U1",), "y", 3)
    assert settle(late, complete=False).level == "warning" and settle(late, complete=True).level == "violation"


class _Always(Monitor):
    name, keys, fields = "Always", ("upd:state_update",), {}


class _Armed(Monitor):
    name, keys, armed, fields = "Armed", ("req:session/prompt",), {"upd": ("pending",)}, {"pending": dict}


def test_dispatch_by_keys_and_armed_fields():
    d = Dispatch([_Always(), _Armed()])
    o = classify(Obs("msg", "c1", "agent->client", 3, {"jsonrpc": "2.0", "method": "session/update", "params": {
        "sessionId": "s", "update": {"sessionUpdate": "state_update", "state": "running"}}}))
    always, armed = d.targets(o.keys, "v2")
    assert (always, armed) == ([0], [(1, 0)])  # monitor 1 through its arm 0
    book = new_book(_Armed.fields)
    assert not d.live(0, book)
    book.pending["x"] = 1
    assert d.live(0, book) and d.live_frozen(0, freeze(_Armed.fields, book))
    assert frozen_initial(_Armed.fields) == (frozenset(),)


def test_front_end_pairs_responses_and_tracks_the_foreground():
    fe = Frontend(Switches())
    b = new_book(fe.fields)

    def feed(d, msg):
        return fe.feed(b, classify(Obs("msg", "c1", d, None, msg)))

    feed("client->agent", {"jsonrpc": "2.0", "id": 2, "method": "session/prompt", "params": {"sessionId": "s"}})
    running = feed("agent->client", {"jsonrpc": "2.0", "method": "session/update", "params": {
        "sessionId": "s", "update": {"sessionUpdate": "state_update", "state": "running"}}})
    answer = feed("agent->client", {"jsonrpc": "2.0", "id": 2, "result": {"messageId": "m"}})
    idle = feed("agent->client", {"jsonrpc": "2.0", "method": "session/update", "params": {
        "sessionId": "s", "update": {"sessionUpdate": "state_update", "state": "idle"}}})
    assert running.fg is None and not running.ending
    assert answer.answers == "session/prompt" and answer.sid == "s" and "res:session/prompt:ok" in answer.keys
    assert idle.ending and "stop:none" in idle.keys and b.fg[("c1", "s")][0] == "idle"
