"""Exceptions of the todeval package: one base class, so `except TodevalError` catches them all.

Every error names its cause (the server's message, the CLI's first error line, or the OS's) and,
where there is an obvious fix, a hint: `str(e)` is "cause (hint: ...)", `e.hint` the hint alone.
"""

from typing import Any, Dict, Optional, Sequence


class TodevalError(Exception):
    """Base class of every error raised by this package. `hint`: what would fix it, when known."""

    def __init__(self, message: str, *, hint: Optional[str] = None):
        super().__init__(f"{message} (hint: {hint})" if hint else message)
        self.hint = hint


class TodevalWarning(UserWarning):
    """A warning line the todeval CLI printed (unknown state slots, skipped invalid dialogues, ...)."""


class InvalidArgumentError(TodevalError, ValueError, TypeError):
    """An argument of a call was refused before anything ran: the message names it and what it got.

    Also a ValueError and a TypeError, which is what such a mistake raises elsewhere in Python.
    """


class CliError(TodevalError):
    """The todeval CLI failed. `str(e)` is its one-line error; `stderr`, `exit_code`, `command` hold the rest."""

    def __init__(self, line: str, *, exit_code: Optional[int] = None, stderr: str = "", command: Sequence[str] = (), hint: Optional[str] = None):
        super().__init__(line, hint=hint)
        self.line = line
        self.exit_code = exit_code
        self.stderr = stderr
        self.command = list(command)


class CliNotFoundError(CliError, FileNotFoundError):
    """No todeval CLI was found (the one the package came with, `todeval` on PATH, TODEVAL_BIN)."""


class CommandUnavailableError(CliError):
    """The todeval CLI that was found lacks a command or option this call needs (an older todeval)."""


class ServerError(TodevalError):
    """`todeval serve` answered with an error status; `message` is the server's own message."""

    def __init__(
        self,
        path: str,
        status: int,
        message: str,
        *,
        error: str = "",
        retry_after: Optional[float] = None,
        body: Optional[Dict[str, Any]] = None,
        hint: Optional[str] = None,
    ):
        super().__init__(f"todeval serve {path}: HTTP {status}: {message}", hint=hint)
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
    """The server could not be reached, closed the connection without an answer, or did not answer in time."""


class ProtocolError(ConnectionFailedError):
    """What answered at the URL is not `todeval serve`: not HTTP, or not JSON."""


_HINTS = {
    401: "pass token= (the server's --token or $TODEVAL_TOKEN)",
    413: "shorten the item, or start the server with larger --max-body-bytes / --max-pairs / --max-pending-pairs",
}


def server_error(path: str, status: int, message: str, **kwargs: Any) -> ServerError:
    """The ServerError subclass for an HTTP status, with the usual fix as its hint."""
    cls = {400: BadRequestError, 401: UnauthorizedError, 413: PayloadTooLargeError, 503: OverloadedError}.get(status, ServerError)
    kwargs.setdefault("hint", _HINTS.get(status))
    return cls(path, status, message, **kwargs)
