"""examples/python/ and the Python blocks of docs/python.md and docs/serve.md, run as users run them."""

import json
import os
import re
import subprocess
import sys
import tempfile
import unittest
from typing import Dict, List

from support import DATA, PREDICTIONS, REPO, SERVER_TOKEN, SERVER_URL, cli_json, needs_data, needs_server


def run_python(path: str, *args: str, env: Dict[str, str] = {}) -> str:
    """`python3 PATH ARGS` from the repo root with the package on PYTHONPATH, as docs/python.md says."""
    run_env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "python"), os.environ.get("PYTHONPATH", "")]), **env}
    done = subprocess.run([sys.executable, path, *args], cwd=REPO, capture_output=True, text=True, env=run_env, stdin=subprocess.DEVNULL)
    if done.returncode != 0:
        raise AssertionError(f"{path} exited {done.returncode}:\n{done.stderr}")
    return done.stdout


def doc_block(doc: str, marker: str, lang: str = "python") -> str:
    """The fenced block right after `<!-- marker -->` in docs/DOC."""
    text = (REPO / "docs" / doc).read_text(encoding="utf-8")
    m = re.search(rf"<!-- {re.escape(marker)} -->\n```{lang}\n(.*?)```", text, re.DOTALL)
    if m is None:
        raise AssertionError(f"docs/{doc} has no {lang} block after <!-- {marker} -->")
    return m.group(1)


def run_block(doc: str, marker: str, env: Dict[str, str] = {}) -> str:
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, f"{marker}.py")
        with open(path, "w", encoding="utf-8") as f:
            f.write(doc_block(doc, marker))
        return run_python(path, env=env)


def json_lines(stdout: str) -> List[dict]:
    return [json.loads(line) for line in stdout.splitlines() if line.strip()]


@needs_data
class EpochLoop(unittest.TestCase):
    def test_reports_what_todeval_evaluate_prints_each_epoch(self) -> None:
        epochs = json_lines(run_python("examples/python/epoch_loop.py", "--epochs", "2", "--data-dir", str(DATA)))
        self.assertEqual([e["epoch"] for e in epochs], [1, 2])
        self.assertEqual([e["stand_in"] for e in epochs], ["augpt", "damd"])  # the systems in name order
        for e in epochs:
            cli = cli_json("evaluate", "-i", str(PREDICTIONS / f"{e['stand_in']}.json"), "--bleu", "--success", "--richness", "--json", "--data-dir", str(DATA))
            self.assertEqual(e["bleu"], cli["bleu"])
            self.assertEqual(e["inform"], cli["success"]["inform"]["total"])
            self.assertEqual(e["success"], cli["success"]["success"]["total"])
            self.assertEqual(e["richness"], {k: v for k, v in cli["richness"].items() if k not in ("num_responses", "num_tokens")})


@needs_data
class PythonDoc(unittest.TestCase):
    def test_the_one_line_switch_prints_what_the_doc_shows(self) -> None:
        out = run_block("python.md", "python-mwzeval", env={"TODEVAL_DATA": str(DATA)})
        self.assertEqual(out, doc_block("python.md", "python-mwzeval-output", "text"))

    def test_the_significance_block_prints_what_the_doc_shows(self) -> None:
        out = run_block("python.md", "python-significance", env={"TODEVAL_DATA": str(DATA)})
        self.assertEqual(out, doc_block("python.md", "python-significance-output", "text"))


@needs_server
class GenerationLoop(unittest.TestCase):
    """Against the main server (the lexical stand-in): the faithful candidate wins over likelier ones."""

    def test_keeps_the_candidate_that_realises_the_action(self) -> None:
        out = json_lines(run_python("examples/python/generation_loop.py", env={"TODEVAL_URL": SERVER_URL or "", "TODEVAL_TOKEN": SERVER_TOKEN or ""}))
        self.assertEqual([r["id"] for r in out], ["turn-0", "turn-1", "turn-2"])
        for r in out:
            self.assertEqual(r["chosen"]["fidelity"], max(r["fidelity"]))
            self.assertEqual(len(r["fidelity"]), 6)  # 3 candidates from each of 2 models
        # Each chosen text confirms the turn's time; a likelier "Okay." lost to it.
        self.assertEqual([r["chosen"]["system"] for r in out], ["model-a/0", "model-a/1", "model-b/0"])
        for r, t in zip(out, ["7 am", "6:30 am", "8:45 am"]):
            self.assertIn(t, r["chosen"]["text"])

    def test_the_serve_doc_client(self) -> None:
        out = json_lines(run_block("serve.md", "python-client", env={"TODEVAL_URL": SERVER_URL or "", "TODEVAL_TOKEN": SERVER_TOKEN or ""}))
        self.assertEqual(len(out), 1)
        self.assertEqual(out[0]["chosen"], "a")
        self.assertEqual(out[0]["fidelity"], [1, 0])


if __name__ == "__main__":
    unittest.main()
