"""A client of `todeval serve` (docs/serve.md) on the standard library.

    from todeval.client import Client
    client = Client("http://127.0.0.1:8765", token=os.environ.get("TODEVAL_TOKEN"))
    for result in client.rerank(items):
        print(result["id"], result["chosen"]["system"])

Lists are sent in requests within the server's limits (`--max-items`, `--max-pairs` and
`--max-body-bytes`, read from /healthz) and the answers joined in order; a request the server still
finds too large (a 413, or the connection closed while the body was being sent) is split in halves.
503 answers are retried after their Retry-After (capped). Every error is a TodevalError subclass
carrying the server's message (item indices counted in the list you passed) or the OS's.
"""

import http.client
import json
import re
import socket
import time
import urllib.parse
from typing import Any, Callable, Dict, Iterable, Iterator, List, Mapping, Optional, Sequence, Tuple, TypeVar, Union, cast

from . import __version__
from .errors import (
    ConnectionFailedError,
    InvalidArgumentError,
    OverloadedError,
    PayloadTooLargeError,
    ProtocolError,
    ServerError,
    TodevalError,
    server_error,
)
from .types import DEFAULT_LIMITS, Health, Limits, NliPair, NliResult, RerankItem, RerankResult, ScoreItem, TurnScore

T = TypeVar("T")

DEFAULT_URL = "http://127.0.0.1:8765"

#: Called before each retry of a 503: (attempt number from 1, seconds it will wait, the 503 answer).
RetryHook = Callable[[int, float, ServerError], None]

#: What a closed connection looks like to a sender (EPIPE, ECONNRESET, ECONNABORTED).
_CLOSED = (BrokenPipeError, ConnectionResetError, ConnectionAbortedError)


def _dumps(body: Any) -> bytes:
    """The bytes of a JSON body as sent: compact, UTF-8 (sizes are measured on exactly these)."""
    return json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


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
    """A signature value as JavaScript's String() prints it."""
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


def _renumber(e: ServerError, key: str, offset: int) -> None:
    """An error of a request that started at entry `offset` of the caller's list, in that list's indices."""
    e.message = _shift_indices(e.message, key, offset)
    e.args = (f"todeval serve {e.path}: HTTP {e.status}: {e.message}" + (f" (hint: {e.hint})" if e.hint else ""),)


def _refuse_duplicate_ids(items: Sequence[Mapping[str, Any]]) -> None:
    """Item ids must be unique over the whole call, not only within each request it is split into."""
    # The server refuses them within one request; split requests would not see each other's ids.
    seen: Dict[Any, int] = {}
    for i, item in enumerate(items):
        first = seen.setdefault(item.get("id"), i)
        if first != i:
            raise InvalidArgumentError(f'body/items/{i}/id: duplicate item id "{item.get("id")}" (also body/items/{first}/id)', hint="give every item of the call its own id")


def _refuse_non_json(value: Any, where: str) -> None:
    """
    What JSON cannot carry, refused here naming where it is: bytes (json.dumps raised a bare
    TypeError), NaN and infinities (json.dumps wrote `NaN`, which the server refused as "Body is not
    valid JSON"), and any other non-JSON object.
    """
    if value is None or isinstance(value, (str, bool, int)):
        return
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            raise InvalidArgumentError(f"{where}: {value!r} is not a number JSON can carry", hint="send a finite number, or leave the field out")
        return
    if isinstance(value, (bytes, bytearray)):
        raise InvalidArgumentError(f"{where}: expected a string, got {type(value).__name__} {bytes(value)[:40]!r}", hint="decode it first, e.g. value.decode('utf-8')")
    if isinstance(value, Mapping):
        for k, v in value.items():
            if not isinstance(k, str):
                raise InvalidArgumentError(f"{where}: keys must be strings, got {type(k).__name__} {k!r}")
            _refuse_non_json(v, f"{where}/{k}")
        return
    if isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            _refuse_non_json(v, f"{where}/{i}")
        return
    raise InvalidArgumentError(f"{where}: a {type(value).__name__} cannot be sent as JSON", hint="use strings, numbers, lists and dicts")


def _as_items(what: str, items: Any) -> List[Mapping[str, Any]]:
    """One item (a dict) or a list of them; anything else is refused naming what it got."""
    if isinstance(items, Mapping):
        _refuse_non_json(items, f"{what}: body/items/0")
        return [items]
    if isinstance(items, (str, bytes)) or not isinstance(items, Iterable):
        raise InvalidArgumentError(f"{what}: expected an item (a dict) or a list of items, got {type(items).__name__}", hint="items are dicts as docs/serve.md shows them; json.loads a JSON text first")
    out = list(items)
    for i, item in enumerate(out):
        if not isinstance(item, Mapping):
            raise InvalidArgumentError(f"{what}: body/items/{i}: expected an item (a dict), got {type(item).__name__}")
        _refuse_non_json(item, f"{what}: body/items/{i}")
    if not out:
        raise InvalidArgumentError(f"{what}: no items")
    return out


def _as_pairs(pairs: Any) -> List[Dict[str, Any]]:
    """(premise, hypothesis) tuples or {premise, hypothesis} dicts as the server's pair objects."""
    if isinstance(pairs, (str, bytes, Mapping)) or not isinstance(pairs, Iterable):
        raise InvalidArgumentError(f"nli: expected a list of (premise, hypothesis) pairs, got {type(pairs).__name__}")
    out: List[Dict[str, Any]] = []
    for i, p in enumerate(pairs):
        if isinstance(p, Mapping):
            out.append(dict(p))  # the server names a missing or unknown key
        elif isinstance(p, (tuple, list)) and len(p) == 2:
            out.append({"premise": p[0], "hypothesis": p[1]})
        else:
            got = f"a {type(p).__name__} of {len(p)}" if isinstance(p, (tuple, list)) else repr(p)[:60]
            raise InvalidArgumentError(f"nli: body/pairs/{i}: expected a (premise, hypothesis) pair or a {{premise, hypothesis}} dict, got {got}")
    if not out:
        raise InvalidArgumentError("nli: no pairs")
    for i, pair in enumerate(out):
        _refuse_non_json(pair, f"nli: body/pairs/{i}")
    return out


class _ClosedWhileSending(Exception):
    """The server closed the connection before the whole body was sent, and left no readable answer."""


class Client:
    """
    `todeval serve` over HTTP. `token`: sent as `Authorization: Bearer` (needed off loopback).
    `timeout`: seconds a request may take (size it by the server's `--timeout-ms`). `retries`: how
    often a 503 is retried, each after its Retry-After capped at `max_retry_wait` seconds.
    `on_retry`: called before each of those waits. Thread-safe: requests share no connection.

    Lists are sent in requests the server takes: at most its `maxItems` items (`maxPairs` pairs)
    and `maxBodyBytes` bytes each, as /healthz reports them. A request it still finds too large
    (a 413, or the connection closed while the body was being sent) is split in halves.
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
        # Each argument checked here, in one line naming it, instead of a TypeError from deep inside
        # urllib or http.client on the first request.
        if not isinstance(url, str):
            raise InvalidArgumentError(f"Client: url must be a string, got {type(url).__name__} {url!r}", hint=f"e.g. Client({DEFAULT_URL!r}), or Client(port=...) is not a thing: put the port in the URL")
        if token is not None and not isinstance(token, str):
            raise InvalidArgumentError(f"Client: token must be a string (the server's --token), got {type(token).__name__}")
        for name, value, least in (("timeout", timeout, 0.0), ("max_retry_wait", max_retry_wait, 0.0)):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > least or value != value:
                raise InvalidArgumentError(f"Client: {name} must be a positive number of seconds, got {type(value).__name__} {value!r}")
        if isinstance(retries, bool) or not isinstance(retries, int) or retries < 0:
            raise InvalidArgumentError(f"Client: retries must be a non-negative int, got {type(retries).__name__} {retries!r}")
        if on_retry is not None and not callable(on_retry):
            raise InvalidArgumentError(f"Client: on_retry must be callable, got {type(on_retry).__name__}")
        parts = urllib.parse.urlsplit(url if "://" in url else "http://" + url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise InvalidArgumentError(f"Client: url {url!r} is not an http:// or https:// URL", hint=f"e.g. {DEFAULT_URL}")
        self.url = url.rstrip("/")
        self._parts = parts
        self.token = token or None
        self.timeout = float(timeout)
        self.retries = retries
        self.max_retry_wait = max_retry_wait
        self.on_retry = on_retry
        self._limits: Optional[Limits] = None

    # -- HTTP ---------------------------------------------------------------------------------

    def _exchange(self, method: str, path: str, data: Optional[bytes], headers: Dict[str, str]) -> Tuple[int, Dict[str, str], bytes]:
        """One request on a new connection: (status, headers, body). Raises ConnectionFailedError or _ClosedWhileSending."""
        parts = self._parts
        conn_class = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
        conn = conn_class(parts.hostname or "", parts.port, timeout=self.timeout)
        where = f"todeval serve {path}"
        try:
            try:
                conn.connect()
            except OSError as e:
                raise ConnectionFailedError(f"{where}: cannot reach {self.url}: {e.strerror or e}", hint="is `todeval serve` running there? It prints the address it listens on") from None
            closed: Optional[OSError] = None
            try:
                conn.request(method, parts.path.rstrip("/") + path, body=data, headers=headers)
            except _CLOSED as e:
                # The server answered (a 413, say) and closed before reading the whole body: its
                # answer may be waiting in our receive buffer, so read it before giving up.
                closed = e
            except OSError as e:
                raise ConnectionFailedError(f"{where}: sending to {self.url} failed: {e.strerror or e}") from None
            try:
                response = conn.getresponse()
                body = response.read()
            except (http.client.BadStatusLine, http.client.LineTooLong) as e:
                if closed is not None:
                    raise _ClosedWhileSending(str(closed)) from None
                raise ProtocolError(f"{where}: {self.url} did not answer in HTTP ({type(e).__name__}: {str(e)[:80]!r})", hint="is that the address of `todeval serve`, and http:// or https:// as it listens?") from None
            except socket.timeout:
                raise ConnectionFailedError(f"{where}: no answer from {self.url} within {self.timeout} s (timed out)", hint="raise the client's timeout= (size it by the server's --timeout-ms)") from None
            except (http.client.HTTPException, OSError) as e:
                if closed is not None:
                    raise _ClosedWhileSending(str(closed)) from None
                reason = getattr(e, "strerror", None) or str(e) or type(e).__name__
                raise ConnectionFailedError(f"{where}: {self.url} closed the connection without an answer: {reason}") from None
            return response.status, {k.lower(): v for k, v in response.getheaders()}, body
        finally:
            conn.close()

    def _server_is_up(self) -> bool:
        """Whether /healthz answers (quickly): tells a closed connection from a server that is gone."""
        try:
            status, _, _ = Client(self.url, timeout=min(self.timeout, 10.0))._exchange("GET", "/healthz", None, {"Accept": "application/json"})
            return status == 200
        except (TodevalError, _ClosedWhileSending):
            return False

    def _send(self, method: str, path: str, body: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
        """One request, 503s retried; returns the JSON answer or raises a TodevalError subclass."""
        headers = {"Accept": "application/json", "User-Agent": f"todeval-python/{__version__}"}
        data = None
        if body is not None:
            headers["Content-Type"] = "application/json"
            data = _dumps(body)
        if self.token:
            headers["Authorization"] = "Bearer " + self.token
        attempt = 0
        while True:
            try:
                status, answer_headers, raw = self._exchange(method, path, data, headers)
            except _ClosedWhileSending as e:
                if not self._server_is_up():
                    raise ConnectionFailedError(f"todeval serve {path}: {self.url} closed the connection while the request was being sent ({e}), and /healthz does not answer now", hint="did the server stop or restart?") from None
                # Up, and it hung up on a body it would not read: what a server does with one too large.
                raise server_error(path, 413, f"the server closed the connection while the {len(data or b''):,}-byte request was being sent (a body larger than it accepts)") from None
            if 200 <= status < 300:
                try:
                    return cast(Dict[str, Any], json.loads(raw.decode("utf-8")))
                except ValueError:
                    raise ProtocolError(f"todeval serve {path}: {self.url} answered HTTP {status} with a body that is not JSON ({raw[:60]!r})", hint="is that the address of `todeval serve`?") from None
            error = self._server_error(path, status, answer_headers, raw)
            if not isinstance(error, OverloadedError) or attempt >= self.retries:
                raise error
            attempt += 1
            wait = min(error.retry_after if error.retry_after is not None else 1.0, self.max_retry_wait)
            if self.on_retry is not None:
                self.on_retry(attempt, wait, error)
            time.sleep(wait)

    @staticmethod
    def _server_error(path: str, status: int, headers: Mapping[str, str], raw: bytes) -> ServerError:
        """The ServerError of an error answer: the server's JSON message, or its text when it sent no JSON."""
        text = raw.decode("utf-8", "replace")
        try:
            body = json.loads(text)
        except ValueError:
            body = None
        if isinstance(body, dict):
            message, code = str(body.get("message", text)), str(body.get("error", ""))
        else:
            message, code, body = text.strip() or http.client.responses.get(status, "error"), "", None
        retry_after = _retry_after(headers.get("retry-after")) if status == 503 else None
        return server_error(path, status, message, error=code, retry_after=retry_after, body=body)

    def _batches(self, path: str, key: str, entries: Sequence[Any], max_count: int, extra: Dict[str, Any]) -> Iterator[Tuple[int, int]]:
        """
        [start, end) ranges of `entries` that fit one request each: at most `max_count` entries and
        the server's maxBodyBytes as sent (`extra`'s keys counted at their largest). An entry that
        alone exceeds the bytes is refused here, naming it, rather than sent to be cut off.
        """
        max_bytes = int(self.limits()["maxBodyBytes"])
        overhead = len(_dumps({key: [], **extra}))
        start, size = 0, overhead
        for i, entry in enumerate(entries):
            n = len(_dumps(entry))
            if overhead + n > max_bytes:
                raise PayloadTooLargeError(
                    path, 413,
                    f"body/{key}/{i} alone makes a {overhead + n:,}-byte request, more than the server's maxBodyBytes ({max_bytes:,})",
                    hint="shorten it, or start the server with a larger --max-body-bytes",
                )
            if i > start and (i - start >= max_count or size + 1 + n > max_bytes):
                yield start, i
                start, size = i, overhead
            size += n + (1 if i > start else 0)  # a comma before every entry but a request's first
        if start < len(entries):
            yield start, len(entries)

    def _post_split(self, path: str, key: str, entries: Sequence[Any], limit: int, extra: Optional[Callable[[Sequence[Any]], Dict[str, Any]]] = None) -> Tuple[List[Any], List[Tuple[Dict[str, Any], Optional[str]]]]:
        """
        POST `entries` under `key` in requests the server's limits allow (count `limit`, bytes
        maxBodyBytes); a 413 for several entries splits that request in halves. Returns the
        answers' entries in order and each answer's signature (object and text).
        """
        out: List[Any] = []
        signatures: List[Tuple[Dict[str, Any], Optional[str]]] = []
        answer_key = "results" if key == "pairs" else "items"

        def send(start: int, chunk: Sequence[Any]) -> None:
            """POST entries [start, start + len(chunk)); a 413 for several splits them in halves."""
            body = {key: list(chunk), **(extra(chunk) if extra else {})}
            try:
                answer = self._send("POST", path, body)
            except PayloadTooLargeError as e:
                if len(chunk) == 1:
                    _renumber(e, key, start)
                    raise
                half = len(chunk) // 2
                send(start, chunk[:half])
                send(start + half, chunk[half:])
                return
            except ServerError as e:
                _renumber(e, key, start)
                raise
            try:
                out.extend(answer[answer_key])
                signatures.append((answer["signature"], answer.get("signatureText")))
            except (KeyError, TypeError):
                raise ProtocolError(f"todeval serve {path}: the answer has no `{answer_key}` and `signature`: is {self.url} a todeval serve of this version?") from None

        for start, end in self._batches(path, key, entries, max(1, limit), extra(entries) if extra else {}):
            send(start, entries[start:end])
        return out, signatures

    # -- endpoints ----------------------------------------------------------------------------

    def health(self) -> Health:
        """GET /healthz: model, revision, dtype, device, dataset, pending pairs, limits."""
        return cast(Health, self._send("GET", "/healthz"))

    def limits(self) -> Limits:
        """The server's limits from /healthz (asked once); todeval's defaults for a server that does not say."""
        if self._limits is None:
            reported = cast(Dict[str, Any], self.health().get("limits") or {})
            self._limits = cast(Limits, {**DEFAULT_LIMITS, **reported})
        return self._limits

    def rerank(self, items: Union[RerankItem, Sequence[RerankItem]], systems: Optional[Sequence[str]] = None) -> "Results[RerankResult]":
        """
        POST /v1/rerank: the most faithful candidate of each item (one result per item, in order),
        what `todeval rerank -o` writes for it. `items`: one item or a list of them (dicts as
        docs/serve.md shows; unknown keys are refused by the server). `systems`: the tie-break
        order (`rerank --systems`).
        """
        entries = _as_items("rerank", items)
        _refuse_duplicate_ids(entries)
        if isinstance(systems, str):
            raise InvalidArgumentError(f"rerank: systems: expected a list of system names, got the string {systems!r}", hint=f"systems=[{systems!r}]")
        order = list(systems) if systems else None
        if order:
            present = {c.get("system") for it in entries for c in it.get("candidates", []) if isinstance(c, Mapping)}
            unknown = [s for s in order if s not in present]
            if unknown:
                raise InvalidArgumentError(f"body/systems names {', '.join(repr(s) for s in unknown)}, not a system of any candidate")

        def tie_break(chunk: Sequence[Mapping[str, Any]]) -> Dict[str, Any]:
            """The `systems` of one request: the call's order, less the systems it has no candidate of."""
            # The server refuses a system no candidate of the request has: name those this request has.
            if not order:
                return {}
            here = {c.get("system") for it in chunk for c in it.get("candidates", []) if isinstance(c, Mapping)}
            return {"systems": [s for s in order if s in here]}

        results, signatures = self._post_split("/v1/rerank", "items", entries, self.limits()["maxItems"], tie_break)
        return self._joined(results, signatures, {"systems": ",".join(order)} if order else {})

    def score(self, items: Union[ScoreItem, Sequence[ScoreItem]]) -> "Results[TurnScore]":
        """POST /v1/score: per item the line `todeval score --turns` writes for the turn, `id` the item's."""
        entries = _as_items("score", items)
        _refuse_duplicate_ids(entries)
        results, signatures = self._post_split("/v1/score", "items", entries, self.limits()["maxItems"])
        return self._joined(results, signatures)

    def nli(self, pairs: Sequence[Union[NliPair, Tuple[str, str]]]) -> "Results[NliResult]":
        """
        POST /v1/nli: entailment, neutral and contradiction probabilities and the label, per pair.
        `pairs`: (premise, hypothesis) tuples or {"premise", "hypothesis"} dicts.
        """
        results, signatures = self._post_split("/v1/nli", "pairs", _as_pairs(pairs), self.limits()["maxPairs"])
        return self._joined(results, signatures)

    @staticmethod
    def _joined(results: List[Any], signatures: List[Tuple[Dict[str, Any], Optional[str]]], whole: Optional[Dict[str, Any]] = None) -> "Results[Any]":
        """
        One signature for the answers of split requests: that of the whole list, as one request
        would get (the rerank tie-break order of the whole call, when a request had fewer systems).
        """
        first, text = signatures[0]
        signature = {**first, **(whole or {})}
        for s, _ in signatures[1:]:
            if {**s, **(whole or {})} != signature:
                raise TodevalError(
                    f"todeval serve: the answers of one call carry different signatures ({format_signature(first)} vs {format_signature(s)})",
                    hint="the server restarted with other flags during the call: run it again",
                )
        if signature != first or text is None:
            text = format_signature(signature)
        return Results(results, signature, text)
