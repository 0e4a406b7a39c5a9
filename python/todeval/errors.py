"""Exceptions of the todeval package: one base class, so `except TodevalError` catches them all."""

from typing import Any, Dict, Optional, Sequence


class TodevalError(Exception):
    """Base class of every error raised by this package."""


class TodevalWarning(UserWarning):
    """A warning line the todeval CLI printed (unknown state slots, dropped placeholders, ...)."""


class CliError(TodevalError):
    """The todeval CLI failed. `str(e)` is its one-line error; the rest is kept for debugging."""

    def __init__(self, line: str, *, exit_code: Optional[int] = None, stderr: str = "", command: Sequence[str] = ()):
        super().__init__(line)
        self.line = line
        self.exit_code = exit_code
        self.stderr = stderr
        self.command = list(command)


class CliNotFoundError(CliError, FileNotFoundError):
    """No todeval CLI was found (TODEVAL_BIN, node_modules/.bin, PATH, this checkout's bin/)."""


class CommandUnavailableError(CliError):
    """The todeval CLI that was found lacks a command or option this call needs (an older todeval)."""


class ServerError(TodevalError):
    """`todeval serve` answered with an error status; `message` is the server's own message."""

    def __init__(self, path: str, status: int, message: str, *, error: str = "", retry_after: Optional[float] = None, body: Optional[Dict[str, Any]] = None):
        super().__init__(f"todeval serve {path}: HTTP {status}: {message}")
        self.path = path
        self.status = status
        self.message = message
        self.error = error
        self.retry_after = retry_after
        self.body = body


class BadRequestError(ServerError):
    """400: the body was refused; the message names the field (indices are those of your list)."""


class UnauthorizedError(ServerError):
    """401: the server requires a token (`Authorization: Bearer ...`) and got none or a wrong one."""


class PayloadTooLargeError(ServerError):
    """413: one item alone is more than the server's limits allow (batches are split before that)."""


class OverloadedError(ServerError):
    """503 still answered after every retry the client was allowed."""


class ConnectionFailedError(TodevalError, ConnectionError):
    """The server could not be reached, or did not answer within the client's timeout."""


def server_error(path: str, status: int, message: str, **kwargs: Any) -> ServerError:
    """The ServerError subclass for an HTTP status."""
    cls = {400: BadRequestError, 401: UnauthorizedError, 413: PayloadTooLargeError, 503: OverloadedError}.get(status, ServerError)
    return cls(path, status, message, **kwargs)
