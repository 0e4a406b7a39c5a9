"""todeval.client.Client against live `todeval serve` processes on loopback (started by npm test)."""

import re
import socket
import threading
import time
import unittest
import urllib.request
import uuid
from typing import Any, Dict, List, Optional

from support import OVERLOAD_PENDING, OVERLOAD_URL, SERVER_TOKEN, SERVER_URL, needs_server
from todeval import BadRequestError, ConnectionFailedError, OverloadedError, UnauthorizedError
from todeval.client import Client

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
