"""
todeval from Python: mwzeval's Evaluator computed by todeval (`todeval.mwzeval`), and a client of
`todeval serve` (`todeval.client`). Standard library only; the metrics run in the todeval CLI.
"""

__version__ = "0.1.0"

from .client import Client, Results  # noqa: E402
from .errors import (  # noqa: E402
    BadRequestError,
    CliError,
    CliNotFoundError,
    CommandUnavailableError,
    ConnectionFailedError,
    OverloadedError,
    PayloadTooLargeError,
    ServerError,
    TodevalError,
    TodevalWarning,
    UnauthorizedError,
)
from .mwzeval import Evaluation, Evaluator  # noqa: E402

__all__ = [
    "__version__",
    "BadRequestError",
    "CliError",
    "CliNotFoundError",
    "Client",
    "CommandUnavailableError",
    "ConnectionFailedError",
    "Evaluation",
    "Evaluator",
    "OverloadedError",
    "PayloadTooLargeError",
    "Results",
    "ServerError",
    "TodevalError",
    "TodevalWarning",
    "UnauthorizedError",
]
