"""The extension point: a spec file names a small Python class the model loads, so a designer can write a
mechanism acplab does not have (an agent hook, a client strategy, or both) without editing acplab.

.. code-block:: toml

    name = "dedup-by-prompt-id"
    base = "client-correlation-token"
    extension = "dedup_by_prompt_id.py:DedupByPromptId"   # FILE:Class, FILE relative to the spec file

The class is built with no arguments and must meet at least one of the two
protocols below (checked when the spec file loads: a missing file or class,
an import that fails, or a class with neither method is one line and exit 2):

* :class:`AgentHook`: ``on_prompt(prompt: PromptSeen)`` is asked when a
  ``session/prompt`` reaches the agent, before the spec's own handling; it
  returns None (go on as the spec says), :class:`Answer` (succeed with the ID
  of a message already in history, insert nothing) or :class:`Reject` (a
  JSON-RPC error: not inserted, E1);
* :class:`ClientStrategy`: ``retry_prompt_id(original, fresh)`` gives the
  client-side identifier a retry after a timeout sends (``original``: the
  identifier of the submission it retries, ``fresh``: the one it would send
  otherwise; None where the design has none).

**Trust model: loading a spec file that names an extension runs that file's
Python code** in acplab's process and in every worker, with your
permissions, as ``python FILE`` would.  Load only files you would run.

The model calls a hook with plain immutable values and keeps nothing of the
object between calls: a hook must be a pure function of its arguments (the
explorer replays and merges states, so any memory of its own would be wrong).
"""

from __future__ import annotations

import importlib.util
import sys
from functools import lru_cache
from pathlib import Path
from typing import NamedTuple, Protocol, runtime_checkable

from acplab.model.errors import InputError


class HistoryMessage(NamedTuple):
    """A user message in the agent's history, as a hook sees it."""

    mid: str
    prompt_id: str | None  # the client-side identifier it was submitted with, if the design has one
    content: tuple[str, ...]
    client: int | None = None  # the client whose submission inserted it (None: imported)


class PromptSeen(NamedTuple):
    """A ``session/prompt`` as it reaches the agent, with the user messages already in history."""

    client: int
    rid: int
    prompt_id: str | None
    content: tuple[str, ...]
    history: tuple[HistoryMessage, ...]
    #: (client, client-side identifier) of the prompts the agent holds, received and not yet inserted
    held: tuple[tuple[int, str | None], ...] = ()


class Answer(NamedTuple):
    """Succeed with ``mid``, the ID of a message already in history; nothing is inserted."""

    mid: str


class Reject(NamedTuple):
    """Answer with a JSON-RPC error: the prompt is not inserted (E1)."""

    code: int
    message: str


@runtime_checkable
class AgentHook(Protocol):
    def on_prompt(self, prompt: PromptSeen) -> Answer | Reject | None: ...


@runtime_checkable
class ClientStrategy(Protocol):
    def retry_prompt_id(self, original: str | None, fresh: str | None) -> str | None: ...


def resolve(ref: str, spec_file: Path) -> str:
    """``FILE:Class`` with FILE made absolute (relative to the spec file); the class is loaded and checked."""
    where = f"spec file {spec_file}"
    if not isinstance(ref, str) or ref.count(":") != 1 or not all(ref.split(":")):
        raise InputError(f"{where}: extension must be \"FILE.py:ClassName\", got {ref!r}")
    file, cls = ref.split(":")
    path = (spec_file.parent / file).resolve()
    absolute = f"{path}:{cls}"
    try:
        _load(absolute)
    except InputError as err:
        raise InputError(f"{where}: {err}") from None
    return absolute


def hooks(ref: str) -> tuple[AgentHook | None, ClientStrategy | None]:
    """The agent hook and client strategy of a resolved reference ("" for none: the presets)."""
    if not ref:
        return None, None
    obj = _load(ref)
    return (obj if isinstance(obj, AgentHook) else None), (obj if isinstance(obj, ClientStrategy) else None)


def _load(ref: str):
    """The extension object of a resolved ``FILE:Class``, checked to meet a protocol."""
    obj = load_object(ref)
    cls = ref.rsplit(":", 1)[1]
    if not isinstance(obj, (AgentHook, ClientStrategy)):
        raise InputError(f"extension class {cls} meets neither protocol: it needs on_prompt(prompt) "
                         f"(AgentHook) or retry_prompt_id(original, fresh) (ClientStrategy); see acplab.model.acp.extension")
    return obj


@lru_cache(maxsize=None)
def load_object(ref: str):
    """What ``NAME()`` gives in the file of an absolute ``FILE:NAME`` (built once per process); a missing file
    or name, or a failing import or call, is one line (:class:`InputError`).  It runs the file's code."""
    file, cls = ref.rsplit(":", 1)
    path = Path(file)
    if not path.is_file():
        raise InputError(f"extension file {path} not found")
    name = f"acplab_extension_{abs(hash(str(path)))}"
    loader = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(loader)
    try:
        sys.modules[name] = module
        loader.loader.exec_module(module)
        obj = getattr(module, cls)()
    except AttributeError:
        raise InputError(f"extension file {path} has no class {cls}") from None
    except Exception as err:  # the user's code: any failure is bad input, said in one line
        raise InputError(f"loading extension {path}:{cls} failed: {type(err).__name__}: {err}") from None
    return obj


def agent_decision(agent, client: int, epoch: int, msg, spec, success):
    """The agent hook's decision on a prompt as ``(agent, events)``, or None to go on as the spec says
    (``success(rid, mid)``: the success response the spec defines)."""
    hook, _ = hooks(spec.extension)
    if hook is None:
        return None
    from acplab.model.wire import ErrorObject, ErrorResponse

    from . import events as ev
    from .agent_common import send

    history = tuple(HistoryMessage(e.mid, e.token, tuple(e.content), None if e.sub is None else e.sub[0])
                    for e in agent.history if e.role == "user")
    held = tuple((r.client, r.prompt_id) for r in agent.reqs if not r.inserted)
    decided = hook.on_prompt(PromptSeen(client, msg.rid, msg.prompt_id, tuple(msg.content), history, held))
    conn = (client, epoch)
    if decided is None:
        return None
    if isinstance(decided, Answer) and any(m.mid == decided.mid for m in history):
        return agent, [send(conn, success(msg.rid, decided.mid))]
    if isinstance(decided, Reject):
        error = ErrorObject(int(decided.code), str(decided.message))
        return agent, [ev.Reject((client, epoch, msg.rid), error.code), send(conn, ErrorResponse(msg.rid, error))]
    raise InputError(f"extension {spec.extension}: on_prompt returned {decided!r}; expected None, "
                     f"Answer(mid of a message in history) or Reject(code, message)")


def retry_prompt_id(spec, original: str | None, fresh: str | None) -> str | None:
    """The identifier a retry sends: the client strategy's choice, else ``fresh``."""
    _, strategy = hooks(spec.extension)
    return fresh if strategy is None else strategy.retry_prompt_id(original, fresh)
