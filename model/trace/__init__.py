"""Recorded traffic: the transparent stdio recorder (:mod:`.record`) and the trace checker (:mod:`.check`).

The checker runs the model's wire-checkable monitors over a capture; it
knows nothing of rendering (the app layer draws and prints its results).
"""
