"""todeval.cli: which CLI runs, and how its failures reach Python. Uses fake CLIs (small scripts)."""

import json
import os
import shutil
import signal
import sys
import tempfile
import unittest
import warnings
from pathlib import Path
from typing import Dict, Optional
from unittest import mock

from support import REPO
from todeval import CliError, CliNotFoundError, CommandUnavailableError, TodevalError, TodevalWarning
from todeval.cli import WarmCli, bundled_cli, find_cli, run_json
from todeval.errors import InvalidArgumentError
from todeval.mwzeval import Evaluator


def fake_cli(folder: Path, *, stdout: str = "{}", stderr: str = "", code: int = 0, name: str = "todeval") -> Path:
    """
    A fake todeval: prints `stdout` and `stderr` and exits with `code`, whatever its arguments, but
    has no `todeval stdio` (as an older CLI, commander's error), so a warm Evaluator runs it per call.
    """
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(
        f"#!{sys.executable}\nimport sys\n"
        "if sys.argv[1:2] == ['stdio']:\n    sys.stderr.write(\"error: unknown command 'stdio'\\n\")\n    sys.exit(1)\n"
        f"sys.stdout.write({stdout!r})\nsys.stderr.write({stderr!r})\nsys.exit({code})\n",
        encoding="utf-8",
    )
    path.chmod(0o755)
    return path


@unittest.skipIf(sys.platform == "win32", "the fake CLIs are POSIX scripts")
class FindCli(unittest.TestCase):
    def setUp(self) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="todeval-py-test-"))
        self.addCleanup(shutil.rmtree, self.dir, True)
        cwd = os.getcwd()
        self.addCleanup(os.chdir, cwd)
        self.env = mock.patch.dict(os.environ, {"PATH": str(self.dir / "on-path")})
        self.env.start()
        self.addCleanup(self.env.stop)
        os.environ.pop("TODEVAL_BIN", None)

    def test_order_argument_bundled_path_env(self) -> None:
        project = self.dir / "project"
        local = fake_cli(project / "node_modules" / ".bin")
        on_path = fake_cli(self.dir / "on-path")
        env_bin = fake_cli(self.dir / "env")
        given = fake_cli(self.dir / "given")
        node = fake_cli(self.dir / "on-path", name="node")
        (project / "src" / "deep").mkdir(parents=True)
        os.chdir(project / "src" / "deep")  # node_modules is found from a subfolder too
        os.environ["TODEVAL_BIN"] = str(env_bin)

        # 0. The argument, whatever else there is.
        self.assertEqual(find_cli(given), [str(given)])
        self.assertEqual(find_cli(["node", "x.js"]), ["node", "x.js"])
        # 1. The CLI the package came with: this checkout's bin/todeval.js (it has node_modules), under node.
        self.assertEqual(bundled_cli(), REPO / "bin" / "todeval.js")
        self.assertEqual(find_cli(), [str(node), str(REPO / "bin" / "todeval.js")])
        with mock.patch("todeval.cli.bundled_cli", return_value=None):
            # 2. `todeval` on PATH, a project's node_modules/.bin first (as npx runs it).
            self.assertEqual(Path(find_cli()[0]).resolve(), local.resolve())
            os.chdir(self.dir)
            self.assertEqual(find_cli(), [str(on_path)])
            on_path.unlink()
            # 3. TODEVAL_BIN.
            self.assertEqual(find_cli(), [str(env_bin)])
            del os.environ["TODEVAL_BIN"]
            with self.assertRaises(CliNotFoundError) as caught:
                find_cli()
        message = str(caught.exception)
        for way in ("not beside this package", "`todeval` on PATH", "TODEVAL_BIN", "pip install ./python"):
            self.assertIn(way, message)

    def test_todeval_bin_a_folder(self) -> None:
        node = fake_cli(self.dir / "on-path", name="node")
        with mock.patch("todeval.cli.bundled_cli", return_value=None):
            os.environ["TODEVAL_BIN"] = str(REPO)  # a todeval folder: its bin/todeval.js
            self.assertEqual(find_cli(), [str(node), str(REPO / "bin" / "todeval.js")])
            os.environ["TODEVAL_BIN"] = str(self.dir)
            with self.assertRaisesRegex(CliNotFoundError, "is a directory, not the todeval CLI"):
                find_cli()

    def test_js_entry_runs_under_node(self) -> None:
        node = fake_cli(self.dir / "on-path", name="node")
        self.assertEqual(find_cli("/opt/todeval/bin/todeval.js"), [str(node), "/opt/todeval/bin/todeval.js"])
        node.unlink()
        with self.assertRaises(CliNotFoundError):
            find_cli("/opt/todeval/bin/todeval.js")

    def test_a_missing_cli_is_named(self) -> None:
        with self.assertRaises(CliNotFoundError) as caught:
            run_json(["evaluate"], todeval=self.dir / "nope" / "todeval")
        self.assertIn(str(self.dir / "nope" / "todeval"), str(caught.exception))
        self.assertIsInstance(caught.exception, FileNotFoundError)


@unittest.skipIf(sys.platform == "win32", "the fake CLIs are POSIX scripts")
class Failures(unittest.TestCase):
    def setUp(self) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="todeval-py-test-"))
        self.addCleanup(shutil.rmtree, self.dir, True)

    def fake(self, **kwargs: object) -> str:
        return str(fake_cli(self.dir / str(len(os.listdir(self.dir))), **kwargs))  # type: ignore[arg-type]

    def test_the_one_line_error_and_the_warnings(self) -> None:
        cli = self.fake(stderr="todeval: warning: a thing\ntodeval: /tmp/x/predictions.json: sng0073: expected 4 system turns, got 1\n", code=2, stdout="")
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            with self.assertRaises(CliError) as caught:
                run_json(["evaluate"], todeval=cli, rename={"/tmp/x/predictions.json": "predictions"})
        self.assertEqual(str(caught.exception), "todeval: predictions: sng0073: expected 4 system turns, got 1")
        self.assertEqual(caught.exception.exit_code, 2)
        self.assertEqual([str(w.message) for w in seen if w.category is TodevalWarning], ["todeval: warning: a thing"])

    def test_commander_errors_are_prefixed(self) -> None:
        cli = self.fake(stderr="error: option '--ground-truth <source>' argument 'x' is invalid\n(run with --help for usage)\n", code=1, stdout="")
        with self.assertRaises(CliError) as caught:
            run_json(["evaluate"], todeval=cli)
        self.assertEqual(str(caught.exception), "todeval evaluate: error: option '--ground-truth <source>' argument 'x' is invalid")

    def test_no_json(self) -> None:
        with self.assertRaisesRegex(CliError, "printed no JSON"):
            run_json(["evaluate"], todeval=self.fake(stdout="BLEU 12"))

    def test_an_older_cli_without_confidence_or_compare(self) -> None:
        # What a todeval without these prints (commander's own messages).
        no_option = self.fake(stderr="error: unknown option '--confidence'\n(run with --help for usage)\n", code=1, stdout="")
        with self.assertRaises(CommandUnavailableError) as caught:
            Evaluator(bleu=True, confidence=True, todeval=no_option).evaluate({"sng0073": []})
        self.assertIn("has no `--confidence`", str(caught.exception))
        no_command = self.fake(stderr="error: unknown command 'compare'\n(run with --help for usage)\n", code=1, stdout="")
        with self.assertRaises(CommandUnavailableError) as caught:
            Evaluator(bleu=True, todeval=no_command).compare({"sng0073": []}, {"sng0073": []})
        self.assertIn("has no `compare`", str(caught.exception))
        self.assertIn("todeval compare", str(caught.exception))

    def test_a_node_crash_names_the_error_not_the_footer(self) -> None:
        crash = (
            "file:///opt/todeval/dist/src/cli/main.js:12\n  throw new TypeError('x is not a function');\n  ^\n\n"
            "TypeError: x is not a function\n    at main (file:///opt/todeval/dist/src/cli/main.js:12:9)\n\nNode.js v20.20.2\n"
        )
        with self.assertRaises(CliError) as caught:
            run_json(["evaluate"], todeval=self.fake(stderr=crash, code=1, stdout=""))
        self.assertEqual(caught.exception.line, "todeval evaluate: TypeError: x is not a function")
        self.assertIn("crashed", caught.exception.hint or "")

    def test_killed_by_a_signal(self) -> None:
        path = self.dir / "killed"
        path.write_text(f"#!{sys.executable}\nimport os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n", encoding="utf-8")
        path.chmod(0o755)
        with self.assertRaisesRegex(CliError, "todeval evaluate: killed by SIGKILL") as caught:
            run_json(["evaluate"], todeval=path)
        self.assertIn("out of memory", caught.exception.hint or "")

    def test_not_executable(self) -> None:
        path = self.dir / "plain"
        path.write_text("not a program", encoding="utf-8")
        with self.assertRaisesRegex(CliNotFoundError, "cannot run .*plain: Permission denied"):
            run_json(["evaluate"], todeval=path)

    def test_skip_invalid_warns_with_the_count_and_the_first_reason(self) -> None:
        lines = "".join(f"todeval: warning: skipped invalid input: predictions: d{i}: expected 4 system turns, got 1\n" for i in range(3))
        cli = self.fake(stdout='{"bleu": {"mwz21": 1.0}, "success": null, "richness": null, "dst": null}', stderr=lines + "todeval: warning: another\n")
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            Evaluator(bleu=True, skip_invalid=True, todeval=cli).evaluate({"sng0073": [{"response": "hi"}]})
        self.assertEqual(
            [str(w.message) for w in seen if w.category is TodevalWarning],
            ["todeval: warning: skip_invalid left out 3 invalid dialogues (the first: input: predictions: d0: expected 4 system turns, got 1)", "todeval: warning: another"],
        )

    def test_predictions_as_json_text_or_a_missing_file(self) -> None:
        cli = self.fake()
        text = json.dumps({"sng0073": [{"response": "hi"}] * 5000})
        with self.assertRaises(InvalidArgumentError) as caught:
            Evaluator(bleu=True, todeval=cli).evaluate(text)
        self.assertIn("json.loads", str(caught.exception))
        self.assertLess(len(str(caught.exception)), 300)  # not the whole JSON
        with self.assertRaisesRegex(InvalidArgumentError, "no such file: .*nope.json"):
            Evaluator(bleu=True, todeval=cli).evaluate(str(self.dir / "nope.json"))
        with self.assertRaises(TodevalError):
            Evaluator(bleu=True, todeval=cli).evaluate(42)  # type: ignore[arg-type]

    def test_extra_args_as_one_string(self) -> None:
        self.assertEqual(Evaluator(bleu=True, extra_args="--strict --limit 10").extra_args, ["--strict", "--limit", "10"])
        self.assertEqual(Evaluator(bleu=True, extra_args=["--strict"]).extra_args, ["--strict"])
        self.assertIn("timeout", Evaluator.__doc__ or "")

    def test_a_cli_without_stdio_is_run_once_per_call(self) -> None:
        # An older todeval: `todeval stdio` is an unknown command; the warm Evaluator falls back.
        path = self.dir / "old"
        path.write_text(
            f"#!{sys.executable}\nimport sys\n"
            "if sys.argv[1] == 'stdio':\n    sys.stderr.write(\"error: unknown command 'stdio'\\n\")\n    sys.exit(1)\n"
            "sys.stdout.write('{\"bleu\": {\"mwz21\": 2.0}, \"success\": null, \"richness\": null, \"dst\": null}')\n",
            encoding="utf-8",
        )
        path.chmod(0o755)
        with Evaluator(bleu=True, todeval=path) as e:
            self.assertEqual(e.evaluate({"sng0073": []})["bleu"], {"mwz21": 2.0})
            self.assertEqual(e.evaluate({"sng0073": []})["bleu"], {"mwz21": 2.0})
            assert e._warm is not None
            self.assertFalse(e._warm.supported)

    def test_a_warm_process_that_dies_is_named_and_replaced(self) -> None:
        # A stdio CLI that answers once, then crashes the way Node does.
        path = self.dir / "crashy"
        marker = self.dir / "crashed"
        answer = {"id": 1, "code": 0, "stdout": '{"bleu": {"mwz21": 3.0}, "success": null, "richness": null, "dst": null}', "stderr": ""}
        path.write_text(
            f"#!{sys.executable}\nimport json, os, sys\n"
            "for n, line in enumerate(sys.stdin):\n"
            f"    if n == 1 and not os.path.exists({str(marker)!r}):\n"
            f"        open({str(marker)!r}, 'w').close()\n"
            "        sys.stderr.write('TypeError: boom\\n    at x (y.js:1:1)\\n\\nNode.js v20.20.2\\n')\n        sys.exit(1)\n"
            f"    a = {answer!r}\n    a['id'] = json.loads(line)['id']\n    print(json.dumps(a), flush=True)\n",
            encoding="utf-8",
        )
        path.chmod(0o755)
        with Evaluator(bleu=True, todeval=path) as e:
            self.assertEqual(e.evaluate({"sng0073": []})["bleu"], {"mwz21": 3.0})
            with self.assertRaises(CliError) as caught:
                e.evaluate({"sng0073": []})
            self.assertEqual(caught.exception.line, "todeval evaluate: TypeError: boom")
            self.assertEqual(e.evaluate({"sng0073": []})["bleu"], {"mwz21": 3.0})  # a new process

    def test_a_warm_process_killed_before_its_first_answer_is_an_error_not_an_old_cli(self) -> None:
        # A fake stdio CLI killed (as by the OOM killer) on its first request; each start is counted.
        path = self.dir / "oom"
        starts = self.dir / "starts"
        path.write_text(
            f"#!{sys.executable}\nimport os, signal, sys\n"
            f"with open({str(starts)!r}, 'a') as f:\n    f.write(' '.join(sys.argv[1:2]) + '\\n')\n"
            "if sys.argv[1:2] == ['stdio']:\n    sys.stdin.readline()\n    os.kill(os.getpid(), signal.SIGKILL)\n"
            "sys.stdout.write('{\"bleu\": {\"mwz21\": 4.0}, \"success\": null, \"richness\": null, \"dst\": null}')\n",
            encoding="utf-8",
        )
        path.chmod(0o755)
        with Evaluator(bleu=True, todeval=path) as e:
            with self.assertRaisesRegex(CliError, "killed by SIGKILL"):
                e.evaluate({"sng0073": []})
            assert e._warm is not None
            self.assertTrue(e._warm.supported)  # still warm: the next call starts a new process
        # The request ran once, in the warm process: not again as a one-shot run.
        self.assertEqual(starts.read_text(encoding="utf-8").splitlines(), ["stdio"])

    def test_the_cli_gets_no_slurm_array_variables(self) -> None:
        # Fakes that report their environment: one-shot (prints it) and stdio (answers with it).
        one_shot = self.dir / "env-once"
        one_shot.write_text(f"#!{sys.executable}\nimport json, os, sys\nsys.stdout.write(json.dumps(dict(os.environ)))\n", encoding="utf-8")
        one_shot.chmod(0o755)
        warm_cli = self.dir / "env-warm"
        warm_cli.write_text(
            f"#!{sys.executable}\nimport json, os, sys\n"
            "for line in sys.stdin:\n"
            "    print(json.dumps({'id': json.loads(line)['id'], 'code': 0, 'stdout': json.dumps(dict(os.environ)), 'stderr': ''}), flush=True)\n",
            encoding="utf-8",
        )
        warm_cli.chmod(0o755)
        array = {"SLURM_ARRAY_TASK_ID": "0", "SLURM_ARRAY_TASK_COUNT": "8", "SLURM_ARRAY_TASK_MIN": "0", "SLURM_ARRAY_JOB_ID": "41", "SLURM_JOB_ID": "42"}
        with mock.patch.dict(os.environ, array):
            seen_once = run_json(["evaluate"], todeval=one_shot)
            warm = WarmCli([str(warm_cli)])
            self.addCleanup(warm.close)
            code, stdout, _ = warm.run(["evaluate"])
        seen_warm = json.loads(stdout)
        self.assertEqual(code, 0)
        for seen in (seen_once, seen_warm):
            # A sweep's array task is not a shard of the Evaluator's run: no shard for the CLI to take.
            self.assertEqual([k for k in seen if k.startswith("SLURM_ARRAY_")], [])
            self.assertEqual(seen.get("SLURM_JOB_ID"), "42")  # the rest passes through

    def test_a_warm_process_follows_the_callers_folder_and_environment(self) -> None:
        # A fake stdio CLI that answers with its own working folder and one variable, as it started.
        path = self.dir / "where"
        path.write_text(
            f"#!{sys.executable}\nimport json, os, sys\n"
            "for line in sys.stdin:\n"
            "    seen = json.dumps([os.getcwd(), os.environ.get('TODEVAL_FAKE_SETTING')])\n"
            "    print(json.dumps({'id': json.loads(line)['id'], 'code': 0, 'stdout': seen, 'stderr': ''}), flush=True)\n",
            encoding="utf-8",
        )
        path.chmod(0o755)
        self.addCleanup(os.chdir, os.getcwd())
        (self.dir / "a").mkdir()
        (self.dir / "b").mkdir()
        warm = WarmCli([str(path)])
        self.addCleanup(warm.close)

        def seen() -> object:
            code, stdout, _ = warm.run(["evaluate"])
            self.assertEqual(code, 0)
            return json.loads(stdout)

        with mock.patch.dict(os.environ, {"TODEVAL_FAKE_SETTING": "one"}):
            os.chdir(self.dir / "a")
            self.assertEqual(seen(), [os.getcwd(), "one"])
            proc = warm._proc
            self.assertEqual(seen(), [os.getcwd(), "one"])
            self.assertIs(warm._proc, proc)  # nothing changed: the same process
            # As one CLI run per call would: relative paths and settings of the folder and environment of now.
            os.chdir(self.dir / "b")
            self.assertEqual(seen(), [os.getcwd(), "one"])
            os.environ["TODEVAL_FAKE_SETTING"] = "two"
            self.assertEqual(seen(), [os.getcwd(), "two"])

    def test_an_interrupted_call_does_not_shift_the_answers(self) -> None:
        # A fake stdio CLI that signals this process when it has read its first request (as a
        # SIGALRM timeout or Ctrl-C would arrive mid-call), then answers each request with its id.
        path = self.dir / "slow"
        marker = self.dir / "signalled"
        path.write_text(
            f"#!{sys.executable}\nimport json, os, signal, sys, time\n"
            "for line in sys.stdin:\n"
            "    request = json.loads(line)\n"
            f"    if not os.path.exists({str(marker)!r}):\n"
            f"        open({str(marker)!r}, 'w').close()\n"
            "        os.kill(os.getppid(), signal.SIGUSR1)\n"
            "    time.sleep(0.5)\n"
            "    print(json.dumps({'id': request['id'], 'code': 0, 'stdout': 'answer to %s' % request['id'], 'stderr': ''}), flush=True)\n",
            encoding="utf-8",
        )
        path.chmod(0o755)

        class Interrupted(Exception):
            pass

        def interrupt(signum: int, frame: object) -> None:
            raise Interrupted()

        previous = signal.signal(signal.SIGUSR1, interrupt)
        self.addCleanup(signal.signal, signal.SIGUSR1, previous)
        warm = WarmCli([str(path)])
        self.addCleanup(warm.close)
        with self.assertRaises(Interrupted):
            warm.run(["evaluate"])
        # The first request's late answer must not be taken for the second's.
        self.assertEqual(warm.run(["evaluate"]), (0, "answer to 2", ""))
        self.assertEqual(warm.run(["evaluate"]), (0, "answer to 3", ""))

    def test_temporary_files_are_removed(self) -> None:
        seen: Dict[str, Optional[str]] = {}
        cli = self.fake(stdout='{"bleu": {"mwz21": 1.0}, "success": null, "richness": null, "dst": null}')
        real = run_json

        def spy(args, **kwargs):  # type: ignore[no-untyped-def]
            seen["path"] = args[2]
            self.assertTrue(os.path.isfile(args[2]))
            return real(args, **kwargs)

        with mock.patch("todeval.mwzeval.metrics.run_json", spy):
            got = Evaluator(bleu=True, todeval=cli).evaluate({"sng0073": [{"response": "hi"}]})
        self.assertEqual(got["bleu"], {"mwz21": 1.0})
        self.assertFalse(os.path.exists(os.path.dirname(seen["path"] or "")))


if __name__ == "__main__":
    unittest.main()
