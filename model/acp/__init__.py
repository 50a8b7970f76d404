"""The ACP v2 prompt-lifecycle model: one pure transition system and its rule monitors.

Actors are pure step functions on small immutable state: the agent (an
adapter in front of a runtime, :mod:`.agent`), the clients (:mod:`.client`)
and the network (:mod:`.network`), composed by :class:`.model.AcpModel`.
Variants are data (:mod:`.spec`, and TOML files read by :mod:`.specfile`);
properties are monitors over the events of each step: the RFD's rules
(:mod:`.rules`), what clients show (:mod:`.monitors`) and design-neutral goals
(:mod:`.goals`); :mod:`.scenarios`
and :mod:`.witnesses` name the bounds and the states a run must reach;
:mod:`.bridges` and :mod:`.bridges_v2` model the v1 <-> v2 bridges
(:mod:`.bridge_goals` judges the goals on them).  The rule monitors that judge what an
observer of the wire sees (:mod:`.rules`, on the protocol of :mod:`.rule_monitor`
and the front end of :mod:`.wire_reading`) run on recorded traffic and, through
:mod:`.rules_in_model`, in the explorer and the simulator.
"""
