"""What the goals share: how a submission is named, which clients are judged, what a client knows.

Kept apart from :mod:`.goals` and :mod:`.goals_knowledge` so both read one
copy.  Every helper is a pure function of the world (and a goal's own
bookkeeping) and says nothing of *how* a design reaches an outcome.
"""

from __future__ import annotations

from .state import World


def token(c: int, sub, world: World) -> tuple[int, int, int]:
    """The submission as the agent knows it: a proxy may have rewritten the request id (P19)."""
    return (c, sub.epoch, sub.rid + world.links[c].proxy)


def judged(client) -> bool:
    """A connected client that lost nothing (a drop makes its view ``partial``)."""
    return client.up and client.view in ("live", "replayed", "resumed")


def who(sub, world: World | None = None) -> str:
    """A submission the agent knows, in the client's words (its own request id, before any proxy)."""
    if sub is None:
        return "an imported message"
    proxy = world.links[sub[0]].proxy if world is not None else 0
    return f"c{sub[0] + 1}'s prompt #{sub[2] - proxy}"


def insertion_known(c: int, sub, mid) -> str | None:
    """What client ``c`` gets wrong or cannot tell about one submission (``mid``: where it was inserted)."""
    what = f"client c{c + 1}"
    truth = f"it was inserted as {mid}" if mid else "it was not inserted"
    if sub.status in ("pending", "sent", "received", "failed"):
        return f"{what} cannot tell whether its prompt #{sub.rid} was inserted ({truth})"
    if sub.status in ("accepted", "done") and mid is None:
        return f"{what} believes its prompt #{sub.rid} was inserted, but {truth}"
    if sub.status in ("rejected", "cancelled") and mid is not None:
        return f"{what} believes its prompt #{sub.rid} was not inserted, but {truth}"
    return None


def ending_known(c: int, client, ending) -> str | None:
    """What client ``c`` gets wrong about how the last work ended (``ending``: (reason, error, mids)).

    One granularity on every model: the stop reason and, for a failure, the
    error object's code and message (what a user acts on).  A client that saw
    the work live must know both; one that resumed must know a failure (a
    resumed client may take a plain idle for a normal end, S14).
    """
    reason, error = ending[0], ending[1]
    if client.view != "live" and reason != "error":
        return None
    if client.last_stop != reason:
        believed = "nothing (no stop reason reached it)" if client.last_stop is None else repr(client.last_stop)
        return f"the work ended {reason!r} but c{c + 1} believes {believed}"
    if reason == "error" and tuple(client.last_error) != tuple(error):
        return f"the work failed with {_error_text(error)} but c{c + 1} learned {_error_text(client.last_error)}"
    return None


def _error_text(error) -> str:
    return f"error {error[0]} {error[1]!r}" if error else "no error object"
