"""The wire layer: message values, the JSON-RPC codec and the capture format.

``from acplab.model import wire`` gives the values and ``encode`` / ``decode``;
:mod:`.capture` reads and writes recorded traffic.  Reading raw traffic
(classification, request pairing, dialect) is one front end above this layer,
:mod:`acplab.model.acp.wire_reading`, which decodes through this codec where a
typed message is wanted (:func:`~acplab.model.acp.wire_reading.message_of`).
"""

from .codec import decode, encode, is_notification, is_request, is_response, method_of, rid_of
from .values import *  # noqa: F403 - the value classes are this layer's vocabulary
from .values import __all__ as _values_all

__all__ = [*_values_all, "decode", "encode", "is_notification", "is_request", "is_response", "method_of", "rid_of"]
