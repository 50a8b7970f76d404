"""Rendering: behaviours and graphs as text traces, wire logs, Mermaid, matplotlib figures and HTML.

:mod:`.labels` is the one place that turns messages and events into words, and
:mod:`.statediff` the one place that turns states into ``path: value`` lines and
diffs; :mod:`.traces` writes step traces and state-diff traces; :mod:`.mermaid`
(with the one Mermaid escaper), :mod:`.seqdiagram` and :mod:`.stategraph`
draw; :mod:`.bridgeview` tells the bridge models' runs the same way;
:mod:`.style` gives every matplotlib figure one look; :mod:`.artefacts` writes
the files of a run; :mod:`.runview` and :mod:`.html` make the self-contained
``--html`` report.
"""
