"""todeval.client.Client against live `todeval serve` processes on loopback (started by npm test)."""

import re
import socket
import struct
import threading
import time
import unittest
import urllib.request
import uuid
from typing import Any, Callable, Dict, List, Optional

from support import BIG_URL, OVERLOAD_PENDING, OVERLOAD_URL, SERVER_TOKEN, SERVER_URL, needs_big_server, needs_server
from todeval import BadRequestError, ConnectionFailedError, OverloadedError, PayloadTooLargeError, TodevalError, UnauthorizedError
from todeval.client import Client, _dumps
from todeval.errors import InvalidArgumentError, ProtocolError

MAX_ITEMS = 3  # the main server's --max-items (test/python-package.test.ts)


def alarm_item(i: int, time_: str, systems=("a", "b")) -> Dict[str, Any]:
    texts = {"a": f"Shall I set an alarm for {time_}?", "b": "Okay.", "c": f"An alarm at {time_}, right?"}
    return {
        "id": f"alarm-{i}",
        "service": "Alarm_1",
        "context": f"Wake me up at {time_}.",
        "actions": [{"act": "CONFIRM", "slot": "new_alarm_time", "values": [time_]}],
        "candidates": [{"system": s, "text": texts[s], "likelihood": -1.0 - k} for k, s in enumerate(systems)],
    }


TIMES = ["7 am", "6:30 am", "noon", "5 pm", "9:15 am", "midnight", "8 pm"]


def requests_total(url: str, route: str, status: int, token: Optional[str] = None) -> int:
    """todeval_http_requests_total{route,status} from GET /metrics."""
    req = urllib.request.Request(url + "/metrics", headers={"Authorization": f"Bearer {token}"} if token else {})
    with urllib.request.urlopen(req, timeout=30) as r:
        text = r.read().decode("utf-8")
    m = re.search(rf'^todeval_http_requests_total{{route="{re.escape(route)}",status="{status}"}} (\d+)', text, re.MULTILINE)
    return int(m.group(1)) if m else 0


@needs_server
class MainServer(unittest.TestCase):
    """The lexical stand-in model, a token, --max-items 3."""

    def setUp(self) -> None:
        self.client = Client(SERVER_URL, SERVER_TOKEN)

    def test_health_and_limits(self) -> None:
        health = Client(SERVER_URL).health()  # /healthz needs no token
        self.assertEqual(health["status"], "ok")
        self.assertEqual(health["device"], "cpu")
        self.assertEqual(self.client.limits()["maxItems"], MAX_ITEMS)

    def test_401_without_the_token(self) -> None:
        for token in (None, "wrong-token-0123456789"):
            with self.subTest(token=token), self.assertRaises(UnauthorizedError) as caught:
                Client(SERVER_URL, token).nli([("The alarm is at 7 am.", "The time is 7 am.")])
            self.assertEqual(caught.exception.status, 401)
            self.assertEqual(caught.exception.message, "missing or wrong Authorization: Bearer <token>")

    def test_400_with_the_servers_message(self) -> None:
        bad_act = alarm_item(0, "7 am")
        bad_act["actions"][0]["act"] = "INFROM"
        with self.assertRaises(BadRequestError) as caught:
            self.client.rerank([bad_act])
        self.assertEqual(caught.exception.status, 400)
        self.assertTrue(caught.exception.message.startswith('body/items/0 (item alarm-0): no sgd rule covers act "INFROM"'), caught.exception.message)
        self.assertEqual(str(caught.exception), f"todeval serve /v1/rerank: HTTP 400: {caught.exception.message}")

        # In the second request of a split list, the index is still the one in the caller's list.
        items = [alarm_item(i, t) for i, t in enumerate(TIMES[:5])]
        del items[4]["candidates"][0]["text"]
        with self.assertRaises(BadRequestError) as caught:
            self.client.rerank(items)
        self.assertEqual(caught.exception.message, "body/items/4/candidates/0 must have required property 'text'")

    def test_rerank_split_to_max_items_equals_one_by_one(self) -> None:
        items = [alarm_item(i, t) for i, t in enumerate(TIMES)]
        before = requests_total(SERVER_URL, "/v1/rerank", 200, SERVER_TOKEN)
        results = self.client.rerank(items)
        self.assertEqual(requests_total(SERVER_URL, "/v1/rerank", 200, SERVER_TOKEN) - before, 3)  # 7 items, 3 per request
        self.assertEqual([r["id"] for r in results], [it["id"] for it in items])
        self.assertEqual(results, [self.client.rerank(it)[0] for it in items])
        self.assertEqual(results.signature["metric"], "sgsacc-rerank")
        self.assertIn("systems:item-order", results.signature_text)
        for r in results:
            self.assertEqual(r["chosen"]["fidelity"], max(c["fidelity"] for c in r["candidates"]))

    def test_tie_break_order_over_split_requests(self) -> None:
        # The last request has no candidate of system "c": the client names only "a" there, and the
        # call's signature is that of the whole order, as one request would carry it.
        items = [alarm_item(i, t, ("a", "b", "c")) for i, t in enumerate(TIMES[:3])] + [alarm_item(3, TIMES[3], ("a", "b"))]
        results = self.client.rerank(items, systems=["c", "a", "b"])
        self.assertEqual(len(results), 4)
        self.assertEqual(results.signature["systems"], "c,a,b")
        self.assertIn("|systems:c,a,b", results.signature_text)
        with self.assertRaisesRegex(ValueError, "body/systems names 'z'"):
            self.client.rerank(items, systems=["z"])

    def test_duplicate_ids_across_requests_are_refused(self) -> None:
        items = [alarm_item(i, t) for i, t in enumerate(TIMES[:5])]
        items[4]["id"] = "alarm-1"
        with self.assertRaisesRegex(ValueError, r'body/items/4/id: duplicate item id "alarm-1" \(also body/items/1/id\)'):
            self.client.rerank(items)

    def test_score_split_equals_one_by_one(self) -> None:
        items = [
            {"id": f"s{i}", "service": "Alarm_1", "actions": [{"act": "CONFIRM", "slot": "new_alarm_time", "values": [t]}], "utterance": u, "ground_truth": f"Please confirm: an alarm at {t}."}
            for i, (t, u) in enumerate(zip(TIMES[:4], ["An alarm at 7 am?", "Okay.", "Noon it is, confirm?", "Sure."]))
        ]
        results = self.client.score(items)
        self.assertEqual([r["id"] for r in results], ["s0", "s1", "s2", "s3"])
        self.assertEqual(results, [self.client.score([it])[0] for it in items])
        self.assertEqual(results.signature["metric"], "sgsacc-turns")
        for r in results:
            for a in r["actions"]:
                self.assertGreaterEqual(a["entailment"], 0.0)
                self.assertLessEqual(a["entailment"], 1.0)

    def test_nli_pairs_as_tuples_or_dicts(self) -> None:
        pairs = [("The flight leaves at 7 am.", "The time is 7 am."), {"premise": "ok", "hypothesis": "The destination is Seattle."}, ("The flight leaves at 7 am.", "The time is 7 am.")]
        results = self.client.nli(pairs)
        self.assertEqual(len(results), 3)
        self.assertEqual(results[0], results[2])
        for p in results:
            self.assertAlmostEqual(p["entailment"] + p["neutral"] + p["contradiction"], 1.0, places=5)
            self.assertEqual(p["label"], max(("entailment", "neutral", "contradiction"), key=lambda k: p[k]))
        self.assertIn("model", results.signature)


@needs_server
class Overload(unittest.TestCase):
    """The tiny model, one thread, batches of one pair, --max-pending-pairs OVERLOAD_PENDING, no token."""

    def wait_pending(self, client: Client, pending: int, alive: Optional[threading.Thread] = None) -> None:
        deadline = time.monotonic() + 60
        while client.health()["pendingPairs"] != pending:
            if alive is not None and not alive.is_alive():
                self.fail(f"the blocking request ended before {pending} pairs were seen pending")
            if time.monotonic() > deadline:
                self.fail(f"pendingPairs never reached {pending}")
            time.sleep(0.005)

    def test_413_splits_the_request_in_halves(self) -> None:
        client = Client(OVERLOAD_URL)
        self.wait_pending(client, 0)
        n = OVERLOAD_PENDING + 100  # within --max-pairs, beyond --max-pending-pairs: 413, then two halves
        self.assertLessEqual(n, client.limits()["maxPairs"])
        pairs = [(f"Platform {i} of {uuid.uuid4()}.", f"The platform is {i}.") for i in range(n)]
        too_large, ok = requests_total(OVERLOAD_URL, "/v1/nli", 413), requests_total(OVERLOAD_URL, "/v1/nli", 200)
        results = client.nli(pairs)
        self.assertEqual(len(results), n)
        self.assertEqual(requests_total(OVERLOAD_URL, "/v1/nli", 413) - too_large, 1)
        self.assertEqual(requests_total(OVERLOAD_URL, "/v1/nli", 200) - ok, 2)

    def test_503_is_retried_after_retry_after(self) -> None:
        client = Client(OVERLOAD_URL)
        self.wait_pending(client, 0)
        # A request that takes every pending pair the server admits: while it runs, any other is refused
        # by admission (not by chance), so the first answer below is certainly a 503.
        nonce = uuid.uuid4()
        long = "The restaurant downtown serves Italian food and has outdoor seating with a view of the river. " * 12
        blocker_pairs = [(f"{nonce} {i}: {long}", f"The price is {i} dollars.") for i in range(OVERLOAD_PENDING)]
        outcome: Dict[str, Any] = {}
        blocker = threading.Thread(target=lambda: outcome.update(results=Client(OVERLOAD_URL, retries=0).nli(blocker_pairs)))
        blocker.start()
        try:
            self.wait_pending(client, OVERLOAD_PENDING, alive=blocker)
            with self.assertRaises(OverloadedError) as caught:
                Client(OVERLOAD_URL, retries=0).nli([("The train leaves at 5 pm.", "The time is 5 pm.")])
            self.assertEqual(caught.exception.status, 503)
            self.assertRegex(caught.exception.message, r"NLI pairs are pending")
            self.assertGreaterEqual(caught.exception.retry_after, 1)

            waits: List[Any] = []
            patient = Client(OVERLOAD_URL, retries=30, max_retry_wait=1.0, on_retry=lambda attempt, wait, e: waits.append((attempt, wait, e.status, e.retry_after)))
            [result] = patient.nli([("The train leaves at 5 pm.", "The time is 5 pm.")])
            self.assertAlmostEqual(result["entailment"] + result["neutral"] + result["contradiction"], 1.0, places=5)
            self.assertGreaterEqual(len(waits), 1)
            for attempt, wait, status, retry_after in waits:
                self.assertEqual(status, 503)
                self.assertEqual(wait, min(retry_after, 1.0))  # Retry-After, capped
            self.assertEqual([w[0] for w in waits], list(range(1, len(waits) + 1)))
        finally:
            blocker.join()
        self.assertEqual(len(outcome["results"]), OVERLOAD_PENDING)


def big_item(i: int, size: int) -> Dict[str, Any]:
    """A rerank item of about `size` bytes as JSON: candidate "a" is a long text, all items alike but their ids."""
    item = alarm_item(i, "7 am")
    sentence = "Shall I set an alarm for 7 am? "
    item["candidates"][0]["text"] = sentence * max(1, (size - len(_dumps(item))) // len(sentence))
    return item


#: How often a large-body case whose request bodies can pass the server's limit runs: the server may
#: close the connection while the client still sends, and that race must lose every time, not once.
#: A case whose every body is within the limit runs once: the server reads each body whole, so there
#: is no close to race with (and each request has a new connection: no keep-alive race either); a
#: second run would only repeat the first.
RUNS = 20


@needs_big_server
class LargeBodies(unittest.TestCase):
    """A server with the default limits (1 MiB bodies, 64 items): requests sized to them, and a 413 or a close split."""

    def setUp(self) -> None:
        self.client = Client(BIG_URL)
        self.max_bytes = self.client.limits()["maxBodyBytes"]
        self.assertEqual(self.max_bytes, 1 << 20)  # the default (docs/serve.md), which the sizes below are about

    def items_of(self, total: int, size: int) -> List[Dict[str, Any]]:
        one = len(_dumps(big_item(0, size)))
        return [big_item(i, size) for i in range(max(1, round(total / one)))]

    def run_case(self, client: Client, items: List[Dict[str, Any]], requests: Optional[int], runs: int = RUNS) -> None:
        body = len(_dumps({"items": items}))
        for run in range(runs):
            with self.subTest(body=body, items=len(items), run=run):
                ok = requests_total(BIG_URL, "/v1/rerank", 200)
                results = client.rerank(items)  # any error, "cannot reach" included, fails the test
                self.assertEqual([r["id"] for r in results], [it["id"] for it in items])
                self.assertTrue(all(r["chosen"]["system"] == "a" for r in results))
                if requests is not None:
                    self.assertEqual(requests_total(BIG_URL, "/v1/rerank", 200) - ok, requests)

    def test_sized_from_healthz(self) -> None:
        # 0.9 MB fits one request; 1.1 MB needs two and 3 MB three (each about 1 MiB full); 64 items
        # of 20 KB (1.3 MB) are within --max-items but not the bytes: two requests. No 413 is needed.
        too_large = requests_total(BIG_URL, "/v1/rerank", 413)
        # Once each (see RUNS): nothing here is past the limits, so no close can race the sending.
        for total, size, requests in ((900_000, 50_000, 1), (1_100_000, 50_000, 2), (3_000_000, 50_000, 3)):
            self.run_case(self.client, self.items_of(total, size), requests, runs=1)
        items = [big_item(i, 20_000) for i in range(64)]
        self.assertGreater(len(_dumps({"items": items})), self.max_bytes)
        self.run_case(self.client, items, 2, runs=1)
        self.assertEqual(requests_total(BIG_URL, "/v1/rerank", 413) - too_large, 0)

    def test_a_client_that_believes_larger_limits_still_splits(self) -> None:
        # The server closes the connection on a body past its limit, often while the client is
        # still sending: the client reads the server's 413 if it arrived, or sees the server up on
        # /healthz, and splits in halves either way. Never "cannot reach".
        client = Client(BIG_URL)
        client._limits = {**client.limits(), "maxBodyBytes": 1 << 30, "maxItems": 1000}
        for total, size in ((900_000, 50_000), (1_100_000, 50_000), (3_000_000, 50_000), (64 * 20_000, 20_000)):
            items = self.items_of(total, size)
            # Only a body past the server's limit can be closed while sending (see RUNS): the 0.9 MB one fits.
            past_the_limit = len(_dumps({"items": items})) > self.max_bytes
            self.run_case(client, items, None, runs=RUNS if past_the_limit else 1)

    def test_one_item_larger_than_the_limit(self) -> None:
        item = big_item(0, 1_100_000)
        with self.assertRaises(PayloadTooLargeError) as caught:
            self.client.rerank([big_item(1, 1000), item])
        self.assertIn("body/items/1 alone makes a", caught.exception.message)
        self.assertIn("--max-body-bytes", str(caught.exception))
        believer = Client(BIG_URL)
        believer._limits = {**believer.limits(), "maxBodyBytes": 1 << 30}
        for run in range(RUNS):
            with self.subTest(run=run), self.assertRaises(PayloadTooLargeError) as caught:
                believer.rerank(item)
            self.assertEqual(caught.exception.status, 413)
            self.assertNotIn("cannot reach", str(caught.exception))


@needs_server
class RefusedArguments(unittest.TestCase):
    """Mistakes in what is passed: a TodevalError naming the argument, before or from the server."""

    def setUp(self) -> None:
        self.client = Client(SERVER_URL, SERVER_TOKEN)

    def test_rerank_takes_items_not_text(self) -> None:
        for bad in ("hello", 3, ["hello"]):
            with self.subTest(bad=bad), self.assertRaises(InvalidArgumentError) as caught:
                self.client.rerank(bad)  # type: ignore[arg-type]
            self.assertIsInstance(caught.exception, TodevalError)
            self.assertIsInstance(caught.exception, ValueError)
        with self.assertRaisesRegex(InvalidArgumentError, "systems=\\['a'\\]"):
            self.client.rerank(alarm_item(0, "7 am"), systems="a")

    def test_nli_pairs_are_two_texts(self) -> None:
        with self.assertRaisesRegex(InvalidArgumentError, "expected a list of .premise, hypothesis. pairs, got str"):
            self.client.nli("abc")  # type: ignore[arg-type]
        with self.assertRaisesRegex(InvalidArgumentError, r"body/pairs/0: .* got 'abc'"):
            self.client.nli(["abc"])  # type: ignore[list-item]
        with self.assertRaisesRegex(InvalidArgumentError, r"body/pairs/1: .* got a tuple of 3"):
            self.client.nli([("a", "b"), ("a", "b", "c")])  # type: ignore[list-item]

    def test_unknown_rerank_item_keys_are_refused(self) -> None:
        item = alarm_item(0, "7 am")
        item["contxt"] = item.pop("context")
        with self.assertRaises(BadRequestError) as caught:
            self.client.rerank(item)
        self.assertIn("body/items/0 must NOT have additional properties", caught.exception.message)


class NotTodevalServe(unittest.TestCase):
    def loopback_server(self, serve: Callable[[socket.socket], None]) -> str:
        """A loopback listener whose connections `serve` handles on a thread of its own; its URL."""
        listener = socket.socket()
        listener.bind(("127.0.0.1", 0))
        listener.listen(4)
        listener.settimeout(10)
        self.addCleanup(listener.close)
        thread = threading.Thread(target=serve, args=(listener,), daemon=True)
        thread.start()
        self.addCleanup(thread.join, 10)
        return f"http://127.0.0.1:{listener.getsockname()[1]}"

    def serve_once(self, answer: bytes) -> str:
        """A loopback server that answers every connection with `answer` (then closes); its URL."""

        def serve(listener: socket.socket) -> None:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            with conn:
                conn.recv(65536)
                conn.sendall(answer)

        return self.loopback_server(serve)

    def test_not_http(self) -> None:
        with self.assertRaisesRegex(ProtocolError, "did not answer in HTTP") as caught:
            Client(self.serve_once(b"SSH-2.0-OpenSSH_9.2\r\n")).health()
        self.assertIn("hint:", str(caught.exception))

    def test_http_but_not_json(self) -> None:
        page = b"<html>hello</html>"
        answer = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s" % (len(page), page)
        with self.assertRaisesRegex(ProtocolError, "not JSON"):
            Client(self.serve_once(answer)).health()

    def hang_up_then(self, health: bool) -> str:
        """A loopback server that resets the first connection after 1 KB of it, then answers /healthz (or not)."""

        def serve(listener: socket.socket) -> None:
            try:
                conn, _ = listener.accept()
                conn.recv(1024)
                conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # RST, no answer
                conn.close()
                if health:
                    conn, _ = listener.accept()
                    with conn:
                        conn.recv(65536)
                        body = b'{"status":"ok"}'
                        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s" % (len(body), body))
                else:
                    listener.close()
            except OSError:
                return

        return self.loopback_server(serve)

    def closed_while_sending(self, url: str) -> TodevalError:
        client = Client(url, timeout=10)
        client._limits = {"maxBodyBytes": 1 << 30, "maxItems": 64, "maxCandidates": 16, "maxActions": 32, "maxPairs": 512, "maxPendingPairs": 8192, "timeoutMs": 60000}
        with self.assertRaises(TodevalError) as caught:
            client.rerank(big_item(0, 32 << 20))  # far more than the socket buffers hold: the send fails
        return caught.exception

    def test_closed_while_sending_by_a_server_that_is_up(self) -> None:
        e = self.closed_while_sending(self.hang_up_then(health=True))
        self.assertIsInstance(e, PayloadTooLargeError)
        self.assertIn("closed the connection while the", str(e))
        self.assertNotIn("cannot reach", str(e))

    def test_closed_while_sending_by_a_server_that_is_gone(self) -> None:
        e = self.closed_while_sending(self.hang_up_then(health=False))
        self.assertIsInstance(e, ConnectionFailedError)
        self.assertIn("/healthz does not answer", str(e))

    def test_not_a_url(self) -> None:
        with self.assertRaises(InvalidArgumentError):
            Client("ftp://example.org")


class ConstructorArguments(unittest.TestCase):
    """Client's arguments checked when it is made, one line naming each (they gave raw TypeErrors)."""

    def test_each_argument_is_named(self) -> None:
        cases = [
            (lambda: Client(12345), r"url must be a string, got int 12345"),  # type: ignore[arg-type]
            (lambda: Client(timeout="abc"), r"timeout must be a positive number of seconds, got str 'abc'"),  # type: ignore[arg-type]
            (lambda: Client(timeout=0), r"timeout must be a positive number"),
            (lambda: Client(token=123), r"token must be a string .*got int"),  # type: ignore[arg-type]
            (lambda: Client(retries=-1), r"retries must be a non-negative int"),
            (lambda: Client(max_retry_wait=float("nan")), r"max_retry_wait must be a positive number"),
        ]
        for make, message in cases:
            with self.subTest(message=message), self.assertRaisesRegex(InvalidArgumentError, message) as caught:
                make()
            self.assertEqual(len(str(caught.exception).splitlines()), 1)

    def test_what_json_cannot_carry_is_refused_before_sending(self) -> None:
        # No server at this address: the refusals come before any connection is tried.
        client = Client("http://127.0.0.1:9")
        item = {"id": "a", "utterance": b"Sure, 7 am.", "dataset_id": "1_00000/1"}
        with self.assertRaisesRegex(InvalidArgumentError, r"score: body/items/0/utterance: expected a string, got bytes b'Sure, 7 am.'.*decode"):
            client.score(item)  # type: ignore[arg-type]
        candidate = {"system": "a", "text": "Okay.", "likelihood": float("nan")}
        with self.assertRaisesRegex(InvalidArgumentError, r"rerank: body/items/0/candidates/0/likelihood: nan is not a number JSON can carry"):
            client.rerank({"id": "a", "dataset_id": "1_00000/1", "candidates": [candidate]})
        with self.assertRaisesRegex(InvalidArgumentError, r"nli: body/pairs/0/hypothesis: expected a string, got bytes"):
            client.nli([("a premise", b"a hypothesis")])  # type: ignore[list-item]


class Unreachable(unittest.TestCase):
    def test_refused_connection(self) -> None:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        with self.assertRaisesRegex(ConnectionFailedError, f"cannot reach http://127.0.0.1:{port}"):
            Client(f"http://127.0.0.1:{port}").health()

    def test_timeout(self) -> None:
        # A server that accepts the connection and never answers.
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            s.listen(1)
            with self.assertRaisesRegex(ConnectionFailedError, "timed out"):
                Client(f"http://127.0.0.1:{s.getsockname()[1]}", timeout=0.2).health()


if __name__ == "__main__":
    unittest.main()
