"""Which errors of the filesystems and file readers a retry can help, for
:func:`gobblin_py.sdk.failures.classify` (registered as an entry point of group ``gobblin_py.failures``).

S3 and other AWS services through boto (s3fs): error codes and HTTP status, then connection and credential errors
by type name; pyarrow's errors by type name, and the messages of its S3 and HDFS errors (plain OSErrors without an
errno). Recognised by module, type name and attributes: no library is imported.
"""

from __future__ import annotations

from typing import Any

from gobblin_py.sdk.failures import PERMANENT, TRANSIENT, Failure, by_message, module_of, type_names

_AWS_TRANSIENT_CODES = {"SlowDown", "Throttling", "ThrottlingException", "ThrottledException", "RequestLimitExceeded",
                        "TooManyRequestsException", "ProvisionedThroughputExceededException", "RequestTimeout",
                        "RequestTimeoutException", "InternalError", "InternalFailure", "ServiceUnavailable",
                        "ServiceUnavailableException", "PriorRequestNotComplete", "BandwidthLimitExceeded"}
_BOTO_TRANSIENT_TYPES = {"EndpointConnectionError", "ConnectTimeoutError", "ReadTimeoutError", "ConnectionClosedError",
                         "HTTPClientError", "ProxyConnectionError", "ResponseStreamingError"}
_BOTO_PERMANENT_TYPES = {"NoCredentialsError", "PartialCredentialsError", "NoRegionError", "ParamValidationError",
                         "UnknownServiceError", "InvalidRegionError", "ProfileNotFound"}
# pyarrow's errors (module pyarrow.lib) by name; its ArrowIOError is OSError, classified by errno and message
_ARROW_PERMANENT = {"ArrowInvalid", "ArrowTypeError", "ArrowNotImplementedError", "ArrowKeyError",
                    "ArrowIndexError", "ArrowSerializationError"}
#: the words of pyarrow's S3 errors and of a Parquet footer it cannot read
TRANSIENT_WORDS = ("NETWORK_CONNECTION", "SLOW_DOWN", "SERVICE_UNAVAILABLE", "THROTTLING", "INTERNAL_FAILURE",
                   "REQUEST_TIMEOUT")
PERMANENT_WORDS = ("ACCESS_DENIED", "NO_SUCH_BUCKET", "NO_SUCH_KEY", "RESOURCE_NOT_FOUND", "deserialize thrift")


def _aws(exc: BaseException, names: set[str]) -> Failure | None:
    response: Any = getattr(exc, "response", None)
    if isinstance(response, dict) and "ClientError" in names:
        code = str((response.get("Error") or {}).get("Code") or "")
        status = int((response.get("ResponseMetadata") or {}).get("HTTPStatusCode") or 0)
        if code in _AWS_TRANSIENT_CODES or status == 429 or status >= 500:
            return Failure(TRANSIENT, f"AWS {code or status}")
        if 400 <= status < 500 or code:
            return Failure(PERMANENT, f"AWS {code or status}")
        return None
    if names & _BOTO_TRANSIENT_TYPES:
        return Failure(TRANSIENT, "AWS connection")
    if names & _BOTO_PERMANENT_TYPES:
        return Failure(PERMANENT, "AWS configuration")
    return None


def classify_storage_error(exc: BaseException) -> Failure | None:
    """The kind of an error of boto (S3) or pyarrow, or None when it is neither's."""
    module, names = module_of(exc), type_names(exc)
    if module.startswith(("botocore", "boto3")):
        return _aws(exc, names)
    if module.startswith("pyarrow") and names & _ARROW_PERMANENT:
        return Failure(PERMANENT, sorted(names & _ARROW_PERMANENT)[0])
    if isinstance(exc, OSError) and exc.errno is None and not isinstance(exc, (ConnectionError, TimeoutError)):
        return by_message(exc, TRANSIENT_WORDS, PERMANENT_WORDS)
    return None
