"""Signing in to the web view, and what keeps another site from acting with a signed-in browser.

- The token is typed once on the sign-in page and kept in the `wiki_session` cookie: HttpOnly (no
  script reads it), SameSite=Strict (no other site's request carries it), Secure when the page was
  served over TLS, path `/`. It never appears in a URL. A view also takes `Authorization: Bearer`, as
  the API does.
- Every form that changes something carries a CSRF token the server checks:
  - signed in, it is derived from the session token (`csrf_for`: a SHA-256 of a fixed label and the
    token). Another site cannot compute it without the token, it reveals nothing of the token, and
    every server process derives the same one, so several `--workers` need no shared secret;
  - the sign-in form (no session yet) uses a random value set in the `wiki_signin` cookie and
    repeated in the form (a double submit: another site can neither read nor set that cookie).
- A state-changing request whose `Origin` (or, without one, `Sec-Fetch-Site`) says it comes from
  another site is refused before its CSRF token is even looked at.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from urllib.parse import parse_qs, urlsplit

from starlette.requests import Request
from starlette.responses import Response

SESSION_COOKIE = "wiki_session"
SIGNIN_COOKIE = "wiki_signin"
CSRF_FIELD = "csrf"
MAX_TOKEN_CHARS = 200
MAX_FORM_FIELDS = 8
_CSRF_LABEL = b"wiki-web-csrf\x1f"


class FormRefused(Exception):
    """A state-changing request refused: status and one sentence."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status, self.message = status, message


def csrf_for(token: str) -> str:
    return hashlib.sha256(_CSRF_LABEL + token.encode("utf-8", "surrogatepass")).hexdigest()


def new_signin_nonce() -> str:
    return secrets.token_urlsafe(32)


def same_token(given: str | None, expected: str | None) -> bool:
    if not given or not expected:
        return False
    return hmac.compare_digest(given.encode("utf-8", "surrogatepass"), expected.encode("utf-8", "surrogatepass"))


def _origin_of(request: Request) -> str:
    host = request.headers.get("host", "")
    return f"{request.url.scheme}://{host}".lower()


def check_same_origin(request: Request) -> None:
    """Refuse a request another site's page made: by its Origin, else by its Sec-Fetch-Site."""
    origin = request.headers.get("origin")
    if origin is not None:
        parts = urlsplit(origin)
        if origin == "null" or f"{parts.scheme}://{parts.netloc}".lower() != _origin_of(request):
            raise FormRefused(403, "this form was sent from another site; open the wiki and send it from there")
        return
    if request.headers.get("sec-fetch-site", "same-origin") not in ("same-origin", "none"):
        raise FormRefused(403, "this form was sent from another site; open the wiki and send it from there")


async def read_form(request: Request) -> dict[str, str]:
    """The urlencoded form of the body (bounded by the guard's body limit), one value per field."""
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind != "application/x-www-form-urlencoded":
        raise FormRefused(415, "send the form as application/x-www-form-urlencoded")
    try:
        body = (await request.body()).decode("utf-8")
        fields = parse_qs(body, keep_blank_values=True, strict_parsing=False, max_num_fields=MAX_FORM_FIELDS)
    except (UnicodeDecodeError, ValueError):
        raise FormRefused(422, "the form is not valid: send at most a few fields, encoded as UTF-8") from None
    return {name: values[0] for name, values in fields.items() if values}


def set_cookie(response: Response, request: Request, name: str, value: str, max_age: int | None = None) -> None:
    response.set_cookie(name, value, max_age=max_age, path="/", httponly=True, samesite="strict",
                        secure=request.url.scheme == "https")


def clear_cookie(response: Response, request: Request, name: str) -> None:
    response.delete_cookie(name, path="/", httponly=True, samesite="strict", secure=request.url.scheme == "https")


# No script at all (the views need none), styles and images only from this server, forms only to
# it, never framed.
CONTENT_SECURITY_POLICY = ("default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; "
                           "frame-ancestors 'none'; base-uri 'none'")
SECURITY_HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    # same-origin, not no-referrer: under no-referrer a browser sends `Origin: null` with its own forms.
    "Referrer-Policy": "same-origin",
    "X-Frame-Options": "DENY",
    "Cache-Control": "no-store",
}
