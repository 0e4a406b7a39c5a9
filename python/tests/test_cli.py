"""todeval.cli: which CLI runs, and how its failures reach Python. Uses fake CLIs (small scripts)."""

import os
import shutil
import sys
import tempfile
import unittest
import warnings
from pathlib import Path
from typing import Dict, Optional
from unittest import mock

from support import REPO
from todeval import CliError, CliNotFoundError, CommandUnavailableError, TodevalWarning
from todeval.cli import find_cli, run_json
from todeval.mwzeval import Evaluator


def fake_cli(folder: Path, *, stdout: str = "{}", stderr: str = "", code: int = 0, name: str = "todeval") -> Path:
    """A fake todeval: prints `stdout` and `stderr` and exits with `code`, whatever its arguments."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(
        f"#!{sys.executable}\nimport sys\nsys.stdout.write({stdout!r})\nsys.stderr.write({stderr!r})\nsys.exit({code})\n",
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

    def test_order_argument_env_node_modules_path_checkout(self) -> None:
        project = self.dir / "project"
        local = fake_cli(project / "node_modules" / ".bin")
        on_path = fake_cli(self.dir / "on-path")
        env_bin = fake_cli(self.dir / "env")
        given = fake_cli(self.dir / "given")
        (project / "src" / "deep").mkdir(parents=True)
        os.chdir(project / "src" / "deep")  # node_modules is found from a subfolder too

        os.environ["TODEVAL_BIN"] = str(env_bin)
        self.assertEqual(find_cli(given), [str(given)])
        self.assertEqual(find_cli(["node", "x.js"]), ["node", "x.js"])
        self.assertEqual(find_cli(), [str(env_bin)])
        del os.environ["TODEVAL_BIN"]
        self.assertEqual(Path(find_cli()[0]).resolve(), local.resolve())
        os.chdir(self.dir)
        self.assertEqual(find_cli(), [str(on_path)])
        on_path.unlink()
        # Last: bin/todeval.js of the checkout this package was imported from, under node.
        node = fake_cli(self.dir / "on-path", name="node")
        self.assertEqual(find_cli(), [str(node), str(REPO / "bin" / "todeval.js")])

    def test_js_entry_runs_under_node(self) -> None:
        node = fake_cli(self.dir / "on-path", name="node")
        self.assertEqual(find_cli("/opt/todeval/bin/todeval.js"), [str(node), "/opt/todeval/bin/todeval.js"])
        node.unlink()
        with self.assertRaises(CliNotFoundError):
            find_cli("/opt/todeval/bin/todeval.js")

    def test_a_missing_cli_is_named(self) -> None:
        os.environ["TODEVAL_BIN"] = str(self.dir / "nope" / "todeval")
        with self.assertRaises(CliNotFoundError) as caught:
            run_json(["evaluate"])
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

    def test_temporary_files_are_removed(self) -> None:
        seen: Dict[str, Optional[str]] = {}
        cli = self.fake(stdout='{"bleu": {"mwz21": 1.0}, "success": null, "richness": null, "dst": null}')
        real = run_json

        def spy(args, **kwargs):  # type: ignore[no-untyped-def]
            seen["path"] = args[2]
            self.assertTrue(os.path.isfile(args[2]))
            return real(args, **kwargs)

        with mock.patch("todeval.mwzeval.run_json", spy):
            got = Evaluator(bleu=True, todeval=cli).evaluate({"sng0073": [{"response": "hi"}]})
        self.assertEqual(got["bleu"], {"mwz21": 1.0})
        self.assertFalse(os.path.exists(os.path.dirname(seen["path"] or "")))


if __name__ == "__main__":
    unittest.main()
