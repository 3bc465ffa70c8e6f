"""Who may call: an Anthropic API key (x-api-key), or on Bedrock a Bedrock API key (Bearer) or a
SigV4 signature by known AWS credentials, verified as AWS does (canonical request, scope, HMAC chain)."""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from urllib.parse import quote

# How far a signature's timestamp may be from the simulator's clock (AWS allows 5 minutes).
MAX_CLOCK_SKEW = timedelta(minutes=5)


@dataclass(frozen=True)
class Caller:
    method: str  # "x-api-key" or "bearer" (API), "bearer" or "sigv4" (Bedrock)
    identity: str  # the API key, the Bedrock key, or the access key id


class Denied(Exception):
    def __init__(self, status: int, kind: str, message: str) -> None:
        super().__init__(message)
        self.status, self.kind, self.message = status, kind, message


def api_caller(headers: dict[str, str], keys: set[str]) -> Caller:
    """The API takes the key as x-api-key, or (as SDK 2.x sends it) as an Authorization bearer token."""
    authorization = headers.get("authorization", "")
    if authorization.startswith("Bearer "):
        method, key = "bearer", authorization.removeprefix("Bearer ").strip()
    else:
        method, key = "x-api-key", headers.get("x-api-key", "")
    if not key or key not in keys:
        raise Denied(401, "authentication_error", "invalid x-api-key")
    return Caller(method, key)


def bedrock_caller(method: str, path: str, headers: dict[str, str], body: bytes, *, bearer_keys: set[str],
                   credentials: dict[str, str], region: str) -> Caller:
    authorization = headers.get("authorization", "")
    if authorization.startswith("Bearer "):
        token = authorization.removeprefix("Bearer ").strip()
        if token not in bearer_keys:
            raise Denied(403, "UnrecognizedClientException", "The security token included in the request is invalid.")
        return Caller("bearer", token)
    if authorization.startswith("AWS4-HMAC-SHA256 "):
        return _sigv4(method, path, headers, body, authorization, credentials, region)
    raise Denied(403, "MissingAuthenticationTokenException", "Missing Authentication Token")


def _sigv4(method: str, path: str, headers: dict[str, str], body: bytes, authorization: str,
           credentials: dict[str, str], region: str) -> Caller:
    parts = dict(part.strip().split("=", 1) for part in authorization.removeprefix("AWS4-HMAC-SHA256 ").split(","))
    access_key, date, scope_region, service, terminator = parts.get("Credential", "////").split("/")
    secret = credentials.get(access_key)
    if secret is None:
        raise Denied(403, "UnrecognizedClientException", "The security token included in the request is invalid.")
    if (service, terminator) != ("bedrock", "aws4_request") or scope_region != region:
        raise Denied(403, "InvalidSignatureException",
                     f"Credential should be scoped to a valid region and service (bedrock in {region}).")
    stamp = headers.get("x-amz-date", "")
    try:
        moment = datetime.strptime(stamp, "%Y%m%dT%H%M%SZ").replace(tzinfo=UTC)
    except ValueError:
        raise Denied(403, "InvalidSignatureException", "X-Amz-Date is missing or malformed.") from None
    if abs(datetime.now(UTC) - moment) > MAX_CLOCK_SKEW or not stamp.startswith(date):
        raise Denied(403, "InvalidSignatureException", "Signature expired or not yet valid.")
    signed = parts.get("SignedHeaders", "").split(";")
    canonical = "\n".join([
        method.upper(),
        quote(path, safe="/~"),
        "",
        "".join(f"{name}:{' '.join(headers.get(name, '').split())}\n" for name in signed),
        ";".join(signed),
        headers.get("x-amz-content-sha256") or hashlib.sha256(body).hexdigest(),
    ])
    string_to_sign = "\n".join([
        "AWS4-HMAC-SHA256", stamp, f"{date}/{region}/bedrock/aws4_request",
        hashlib.sha256(canonical.encode()).hexdigest(),
    ])
    key = f"AWS4{secret}".encode()
    for part in (date, region, "bedrock", "aws4_request"):
        key = hmac.new(key, part.encode(), hashlib.sha256).digest()
    expected = hmac.new(key, string_to_sign.encode(), hashlib.sha256).hexdigest()
    if not hmac.compare_digest(expected, parts.get("Signature", "")):
        raise Denied(403, "InvalidSignatureException",
                     "The request signature we calculated does not match the signature you provided.")
    return Caller("sigv4", access_key)
