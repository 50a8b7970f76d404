"""The ACP v2 prompt-lifecycle model: one pure transition system and its rule monitors.

Actors are pure step functions on small immutable state: the agent (an
adapter in front of a runtime, :mod:`.agent`), the clients (:mod:`.client`)
and the network (:mod:`.network`), composed by :class:`.model.AcpModel`.
Variants are data (:mod:`.spec`, and TOML files read by :mod:`.specfile`);
properties are monitors over the events of each step: the RFD's rules
(:mod:`.monitors`) and design-neutral goals (:mod:`.goals`); :mod:`.scenarios`
and :mod:`.witnesses` name the bounds and the states a run must reach;
:mod:`.bridges` and :mod:`.bridges_v2` model the v1 <-> v2 bridges
(:mod:`.bridge_goals` judges the goals on them).  The rule monitors that judge what an
observer of the wire sees (:mod:`.rules`, on the protocol of :mod:`.observe`
and the front end of :mod:`.observer`) run on recorded traffic and, through
:mod:`.adapter`, in the explorer and the simulator.
"""
