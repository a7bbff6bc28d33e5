"""Which Kafka client errors a retry can help, for :func:`gobblin_py.sdk.failures.classify` (registered as an entry
point of group ``gobblin_py.failures``).

librdkafka's error codes: a broker or partition leader that is not available comes back; a missing topic, a
denied right or a bad argument does not. A record that cannot be (de)serialized fails the same way every time.
Errors are recognised by their types' module and the methods of the error they carry: nothing is imported.
"""

from __future__ import annotations

from typing import Any

from gobblin_py.sdk.failures import PERMANENT, TRANSIENT, Failure, module_of, type_names

_KAFKA_TRANSIENT = {-195, -187, -185, -192, -193, -180, -182, 5, 6, 7, 8, 13, 14, 15, 16, 19, 20, 56, 89}
_KAFKA_PERMANENT = {-188, -190, -186, -169, -181, -199, 3, 29, 30, 31, 58, 2, 10, 87}
_SERIALIZATION = {"SerializationError", "KeyDeserializationError", "ValueDeserializationError"}


def classify_kafka_error(exc: BaseException) -> Failure | None:
    """The kind of an error of confluent-kafka (its C types live in module ``cimpl``), or None for another's."""
    if module_of(exc).split(".")[0] not in ("confluent_kafka", "cimpl"):
        return None
    if type_names(exc) & _SERIALIZATION:
        return Failure(PERMANENT, "Kafka record cannot be (de)serialized")
    error: Any = exc.args[0] if exc.args else None
    code = getattr(error, "code", None)
    if not callable(code) or not callable(getattr(error, "retriable", None)):
        return None
    name = f"Kafka {error.name()}" if callable(getattr(error, "name", None)) else "Kafka error"
    if error.retriable() or code() in _KAFKA_TRANSIENT:
        return Failure(TRANSIENT, f"{name} (retriable)")
    if code() in _KAFKA_PERMANENT or (callable(getattr(error, "fatal", None)) and error.fatal()):
        return Failure(PERMANENT, name)
    return None
