"""mwzeval's Evaluator, computed by todeval: switching is one import.

    from mwzeval.metrics import Evaluator            # before
    from todeval.mwzeval.metrics import Evaluator    # after (or: from todeval.mwzeval import Evaluator)

`Evaluator(bleu, success, richness, dst).evaluate(predictions)` returns mwzeval's dict: the keys
`bleu`, `success` (`inform` and `success`, per domain and `total`), `richness` and `dst`, None for a
metric not asked for; with `chrf=True` / `ter=True` also `chrf` and `ter` (sacreBLEU's chrF/chrF++
and TER of the strings BLEU scores, keyed by reference set as `bleu` is). The numbers are those `todeval evaluate --json` prints for the same input;
todeval's whole report (optimistic rates, details, signature) is on the result's `.report`.
"""

import json
import os
import shlex
import shutil
import tempfile
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Union

from ..cli import Command, WarmCli, find_cli, json_result, run_json
from ..errors import CliError, InvalidArgumentError

#: Keys of mwzeval's results, and of each section, as its README documents them.
RESULT_KEYS = ("bleu", "success", "richness", "dst")
SUCCESS_KEYS = ("inform", "success")
RICHNESS_KEYS = ("entropy", "cond_entropy", "avg_lengths", "msttr", "num_unigrams", "num_bigrams", "num_trigrams")
DST_KEYS = ("joint_accuracy", "slot_f1", "slot_precision", "slot_recall")
#: todeval's text metrics beyond mwzeval's BLEU, present in the result when asked for.
TEXT_METRIC_KEYS = ("chrf", "ter")

# The CLI's flags as the Evaluator's arguments, so that a CLI message names what a Python user typed.
_ARGUMENT_OF_FLAG = {
    "--data-dir": "data_dir",
    "--ground-truth": "ground_truth",
    "--chrf-word-order": "chrf_word_order",
    "--domains-from-slots": "domains_from_slots",
    "--skip-invalid": "skip_invalid",
}

_CONFIDENCE_PROVIDER = "confidence intervals need a todeval CLI that has `evaluate --confidence`: update todeval"
_COMPARE_PROVIDER = "paired significance tests need a todeval CLI that has `todeval compare`: update todeval"

Predictions = Union[Mapping[str, Any], str, "os.PathLike[str]"]


class Evaluation(Dict[str, Any]):
    """
    mwzeval's result dict (bleu, success, richness, dst; plus `sgsacc` and the confidence section
    when asked for). `report` is todeval's full JSON report for the same run.
    """

    def __init__(self, results: Dict[str, Any], report: Dict[str, Any]):
        super().__init__(results)
        self.report = report

    @property
    def signature(self) -> Dict[str, Any]:
        """The configuration the numbers hold for (tool version, data source, BLEU settings, ...)."""
        signature: Dict[str, Any] = self.report.get("signature", {})
        return signature


def _pick(section: Optional[Mapping[str, Any]], keys: Iterable[str]) -> Optional[Dict[str, Any]]:
    """The keys of `section` among `keys`, in that order; None for no section."""
    return None if section is None else {k: section[k] for k in keys if k in section}


def mwzeval_view(report: Mapping[str, Any], *, bleu: bool = True, success: bool = True, richness: bool = True, dst: bool = True) -> Dict[str, Any]:
    """
    mwzeval's keys and nesting from a `todeval evaluate --json` report: todeval's extra keys
    (optimistic rates, state/domain sources, num_responses, num_tokens) are left out, and a metric
    not asked for is None, as mwzeval returns it.
    """
    s = report.get("success")
    return {
        "bleu": dict(report["bleu"]) if bleu and report.get("bleu") is not None else None,
        "success": {k: dict(s[k]) for k in SUCCESS_KEYS} if success and s is not None else None,
        "richness": _pick(report.get("richness"), RICHNESS_KEYS) if richness else None,
        "dst": _pick(report.get("dst"), DST_KEYS) if dst else None,
    }


def _predictions_path(predictions: Union[str, "os.PathLike[str]"], name: str) -> str:
    """A path argument, checked: a JSON text passed where a path goes is named as such, not opened."""
    path = os.fspath(predictions)
    if isinstance(predictions, str) and path.lstrip()[:1] in ("{", "["):
        raise InvalidArgumentError(
            f"{name}: a str is read as the path of a JSON file, and this one is JSON text ({len(path):,} characters starting {path[:24]!r})",
            hint="pass json.loads(text) (a dict), or the file's path",
        )
    if not os.path.isfile(path):
        shown = path if len(path) <= 200 else path[:200] + "..."
        raise InvalidArgumentError(f"{name}: no such file: {shown}" if not os.path.isdir(path) else f"{name}: {shown} is a directory, not a predictions file")
    return os.path.abspath(path)  # the warm process keeps the working directory it started in


class _InputFile:
    """A predictions dict written to a temporary JSON file for the CLI (removed on exit), or a path."""

    def __init__(self, predictions: Predictions, name: str):
        self.name = name
        self.dir: Optional[str] = None
        self.given = name
        if isinstance(predictions, (str, os.PathLike)):
            self.path = _predictions_path(predictions, name)
            self.given = os.fspath(predictions)
        elif isinstance(predictions, Mapping):
            self.dir = tempfile.mkdtemp(prefix="todeval-py-")
            self.path = os.path.join(self.dir, f"{name}.json")
            try:
                with open(self.path, "w", encoding="utf-8") as f:
                    json.dump(predictions, f)
            except BaseException:
                shutil.rmtree(self.dir, ignore_errors=True)
                raise
        else:
            raise InvalidArgumentError(f"{name}: expected a dict of dialogue id -> turns, or a path to a JSON file; got {type(predictions).__name__}")

    def __enter__(self) -> "_InputFile":
        return self

    def __exit__(self, *exc: Any) -> None:
        if self.dir is not None:
            shutil.rmtree(self.dir, ignore_errors=True)

    @property
    def rename(self) -> Dict[str, str]:
        """Messages name a dict by the argument it came from, not by its temporary file."""
        if self.dir is not None:
            return {self.path: self.name}
        # A relative path was made absolute for the CLI: messages name it as it was given.
        return {self.path: self.given} if self.given != self.path else {}


class Evaluator:
    """
    mwzeval's Evaluator over todeval. The first four arguments are mwzeval's; the rest are todeval's
    (keyword only):

    - sgsacc: also SGSAcc and SER for turns with lexicalized text (`utterance`, or a response
      without placeholders), under the result's `sgsacc` key; `model`, `device`, `dtype` choose
      the NLI model as the CLI's flags do.
    - chrf, ter: sacreBLEU's chrF (chrF++ with chrf_word_order=2) and TER of the strings BLEU
      scores, under the result's `chrf` and `ter` keys: `todeval evaluate --chrf --ter`'s numbers.
    - confidence: confidence intervals as `todeval evaluate --confidence --json` reports them.
    - data_dir, ground_truth ("auto", "mwz21", "mwz22"), domains_from_slots, strict, skip_invalid:
      the `todeval evaluate` flags of the same names.
    - todeval: the CLI to run (a path, a todeval folder, or an argv list); default: the CLI the
      package came with, then `todeval` on PATH, then $TODEVAL_BIN (docs/python.md).
    - timeout: seconds one CLI run may take (None: no limit); past it, CliError.
    - warm: keep one todeval process for the object's lifetime (default True): the first
      `evaluate()` starts it, later calls reuse it, so one dialogue is answered in a fraction of a
      second instead of a Node start. The results are those of a one-shot CLI run. Use the
      Evaluator as a context manager or call `close()` to end the process sooner; it also ends
      when the object is collected or Python exits. warm=False runs the CLI once per call.
    - extra_args: more `todeval evaluate` flags: a list (["--limit", "10"]) or one string, split as
      a shell would ("--limit 10").
    """

    def __init__(
        self,
        bleu: bool = False,
        success: bool = False,
        richness: bool = False,
        dst: bool = False,
        enable_normalization: bool = True,
        *,
        chrf: bool = False,
        ter: bool = False,
        chrf_word_order: Optional[int] = None,
        sgsacc: bool = False,
        model: Optional[str] = None,
        device: Optional[str] = None,
        dtype: Optional[str] = None,
        confidence: bool = False,
        data_dir: Optional[Union[str, "os.PathLike[str]"]] = None,
        ground_truth: Optional[str] = None,
        domains_from_slots: bool = False,
        strict: bool = False,
        skip_invalid: bool = False,
        todeval: Optional[Command] = None,
        timeout: Optional[float] = None,
        extra_args: Union[str, Sequence[str]] = (),
        warm: bool = True,
    ):
        # Flags are bools: bleu='yes' (or 'no', which bool() made True) is refused, not taken as on.
        flags = {"bleu": bleu, "success": success, "richness": richness, "dst": dst, "enable_normalization": enable_normalization, "chrf": chrf, "ter": ter,
                 "sgsacc": sgsacc, "confidence": confidence, "domains_from_slots": domains_from_slots, "strict": strict, "skip_invalid": skip_invalid, "warm": warm}
        for name, value in flags.items():
            if not (isinstance(value, bool) or (type(value) is int and value in (0, 1))):
                raise InvalidArgumentError(f"todeval: {name} must be True or False, not {value!r}")
        if not enable_normalization:
            # todeval always normalizes as mwzeval does by default; scoring raw text would be another metric.
            raise InvalidArgumentError("todeval: enable_normalization=False is not supported: todeval always normalizes responses and states as mwzeval does by default")
        if (model or device or dtype) and not sgsacc:
            raise InvalidArgumentError("todeval: model, device and dtype choose the NLI model of sgsacc=True; give sgsacc=True")
        if chrf_word_order is not None and (isinstance(chrf_word_order, bool) or not isinstance(chrf_word_order, int) or chrf_word_order < 0):
            raise InvalidArgumentError(f"todeval: chrf_word_order must be a non-negative int (2 is chrF++), not {chrf_word_order!r}")
        if chrf_word_order is not None and not chrf:
            raise InvalidArgumentError("todeval: chrf_word_order sets the word n-gram order of chrf=True; give chrf=True")
        self.bleu, self.success, self.richness, self.dst = bool(bleu), bool(success), bool(richness), bool(dst)
        self.chrf, self.ter, self.chrf_word_order = bool(chrf), bool(ter), chrf_word_order
        self.sgsacc = bool(sgsacc)
        self.confidence = bool(confidence)
        self.model, self.device, self.dtype = model, device, dtype
        self.data_dir = data_dir
        self.ground_truth = ground_truth
        self.domains_from_slots, self.strict, self.skip_invalid = domains_from_slots, strict, skip_invalid
        self.todeval = todeval
        self.timeout = timeout
        # A string is one command line's worth of flags, not a sequence of one-character flags.
        self.extra_args = shlex.split(extra_args) if isinstance(extra_args, str) else [str(a) for a in extra_args]
        self.warm = bool(warm)
        self._warm: Optional[WarmCli] = None

    def __enter__(self) -> "Evaluator":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __del__(self) -> None:
        warm = getattr(self, "_warm", None)
        if warm is not None:
            warm.close()

    def close(self) -> None:
        """Ends the warm todeval process, if one runs (a later `evaluate()` starts another)."""
        if self._warm is not None:
            self._warm.close()
            self._warm = None

    def _run(self, args: List[str], rename: Mapping[str, str], needs: Mapping[str, str]) -> Dict[str, Any]:
        """`todeval ARGS` as JSON: by the warm process when there is (or can be) one, else one CLI run."""
        rename = {**rename, **_ARGUMENT_OF_FLAG}
        if self.warm:
            if self._warm is None:
                self._warm = WarmCli(find_cli(self.todeval))
            if self._warm.supported:
                prefix = self._warm.prefix
                try:
                    code, stdout, stderr = self._warm.run(args, timeout=self.timeout)
                except CliError:
                    if self._warm.supported:
                        raise
                    # No `todeval stdio` (an older CLI says its command is unknown) or an answer not
                    # of its protocol: one run per call, as before. Any other failure was raised.
                else:
                    for path, name in rename.items():
                        stderr = stderr.replace(path, name)
                    return json_result(args, prefix, code, stdout, stderr, needs=needs, command=prefix + args, stacklevel=4)
        return run_json(args, todeval=self.todeval, rename=rename, needs=needs, timeout=self.timeout)

    def _common_flags(self) -> List[str]:
        """The flags `evaluate` and `compare` share (data dir, ground truth, input handling)."""
        flags: List[str] = []
        if self.data_dir is not None:
            flags += ["--data-dir", os.path.abspath(os.fspath(self.data_dir))]  # the warm process keeps its own cwd
        if self.ground_truth is not None:
            flags += ["--ground-truth", self.ground_truth]
        if self.domains_from_slots:
            flags.append("--domains-from-slots")
        if self.strict:
            flags.append("--strict")
        if self.skip_invalid:
            flags.append("--skip-invalid")
        return flags

    def evaluate(self, input_data: Predictions) -> Evaluation:
        """
        Metrics of predictions in mwzeval's format: a dict (dialogue id -> list of turns with
        `response`, optional `state` and `active_domains`) or the path of such a JSON file. The
        dict is not modified (mwzeval normalizes it in place).
        """
        wanted = (self.bleu, self.success, self.richness, self.dst)
        if not any(wanted) and not self.sgsacc and not self.chrf and not self.ter:
            # mwzeval computes nothing then, and so do we: no CLI run.
            return Evaluation(dict.fromkeys(RESULT_KEYS), {})
        flags = [f for f, on in zip(("--bleu", "--success", "--richness", "--dst", "--chrf", "--ter"), (*wanted, self.chrf, self.ter)) if on]
        if self.chrf_word_order is not None:
            flags += ["--chrf-word-order", str(self.chrf_word_order)]
        if self.sgsacc:
            flags.append("--sgsacc")
            for name, value in (("--model", self.model), ("--device", self.device), ("--dtype", self.dtype)):
                if value is not None:
                    flags += [name, str(value)]
            flags += ["--progress", "none"]  # stderr is captured: no progress lines in it
        if self.confidence:
            flags.append("--confidence")
        with _InputFile(input_data, "predictions") as file:
            report = self._run(
                ["evaluate", "-i", file.path, "--json", *flags, *self._common_flags(), *self.extra_args],
                file.rename, {"--confidence": _CONFIDENCE_PROVIDER},
            )
        results = mwzeval_view(report, bleu=self.bleu, success=self.success, richness=self.richness, dst=self.dst)
        for key, on in zip(TEXT_METRIC_KEYS, (self.chrf, self.ter)):
            if on:
                results[key] = dict(report[key]) if report.get(key) is not None else None
        if self.sgsacc:
            results["sgsacc"] = report.get("sgsacc")
        if self.confidence:
            results["confidence"] = report.get("confidence")
        return Evaluation(results, report)

    def compare(self, baseline: Predictions, system: Predictions, *args: str) -> Dict[str, Any]:
        """
        Paired significance tests of `system` against `baseline` (predictions dicts or files, as
        `evaluate` takes them): what `todeval compare BASELINE SYSTEM --json` prints. `args` are
        more `todeval compare` flags.
        """
        with _InputFile(baseline, "baseline") as b, _InputFile(system, "system") as s:
            return self._run(["compare", b.path, s.path, "--json", *self._common_flags(), *args], {**b.rename, **s.rename}, {"compare": _COMPARE_PROVIDER})
