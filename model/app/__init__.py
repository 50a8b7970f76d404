"""The application: the ``acplab`` command line and what wires the drivers together.

The only layer that imports :mod:`acplab.simulations`; everything it runs
lives in the layers below (engine, wire, acp, trace, render).
"""
