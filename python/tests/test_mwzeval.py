"""todeval.mwzeval.Evaluator: mwzeval's keys and nesting, with the numbers `todeval evaluate` prints."""

import copy
import json
import os
import tempfile
import unittest
import warnings
from concurrent.futures import ThreadPoolExecutor
from unittest import mock

from support import DATA, MODEL, PREDICTIONS, SYSTEMS, cli_json, load_predictions, needs_data, needs_model
from todeval import CliError, TodevalWarning
from todeval.mwzeval import Evaluator

# mwzeval's output, as its README documents it ("Output format"), for the MultiWOZ test set.
MWZEVAL_KEYS = ["bleu", "success", "richness", "dst"]
SUCCESS_KEYS = ["inform", "success"]
TEST_DOMAINS = {"attraction", "hotel", "restaurant", "taxi", "total", "train"}
RICHNESS_KEYS = ["entropy", "cond_entropy", "avg_lengths", "msttr", "num_unigrams", "num_bigrams", "num_trigrams"]
DST_KEYS = ["joint_accuracy", "slot_f1", "slot_precision", "slot_recall"]


@needs_data
class FiveSystems(unittest.TestCase):
    """The five published systems in ../shared: the shim, fed the dict, against the CLI's --json."""

    @classmethod
    def setUpClass(cls) -> None:
        evaluator = Evaluator(bleu=True, success=True, richness=True, dst=True, data_dir=DATA)

        def expected(system: str) -> dict:
            return cli_json("evaluate", "-i", str(PREDICTIONS / f"{system}.json"), "--bleu", "--success", "--richness", "--dst", "--json", "--data-dir", str(DATA))

        def shim(system: str) -> dict:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", TodevalWarning)
                return evaluator.evaluate(load_predictions(system))

        # Two at a time: the CLI runs are independent processes.
        with ThreadPoolExecutor(max_workers=2) as pool:
            cli = {s: pool.submit(expected, s) for s in SYSTEMS}
            got = {s: pool.submit(shim, s) for s in SYSTEMS}
            cls.cli = {s: f.result() for s, f in cli.items()}
            cls.got = {s: f.result() for s, f in got.items()}

    def test_numbers_equal_todeval_evaluate(self) -> None:
        for system in SYSTEMS:
            with self.subTest(system=system):
                got, cli = self.got[system], self.cli[system]
                self.assertEqual(got["bleu"], cli["bleu"])
                for k in SUCCESS_KEYS:
                    self.assertEqual(got["success"][k], cli["success"][k])
                self.assertEqual(got["richness"], {k: cli["richness"][k] for k in RICHNESS_KEYS})
                if cli["dst"] is None:  # hdsa and lava carry no states
                    self.assertIsNone(got["dst"])
                else:
                    self.assertEqual(got["dst"], {k: cli["dst"][k] for k in DST_KEYS})
                # todeval's whole report comes along: optimistic rates, details, signature.
                self.assertEqual(got.report, cli)

    def test_keys_and_nesting_are_mwzevals(self) -> None:
        states = 0
        for system in SYSTEMS:
            with self.subTest(system=system):
                got = self.got[system]
                self.assertEqual(list(got), MWZEVAL_KEYS)
                self.assertEqual(set(got["bleu"]), {"mwz21"})  # the reference set of ../shared's ground truth
                self.assertEqual(list(got["success"]), SUCCESS_KEYS)
                for k in SUCCESS_KEYS:
                    self.assertEqual(set(got["success"][k]), TEST_DOMAINS)
                self.assertEqual(list(got["richness"]), RICHNESS_KEYS)
                for k in ("num_unigrams", "num_bigrams", "num_trigrams"):
                    self.assertIsInstance(got["richness"][k], int)
                if got["dst"] is not None:
                    states += 1
                    self.assertEqual(list(got["dst"]), DST_KEYS)
                json.dumps(got)  # plain JSON, as mwzeval's dict
        self.assertEqual(states, 3)  # damd, augpt and uniconv predict states


class ImportPaths(unittest.TestCase):
    def test_mwzevals_import_path_and_the_short_one_are_the_same_class(self) -> None:
        # mwzeval's users write `from mwzeval.metrics import Evaluator`: one word added is enough.
        from todeval.mwzeval.metrics import Evaluator as FromMetrics
        import todeval.mwzeval.metrics as metrics_module

        self.assertIs(FromMetrics, Evaluator)
        self.assertEqual(metrics_module.Evaluator.__module__, "todeval.mwzeval.metrics")

    def test_flags_must_be_bools(self) -> None:
        # bleu='yes' was taken as on (and bleu='no' too): a flag that is not a bool is refused, named.
        with self.assertRaisesRegex(ValueError, r"^todeval: bleu must be True or False, not 'yes'$"):
            Evaluator(bleu="yes")  # type: ignore[arg-type]
        with self.assertRaisesRegex(ValueError, r"sgsacc must be True or False, not 'no'"):
            Evaluator(sgsacc="no")  # type: ignore[arg-type]

    def test_chrf_word_order_is_checked_and_named(self) -> None:
        with self.assertRaisesRegex(ValueError, r"chrf_word_order must be a non-negative int"):
            Evaluator(bleu=True, chrf=True, chrf_word_order=-1)
        with self.assertRaisesRegex(ValueError, r"chrf_word_order .*give chrf=True"):
            Evaluator(bleu=True, chrf_word_order=2)


@needs_data
class TextMetrics(unittest.TestCase):
    """chrF, chrF++ and TER from the Evaluator: the numbers `todeval evaluate --chrf --ter` prints."""

    def test_chrf_and_ter_equal_the_clis(self) -> None:
        with tempfile.TemporaryDirectory() as d:
            # 60 dialogues keep the four runs short (TER is the slow one).
            path = os.path.join(d, "hdsa-60.json")
            with open(path, "w", encoding="utf-8") as f:
                json.dump(dict(list(load_predictions("hdsa").items())[:60]), f)
            self.check(path)

    def check(self, path: str) -> None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", TodevalWarning)
            got = Evaluator(bleu=True, chrf=True, ter=True, data_dir=DATA).evaluate(path)
            plus = Evaluator(chrf=True, chrf_word_order=2, data_dir=DATA).evaluate(path)
        cli = cli_json("evaluate", "-i", path, "--bleu", "--chrf", "--ter", "--json", "--data-dir", str(DATA))
        cli_plus = cli_json("evaluate", "-i", path, "--chrf", "--chrf-word-order", "2", "--json", "--data-dir", str(DATA))
        self.assertEqual(list(got), MWZEVAL_KEYS + ["chrf", "ter"])
        self.assertEqual((got["bleu"], got["chrf"], got["ter"]), (cli["bleu"], cli["chrf"], cli["ter"]))
        self.assertEqual(plus["chrf"], cli_plus["chrf"])
        self.assertNotEqual(plus["chrf"], got["chrf"])  # chrF++ is not chrF
        self.assertEqual(set(got["chrf"]), {"mwz21"})
        self.assertTrue(0 < got["chrf"]["mwz21"] < 100 and 0 < got["ter"]["mwz21"])
        # Not asked: no key, as for mwzeval's dict.
        self.assertNotIn("chrf", Evaluator(ter=True, data_dir=DATA).evaluate(path))


class ErrorsNameTheArgument(unittest.TestCase):
    def test_no_data_dir_names_data_dir_not_the_clis_flag(self) -> None:
        predictions = {"sng0073": [{"response": "hello"}]}
        with tempfile.TemporaryDirectory() as empty, mock.patch.dict(os.environ, {}, clear=False):
            for name in ("TODEVAL_DATA", "TODEVAL_SHARED"):
                os.environ.pop(name, None)
            cwd = os.getcwd()
            os.chdir(empty)  # no ./data here, nor ../shared/data
            try:
                with self.assertRaises(CliError) as caught:
                    Evaluator(bleu=True, warm=False).evaluate(predictions)
            finally:
                os.chdir(cwd)
        message = str(caught.exception)
        self.assertIn("data_dir", message)
        self.assertNotIn("--data-dir", message)
        self.assertEqual(caught.exception.exit_code, 2)


@needs_data
class OneEvaluator(unittest.TestCase):
    def test_path_input_and_metrics_not_asked_for_are_none(self) -> None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", TodevalWarning)
            got = Evaluator(bleu=True, success=False, richness=False, data_dir=DATA).evaluate(str(PREDICTIONS / "augpt.json"))
        cli = cli_json("evaluate", "-i", str(PREDICTIONS / "augpt.json"), "--bleu", "--json", "--data-dir", str(DATA))
        self.assertEqual(dict(got), {"bleu": cli["bleu"], "success": None, "richness": None, "dst": None})

    def test_no_metric_runs_nothing(self) -> None:
        # As mwzeval: nothing asked, nothing computed (the CLI given does not even exist).
        got = Evaluator(False, False, False, todeval="/nonexistent/todeval").evaluate({})
        self.assertEqual(dict(got), dict.fromkeys(MWZEVAL_KEYS))

    def test_the_dict_is_not_modified(self) -> None:
        predictions = {k: v for k, v in list(load_predictions("damd").items())[:20]}
        before = copy.deepcopy(predictions)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", TodevalWarning)
            Evaluator(bleu=True, success=True, data_dir=DATA).evaluate(predictions)
        self.assertEqual(predictions, before)

    def test_bad_input_raises_the_cli_line_naming_the_argument(self) -> None:
        predictions = load_predictions("damd")
        predictions["sng0073"] = predictions["sng0073"][:1]
        # One Evaluator (one warm process) for the dict and the file: an error leaves it serving (Warm).
        evaluator = Evaluator(bleu=True, data_dir=DATA)
        self.addCleanup(evaluator.close)
        with self.assertRaises(CliError) as caught:
            evaluator.evaluate(predictions)
        e = caught.exception
        self.assertEqual(e.exit_code, 2)
        self.assertRegex(str(e), r"^todeval: predictions: sng0073: expected \d+ system turns, got 1$")
        self.assertNotIn(tempfile.gettempdir(), e.stderr)
        # A file keeps its own name in the message.
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "mine.json")
            with open(path, "w", encoding="utf-8") as f:
                json.dump(predictions, f)
            with self.assertRaises(CliError) as caught:
                evaluator.evaluate(path)
            self.assertTrue(str(caught.exception).startswith(f"todeval: {path}: sng0073: "))

    def test_cli_warnings_become_python_warnings(self) -> None:
        predictions = {"pmul0095": load_predictions("damd")["pmul0095"]}
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            Evaluator(success=True, data_dir=DATA).evaluate(predictions)
        lines = [str(w.message) for w in seen if issubclass(w.category, TodevalWarning)]
        self.assertTrue(any(line.startswith("todeval: warning: predictions: ") and "state slot" in line for line in lines), lines)

    def test_wrong_argument_types(self) -> None:
        with self.assertRaises(TypeError):
            Evaluator(bleu=True).evaluate([("sng0073", [])])  # type: ignore[arg-type]
        with self.assertRaises(ValueError):
            Evaluator(bleu=True, enable_normalization=False)
        with self.assertRaises(ValueError):
            Evaluator(bleu=True, model="x")  # a model is for sgsacc=True


@needs_data
@needs_model
class SgsaccExtra(unittest.TestCase):
    def test_sgsacc_section_equals_the_clis(self) -> None:
        damd = load_predictions("damd")
        convlab = json.loads((DATA / "multiwoz" / "convlab_mwz21_test.json").read_text(encoding="utf-8"))
        gold = [t["text"] for t in convlab["SNG0580"]["log"][1::2]]
        # Lexicalized text under `utterance` (scored), the delexicalized response kept for BLEU.
        predictions = {"sng0580": [{**t, "utterance": text} for t, text in zip(damd["sng0580"], gold)]}
        got = Evaluator(bleu=True, sgsacc=True, model=MODEL, device="cpu", data_dir=DATA).evaluate(predictions)
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "p.json")
            with open(path, "w", encoding="utf-8") as f:
                json.dump(predictions, f)
            cli = cli_json("evaluate", "-i", path, "--bleu", "--sgsacc", "--model", MODEL, "--device", "cpu", "--json", "--data-dir", str(DATA))
        self.assertEqual(list(got), MWZEVAL_KEYS + ["sgsacc"])
        self.assertEqual(got["sgsacc"], cli["sgsacc"])
        self.assertEqual(got["sgsacc"]["counts"]["lexicalizedTurns"], len(gold))
        self.assertEqual(got["bleu"], cli["bleu"])
        self.assertEqual(got.signature["model"], cli["signature"]["model"])


@needs_data
class SignificanceExtras(unittest.TestCase):
    """confidence=True and compare(): what `todeval evaluate --confidence` and `todeval compare` print."""

    def test_confidence(self) -> None:
        damd = str(PREDICTIONS / "damd.json")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", TodevalWarning)
            got = Evaluator(bleu=True, success=True, confidence=True, data_dir=DATA).evaluate(damd)
        cli = cli_json("evaluate", "-i", damd, "--bleu", "--success", "--confidence", "--json", "--data-dir", str(DATA))
        self.assertEqual(got.report, cli)  # the default seed makes the intervals reproducible
        self.assertIsNotNone(got["confidence"], f"`evaluate --confidence --json` has no `confidence` key (keys: {sorted(cli)}): map its section in todeval/mwzeval/metrics.py")
        self.assertEqual(got["confidence"], cli["confidence"])

    def test_compare(self) -> None:
        damd, augpt = str(PREDICTIONS / "damd.json"), str(PREDICTIONS / "augpt.json")
        # DAMD lacks a dialogue AuGPT has: a paired test needs the same dialogues, so the common ones.
        # One Evaluator (one warm process) for both calls: the second is answered as a fresh one would (Warm).
        evaluator = Evaluator(data_dir=DATA)
        self.addCleanup(evaluator.close)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", TodevalWarning)
            got = evaluator.compare(damd, augpt, "--common-items")
        self.assertEqual(got, cli_json("compare", damd, augpt, "--common-items", "--json", "--data-dir", str(DATA)))
        # A predictions dict compares as its file does, apart from the name it gets (its argument's).
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", TodevalWarning)
            from_dict = evaluator.compare(load_predictions("damd"), augpt, "--common-items")
        self.assertEqual([c["systems"][1]["pValue"] for c in from_dict["comparisons"]], [c["systems"][1]["pValue"] for c in got["comparisons"]])



@needs_data
class Warm(unittest.TestCase):
    """One todeval process for the Evaluator's lifetime: every call answered by it, as a one-shot run answers."""

    def test_one_process_serves_every_call_with_the_one_shot_results(self) -> None:
        damd = str(PREDICTIONS / "damd.json")
        metrics = dict(bleu=True, success=True, richness=True, dst=True, data_dir=DATA)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", TodevalWarning)
            one_shot = Evaluator(**metrics, warm=False).evaluate(damd)
            bad = {"sng0073": [{"response": "hi"}]}
            with self.assertRaises(CliError) as one_shot_error:
                Evaluator(**metrics, warm=False).evaluate(bad)
            with Evaluator(**metrics) as e:
                first = e.evaluate(damd)
                assert e._warm is not None and e._warm._proc is not None
                proc = e._warm._proc
                second = e.evaluate(load_predictions("damd"))  # a dict, through a temporary file
                with self.assertRaises(CliError) as warm_error:  # an error leaves the process serving
                    e.evaluate(bad)
                third = e.evaluate(damd)
                self.assertIs(e._warm._proc, proc)
                self.assertIsNone(proc.poll())
            self.assertIsNotNone(proc.poll())  # the with block ended it
        for got in (first, second, third):
            self.assertEqual(got, one_shot)
            self.assertEqual(got.report, one_shot.report)
        self.assertEqual(str(warm_error.exception), str(one_shot_error.exception))
        self.assertEqual(warm_error.exception.exit_code, one_shot_error.exception.exit_code)

    def test_close_then_evaluate_starts_another(self) -> None:
        e = Evaluator(bleu=True, data_dir=DATA)
        self.addCleanup(e.close)
        one = {k: v for k, v in list(load_predictions("damd").items())[:1]}
        a = e.evaluate(one)
        assert e._warm is not None and e._warm._proc is not None
        first = e._warm._proc
        e.close()
        self.assertIsNotNone(first.poll())
        self.assertEqual(e.evaluate(one), a)
        assert e._warm is not None and e._warm._proc is not None
        self.assertIsNot(e._warm._proc, first)


if __name__ == "__main__":
    unittest.main()
