"""What each side advertised, as the observer's front end reads it: the agent's prompt content types (P15) and the
custom states a client lists (S15)."""

from __future__ import annotations


def _prompt_caps(result) -> frozenset:
    """Content types the agent advertised in its initialize result (v2 and v1 shapes)."""
    caps = result.get("capabilities")
    prompt = None
    if isinstance(caps, dict):
        session = caps.get("session")
        prompt = session.get("prompt") if isinstance(session, dict) else None
    if prompt is None:
        agent_caps = result.get("agentCapabilities")
        prompt = agent_caps.get("promptCapabilities") if isinstance(agent_caps, dict) else None
    if not isinstance(prompt, dict):
        return frozenset()
    return frozenset(k for k in ("image", "audio", "embeddedContext") if prompt.get(k) not in (None, False))


#: prompt content types and the capability each needs (text and resource_link are baseline, P15)
CONTENT_CAPS = {"text": None, "resource_link": None, "image": "image", "audio": "audio", "resource": "embeddedContext"}


def _unadvertised(blocks, caps: frozenset) -> frozenset:
    """The block types of a prompt the agent did not advertise (unknown types included)."""
    if not isinstance(blocks, list):
        return frozenset()
    out = set()
    for block in blocks:
        kind = block.get("type") if isinstance(block, dict) else None
        if not isinstance(kind, str):
            continue
        if kind not in CONTENT_CAPS or (CONTENT_CAPS[kind] is not None and CONTENT_CAPS[kind] not in caps):
            out.add(kind)
    return frozenset(out)


def advertised_states(params, key: str) -> frozenset:
    """The custom states a client lists under ``_meta[key]`` of its initialize params or capabilities (S15).

    ACP defines no capability for custom states; ``key`` names the
    implementation's own ``_meta`` entry (``--allowed-states KEY``).  Looked up
    in ``params._meta``, ``clientCapabilities._meta`` and
    ``clientCapabilities.session._meta``; a list of strings.
    """
    places = [params]
    caps = params.get("clientCapabilities") if isinstance(params, dict) else None
    if isinstance(caps, dict):
        places += [caps, caps.get("session")]
    found = set()
    for place in places:
        meta = place.get("_meta") if isinstance(place, dict) else None
        value = meta.get(key) if isinstance(meta, dict) else None
        if isinstance(value, list):
            found.update(x for x in value if isinstance(x, str))
    return frozenset(found)
