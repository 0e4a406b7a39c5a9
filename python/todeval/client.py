"""A client of `todeval serve` (docs/serve.md) on the standard library.

    from todeval.client import Client
    client = Client("http://127.0.0.1:8765", token=os.environ.get("TODEVAL_TOKEN"))
    for result in client.rerank(items):
        print(result["id"], result["chosen"]["system"])

Lists longer than the server's limits (`--max-items`, `--max-pairs`, read from /healthz) are sent
in several requests and the answers joined in order; a request the server finds too large (413)
is split in halves. 503 answers are retried after their Retry-After (capped). Errors carry the
server's message, with item indices counted in the list you passed.
"""

import json
import re
import time
import urllib.error
import urllib.request
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, TypeVar, Union

from . import __version__
from .errors import ConnectionFailedError, OverloadedError, PayloadTooLargeError, ServerError, TodevalError, server_error
from .types import DEFAULT_LIMITS, Health, Limits, NliPair, NliResult, RerankItem, RerankResult, ScoreItem, TurnScore

T = TypeVar("T")

DEFAULT_URL = "http://127.0.0.1:8765"

#: Called before each retry of a 503: (attempt number from 1, seconds it will wait, the 503 answer).
RetryHook = Callable[[int, float, ServerError], None]


class Results(List[T]):
    """The items of an answer, in the order sent, with the configuration's signature."""

    def __init__(self, items: Iterable[T], signature: Dict[str, Any], signature_text: str):
        super().__init__(items)
        self.signature = signature
        self.signature_text = signature_text


def format_signature(signature: Mapping[str, Any]) -> str:
    """A signature as todeval prints it: tool and version first, the other keys sorted, `key:value|...`."""
    keys = ["tool", "version"] + sorted(k for k in signature if k not in ("tool", "version"))
    return "|".join(f"{k}:{_js_string(signature[k])}" for k in keys if k in signature and signature[k] is not None)


def _js_string(v: Any) -> str:
    # Values are strings, numbers and booleans, printed as JavaScript's String() prints them.
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


def _retry_after(value: Optional[str]) -> float:
    """Seconds of a Retry-After header (todeval sends whole seconds); 1 when absent or a date."""
    try:
        return max(0.0, float(value)) if value is not None else 1.0
    except ValueError:
        return 1.0


def _shift_indices(message: str, key: str, offset: int) -> str:
    """body/items/3 of a request that started at item 64 of the caller's list is body/items/67."""
    if offset == 0:
        return message
    return re.sub(rf"body/{key}/(\d+)", lambda m: f"body/{key}/{int(m.group(1)) + offset}", message)


def _refuse_duplicate_ids(items: Sequence[Mapping[str, Any]]) -> None:
    # The server refuses them within one request; split requests would not see each other's ids.
    seen: Dict[str, int] = {}
    for i, item in enumerate(items):
        first = seen.setdefault(item.get("id"), i)  # type: ignore[arg-type]
        if first != i:
            raise ValueError(f'body/items/{i}/id: duplicate item id "{item.get("id")}" (also body/items/{first}/id)')


class Client:
    """
    `todeval serve` over HTTP. `token`: sent as `Authorization: Bearer` (needed off loopback).
    `timeout`: seconds a request may take (size it by the server's `--timeout-ms`). `retries`: how
    often a 503 is retried, each after its Retry-After capped at `max_retry_wait` seconds.
    `on_retry`: called before each of those waits. Thread-safe: requests share no connection.
    """

    def __init__(
        self,
        url: str = DEFAULT_URL,
        token: Optional[str] = None,
        *,
        timeout: float = 120.0,
        retries: int = 5,
        max_retry_wait: float = 30.0,
        on_retry: Optional[RetryHook] = None,
    ):
        self.url = url.rstrip("/")
        self.token = token or None
        self.timeout = timeout
        self.retries = retries
        self.max_retry_wait = max_retry_wait
        self.on_retry = on_retry
        self._limits: Optional[Limits] = None

    # -- HTTP ---------------------------------------------------------------------------------

    def _send(self, method: str, path: str, body: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
        """One request, 503s retried; returns the JSON answer or raises ServerError / ConnectionFailedError."""
        headers = {"Accept": "application/json", "User-Agent": f"todeval-python/{__version__}"}
        data = None
        if body is not None:
            headers["Content-Type"] = "application/json"
            data = json.dumps(body).encode("utf-8")
        if self.token:
            headers["Authorization"] = "Bearer " + self.token
        attempt = 0
        while True:
            request = urllib.request.Request(self.url + path, data=data, headers=headers, method=method)
            try:
                with urllib.request.urlopen(request, timeout=self.timeout) as response:
                    return json.loads(response.read().decode("utf-8"))
            except urllib.error.HTTPError as e:
                error = self._server_error(path, e)
            except (urllib.error.URLError, OSError) as e:
                # URLError wraps refused connections; a timeout mid-answer is a bare OSError (socket.timeout).
                reason = getattr(e, "reason", e)
                raise ConnectionFailedError(f"todeval serve {path}: cannot reach {self.url}: {reason}") from None
            if not isinstance(error, OverloadedError) or attempt >= self.retries:
                raise error
            attempt += 1
            wait = min(error.retry_after if error.retry_after is not None else 1.0, self.max_retry_wait)
            if self.on_retry is not None:
                self.on_retry(attempt, wait, error)
            time.sleep(wait)

    @staticmethod
    def _server_error(path: str, e: urllib.error.HTTPError) -> ServerError:
        raw = e.read().decode("utf-8", "replace")
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
        if isinstance(body, dict):
            message, code = str(body.get("message", raw)), str(body.get("error", ""))
        else:
            message, code, body = raw or e.reason, "", None
        retry_after = _retry_after(e.headers.get("Retry-After")) if e.code == 503 else None
        return server_error(path, e.code, message, error=code, retry_after=retry_after, body=body)

    def _post_split(self, path: str, key: str, entries: Sequence[Any], limit: int, extra: Optional[Callable[[Sequence[Any]], Dict[str, Any]]] = None) -> Tuple[List[Any], List[Tuple[Dict[str, Any], Optional[str]]]]:
        """
        POST `entries` under `key` in requests of at most `limit`; a 413 for several entries splits
        that request in halves. Returns the answers' entries in order and each answer's signature
        (object and text).
        """
        out: List[Any] = []
        signatures: List[Tuple[Dict[str, Any], Optional[str]]] = []
        answer_key = "results" if key == "pairs" else "items"

        def send(start: int, chunk: Sequence[Any]) -> None:
            body = {key: list(chunk), **(extra(chunk) if extra else {})}
            try:
                answer = self._send("POST", path, body)
            except PayloadTooLargeError:
                if len(chunk) == 1:
                    raise
                half = len(chunk) // 2
                send(start, chunk[:half])
                send(start + half, chunk[half:])
                return
            except ServerError as e:
                e.message = _shift_indices(e.message, key, start)
                e.args = (f"todeval serve {path}: HTTP {e.status}: {e.message}",)
                raise
            out.extend(answer[answer_key])
            signatures.append((answer["signature"], answer.get("signatureText")))

        for start in range(0, len(entries), max(1, limit)):
            send(start, entries[start : start + limit])
        return out, signatures

    # -- endpoints ----------------------------------------------------------------------------

    def health(self) -> Health:
        """GET /healthz: model, revision, dtype, device, dataset, pending pairs, limits."""
        return self._send("GET", "/healthz")  # type: ignore[return-value]

    def limits(self) -> Limits:
        """The server's limits from /healthz (asked once); todeval's defaults for a server that does not say."""
        if self._limits is None:
            reported = self.health().get("limits") or {}
            self._limits = {**DEFAULT_LIMITS, **reported}  # type: ignore[typeddict-item]
        return self._limits

    def rerank(self, items: Union[RerankItem, Sequence[RerankItem]], systems: Optional[Sequence[str]] = None) -> "Results[RerankResult]":
        """
        POST /v1/rerank: the most faithful candidate of each item (one result per item, in order),
        what `todeval rerank -o` writes for it. `systems`: the tie-break order (`rerank --systems`).
        """
        items = [items] if isinstance(items, Mapping) else list(items)
        if not items:
            raise ValueError("rerank: no items")
        _refuse_duplicate_ids(items)
        order = list(systems) if systems else None
        if order:
            present = {c.get("system") for it in items for c in it.get("candidates", [])}
            unknown = [s for s in order if s not in present]
            if unknown:
                raise ValueError(f"body/systems names {', '.join(repr(s) for s in unknown)}, not a system of any candidate")

        def tie_break(chunk: Sequence[RerankItem]) -> Dict[str, Any]:
            # The server refuses a system no candidate of the request has: name those this request has.
            if not order:
                return {}
            here = {c.get("system") for it in chunk for c in it.get("candidates", [])}
            return {"systems": [s for s in order if s in here]}

        results, signatures = self._post_split("/v1/rerank", "items", items, self.limits()["maxItems"], tie_break)
        return self._joined(results, signatures, {"systems": ",".join(order)} if order else {})

    def score(self, items: Sequence[ScoreItem]) -> "Results[TurnScore]":
        """POST /v1/score: per item the line `todeval score --turns` writes for the turn, `id` the item's."""
        items = list(items)
        if not items:
            raise ValueError("score: no items")
        _refuse_duplicate_ids(items)
        results, signatures = self._post_split("/v1/score", "items", items, self.limits()["maxItems"])
        return self._joined(results, signatures)

    def nli(self, pairs: Sequence[Union[NliPair, Tuple[str, str]]]) -> "Results[NliResult]":
        """POST /v1/nli: entailment, neutral and contradiction probabilities and the label, per pair."""
        body = [p if isinstance(p, Mapping) else {"premise": p[0], "hypothesis": p[1]} for p in pairs]
        if not body:
            raise ValueError("nli: no pairs")
        results, signatures = self._post_split("/v1/nli", "pairs", body, self.limits()["maxPairs"])
        return self._joined(results, signatures)

    @staticmethod
    def _joined(results: List[Any], signatures: List[Tuple[Dict[str, Any], Optional[str]]], whole: Optional[Dict[str, Any]] = None) -> Results[Any]:
        """
        One signature for the answers of split requests: that of the whole list, as one request
        would get (the rerank tie-break order of the whole call, when a request had fewer systems).
        """
        first, text = signatures[0]
        signature = {**first, **(whole or {})}
        for s, _ in signatures[1:]:
            if {**s, **(whole or {})} != signature:
                raise TodevalError(f"todeval serve: the answers of one call carry different signatures ({format_signature(first)} vs {format_signature(s)}): did the server restart with other flags?")
        if signature != first or text is None:
            text = format_signature(signature)
        return Results(results, signature, text)
