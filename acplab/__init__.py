"""acplab: a formal model, explorer, simulator and trace checker for the ACP v2 prompt lifecycle.

The code lives in :mod:`acplab.model` and :mod:`acplab.simulations` (the repository's
``model/`` and ``simulations/`` folders, mapped by ``package-dir``); this package only
holds ``python -m acplab`` and the ``py.typed`` marker.
"""
