"""Rendering: behaviours and graphs as text traces, wire logs, Mermaid and matplotlib figures.

:mod:`.labels` is the one place that turns messages and events into words;
:mod:`.traces` writes step traces and state-diff traces; :mod:`.mermaid`,
:mod:`.seqdiagram` and :mod:`.stategraph` draw; :mod:`.style` gives every
matplotlib figure one look; :mod:`.artefacts` writes the files of a run.
"""
