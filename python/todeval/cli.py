"""Finding and running the todeval CLI (Node) from Python.

The metrics are computed by the CLI itself, in a subprocess, so Python gets exactly the numbers
`todeval evaluate --json` prints; this module only finds the executable and turns a failure into a
TodevalError carrying the CLI's one-line message.
"""

import atexit
import json
import os
import queue
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import warnings
from pathlib import Path
from typing import IO, Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union, cast

from .errors import CliError, CliNotFoundError, CommandUnavailableError, InvalidArgumentError, TodevalWarning

Command = Union[str, "os.PathLike[str]", Sequence[str]]

_WARNING = "todeval: warning: "
_HINT = "(run with --help for usage)"


_NOT_FOUND_HINT = (
    "install the package from a todeval checkout where `npm install` has run (pip install ./python), "
    "put `todeval` on PATH (npm install -g ./todeval-X.tgz, or npm install in your project), "
    "or set TODEVAL_BIN to bin/todeval.js of a todeval install"
)


def _as_command(target: Union[str, "os.PathLike[str]"], origin: str) -> List[str]:
    """A path to the CLI as an argv prefix: a .js entry point runs under node; a todeval folder means its bin/todeval.js."""
    path = os.fspath(target)
    if os.path.isdir(path):
        entry = os.path.join(path, "bin", "todeval.js")
        if not os.path.isfile(entry):
            raise CliNotFoundError(f"todeval: {origin} {path} is a directory, not the todeval CLI", hint="point it at bin/todeval.js of a todeval install, or at the `todeval` executable")
        path = entry
    if path.endswith((".js", ".mjs")):
        node = shutil.which("node")
        if node is None:
            raise CliNotFoundError(f"todeval: {path} ({origin}) needs node, and no `node` is on PATH", hint="install Node.js 20 or later")
        return [node, path]
    return [path]


def _node_modules_bin(start: Path) -> Optional[Path]:
    """node_modules/.bin/todeval in `start` or the nearest folder above it that has one (what npx runs)."""
    names = ("todeval.cmd", "todeval") if sys.platform == "win32" else ("todeval",)
    for folder in (start, *start.parents):
        for name in names:
            candidate = folder / "node_modules" / ".bin" / name
            if candidate.is_file():
                return candidate
    return None


def _todeval_root(root: Path) -> Optional[Path]:
    """bin/todeval.js of `root` when it is a todeval package folder whose dependencies are installed."""
    entry = root / "bin" / "todeval.js"
    try:
        is_todeval = json.loads((root / "package.json").read_text(encoding="utf-8")).get("name") == "todeval"
    except (OSError, ValueError):
        return None
    return entry if is_todeval and entry.is_file() and (root / "node_modules").is_dir() else None


def bundled_cli() -> Optional[Path]:
    """
    The CLI this package came with: bin/todeval.js of the todeval checkout that holds it (imported
    from python/ of a checkout), or of the checkout it was built from (`pip install ./python`
    records that folder in todeval/_origin.json). None when that folder is gone or has not run
    `npm install`.
    """
    here = Path(__file__).resolve().parent
    found = _todeval_root(here.parent.parent)
    if found is not None:
        return found
    try:
        origin = json.loads((here / "_origin.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    root = origin.get("checkout") if isinstance(origin, dict) else None
    return _todeval_root(Path(root)) if isinstance(root, str) else None


def find_cli(todeval: Optional[Command] = None) -> List[str]:
    """
    The argv prefix that runs the todeval CLI. `todeval` (a path, a todeval folder, or an argv list
    such as ["node", "/opt/todeval/bin/todeval.js"]) is used as given; otherwise the first of:

    1. the CLI the package came with (`bundled_cli()`: the checkout it lives in or was installed from);
    2. `todeval` on PATH, node_modules/.bin/todeval of the working directory or above first (as npx);
    3. $TODEVAL_BIN (a path; a .js entry point runs under node).
    """
    if todeval is not None:
        if isinstance(todeval, (str, os.PathLike)):
            return _as_command(todeval, "todeval=")
        if isinstance(todeval, (bytes, Mapping)) or not isinstance(todeval, Iterable):
            raise InvalidArgumentError(f"todeval=: expected a path or an argv list, got {type(todeval).__name__}")
        argv = [os.fspath(a) for a in todeval]
        if not argv:
            raise InvalidArgumentError("todeval=: an empty command")
        return argv
    bundled = bundled_cli()
    if bundled is not None:
        return _as_command(bundled, "the CLI this package came with")
    local = _node_modules_bin(Path.cwd())
    if local is not None:
        return [str(local)]
    on_path = shutil.which("todeval")
    if on_path is not None:
        return [on_path]
    env = os.environ.get("TODEVAL_BIN")
    if env:
        return _as_command(env, "TODEVAL_BIN")
    raise CliNotFoundError(
        "todeval: the todeval CLI was not found: not beside this package (no todeval checkout with node_modules), "
        "not `todeval` on PATH (nor node_modules/.bin), and TODEVAL_BIN is not set",
        hint=_NOT_FOUND_HINT,
    )


_CRASH = re.compile(r"^(?:Uncaught )?(?:[A-Z]\w*)?(?:Error|Exception)(?: \[\w+\])?: |^FATAL ERROR: |^Segmentation fault")


def _error_line(stderr: str) -> str:
    """
    The CLI's one-line error: its first `todeval: ...` line that is not a warning, else commander's
    `error: ...`, else the error line of a Node crash (`TypeError: ...`, not the stack or the
    `Node.js v20` footer), else its last line.
    """
    lines = [ln.strip() for ln in stderr.splitlines() if ln.strip() and not ln.startswith(_WARNING) and ln.strip() != _HINT]
    for pattern in (re.compile(r"^todeval\b.*: "), re.compile(r"^error: "), _CRASH):
        for line in lines:
            if pattern.search(line):
                return line
    return lines[-1] if lines else ""


def _skipped_warning(lines: List[str]) -> Optional[str]:
    """The `skipped invalid` lines of --skip-invalid as one warning: how many, and the first reason."""
    skipped = [ln[len(_WARNING):] for ln in lines if ln.startswith(_WARNING + "skipped invalid")]
    if not skipped:
        return None
    n = len(skipped)
    return f"todeval: warning: skip_invalid left out {n} invalid dialogue{'s' if n > 1 else ''} (the first: {skipped[0][len('skipped invalid '):]})"


def emit_warnings(stderr: str, stacklevel: int) -> None:
    """The CLI's warning lines as TodevalWarnings; its `skipped invalid` lines as one, with their count."""
    lines = stderr.splitlines()
    skipped = _skipped_warning(lines)
    if skipped is not None:
        warnings.warn(skipped, TodevalWarning, stacklevel=stacklevel + 1)
    for line in lines:
        if line.startswith(_WARNING) and not line.startswith(_WARNING + "skipped invalid"):
            warnings.warn(line, TodevalWarning, stacklevel=stacklevel + 1)


def cli_failure(args: Sequence[str], prefix: Sequence[str], stderr: str, returncode: int, needs: Optional[Mapping[str, str]] = None, command: Sequence[str] = ()) -> CliError:
    """The CliError of a failed run: the CLI's first error line (or how it died) as the message."""
    line = _error_line(stderr)
    hint: Optional[str] = None
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        line = f"killed by {name}" + (f" after: {line}" if line else "")
        hint = "out of memory? (the kernel's OOM killer sends SIGKILL)" if name == "SIGKILL" else None
    elif not line:
        line = f"exited with code {returncode} and printed no error"
    elif _CRASH.search(line):
        hint = "the todeval CLI crashed: e.stderr holds its whole output; please report it with the command (e.command)"
    for what, provider in (needs or {}).items():
        if f"unknown option '{what}'" in line or f"unknown command '{what}'" in line:
            return CommandUnavailableError(
                f"todeval {args[0]}: this todeval CLI ({prefix[-1]}) has no `{what}`; {provider}",
                exit_code=returncode, stderr=stderr, command=command,
            )
    if not line.startswith("todeval"):
        line = f"todeval {args[0]}: {line}"
    return CliError(line, exit_code=returncode, stderr=stderr, command=command, hint=hint)


def inherited_env() -> Dict[str, str]:
    """
    This process's environment as the CLI gets it, less SLURM_ARRAY_*: in a Slurm array task (a
    hyper-parameter sweep) the CLI would take the task for a shard of its work (docs/scale-out.md),
    while the Python package always reads one whole report from stdout and can never use a shard.
    """
    return {k: v for k, v in os.environ.items() if not k.startswith("SLURM_ARRAY_")}


def run_json(
    args: Sequence[str],
    *,
    todeval: Optional[Command] = None,
    rename: Optional[Mapping[str, str]] = None,
    needs: Optional[Mapping[str, str]] = None,
    timeout: Optional[float] = None,
    env: Optional[Mapping[str, str]] = None,
) -> Dict[str, Any]:
    """
    Run `todeval ARGS` (which must print JSON on stdout) and return the parsed JSON. Its warning lines
    become TodevalWarning; a failure raises CliError with the CLI's one-line message. `rename` maps
    temporary paths to the names the caller knows them by, in messages. `needs` maps an option or
    command the call relies on (e.g. "--confidence") to what provides it, for a clear error when the
    CLI found is older than that.
    """
    prefix = find_cli(todeval)
    command = prefix + list(args)
    run_env = inherited_env()
    if env:
        run_env.update(env)

    def named(text: str) -> str:
        """Temporary paths in a message replaced by the names the caller knows them by."""
        for path, name in (rename or {}).items():
            text = text.replace(path, name)
        return text

    try:
        done = subprocess.run(command, stdin=subprocess.DEVNULL, capture_output=True, text=True, encoding="utf-8", timeout=timeout, env=run_env)
    except subprocess.TimeoutExpired:
        raise CliError(f"todeval {args[0]}: no answer within {timeout} s", command=command, hint="raise timeout=") from None
    except OSError as e:
        # Not found, not executable (a directory, no x bit), or a bad interpreter line.
        raise CliNotFoundError(f"todeval: cannot run {command[0]}: {e.strerror or e}", command=command, hint=_NOT_FOUND_HINT) from None
    return json_result(args, prefix, done.returncode, done.stdout, named(done.stderr), needs=needs, command=command, stacklevel=5)


def json_result(
    args: Sequence[str],
    prefix: Sequence[str],
    code: int,
    stdout: str,
    stderr: str,
    *,
    needs: Optional[Mapping[str, str]] = None,
    command: Sequence[str] = (),
    stacklevel: int = 3,
) -> Dict[str, Any]:
    """What a run of `todeval ARGS` printed, as run_json returns it: warnings emitted, failures raised, JSON parsed."""
    emit_warnings(stderr, stacklevel=stacklevel)
    if code != 0:
        raise cli_failure(args, prefix, stderr, code, needs, command)
    try:
        return cast(Dict[str, Any], json.loads(stdout))
    except ValueError:
        raise CliError(f"todeval {args[0]}: printed no JSON on stdout (got {stdout[:80]!r})", exit_code=0, stderr=stderr, command=command) from None


#: What a todeval CLI older than `todeval stdio` prints for it (commander's unknown-command error).
_NO_STDIO = "unknown command 'stdio'"


class WarmCli:
    """
    One `todeval stdio` process (docs/python.md), started on the first call and kept for the next:
    each `run(args)` is answered with what `todeval ARGS` alone would print, without starting Node
    again. Calls are serialised (a lock). A process that dies, overruns a call's timeout or is
    interrupted is replaced on the next call, and so is one started in another working folder or
    environment than the call's. `close()` ends it; so does the end of the Python process.
    """

    def __init__(self, prefix: Sequence[str], env: Optional[Mapping[str, str]] = None):
        self.prefix = list(prefix)
        self.env = dict(env) if env is not None else None
        self.supported = True  # False once the CLI turned out to have no `stdio` command
        self._proc: Optional["subprocess.Popen[str]"] = None
        self._answers: "queue.Queue[Optional[str]]" = queue.Queue()
        self._stderr: Optional[IO[bytes]] = None
        self._lock = threading.Lock()
        self._next_id = 0
        self._answered = 0  # answers of the current process
        self._started: Tuple[Optional[str], Dict[str, str]] = (None, {})  # the process's folder and environment
        atexit.register(self.close)

    def _setting(self) -> Tuple[Optional[str], Dict[str, str]]:
        """The working folder and environment a one-shot run started now would get."""
        try:
            cwd: Optional[str] = os.getcwd()
        except OSError:  # the folder was removed: a process started in it has lost it as well
            cwd = None
        return cwd, (dict(self.env) if self.env is not None else inherited_env())

    def _start(self, setting: Tuple[Optional[str], Dict[str, str]]) -> "subprocess.Popen[str]":
        """A new `todeval stdio` process, with a thread reading its answers into a queue."""
        command = self.prefix + ["stdio"]
        self._stderr = tempfile.TemporaryFile()  # the process's own errors (a crash), read when it dies
        try:
            proc = subprocess.Popen(
                command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._stderr,
                text=True, encoding="utf-8", bufsize=1, env=setting[1],
            )
        except OSError as e:
            raise CliNotFoundError(f"todeval: cannot run {command[0]}: {e.strerror or e}", command=command, hint=_NOT_FOUND_HINT) from None
        answers: "queue.Queue[Optional[str]]" = queue.Queue()

        def read() -> None:
            """Every answer line, then None when the process's stdout closes."""
            assert proc.stdout is not None
            for line in proc.stdout:
                answers.put(line)
            answers.put(None)  # end of stream: the process is gone

        threading.Thread(target=read, name="todeval-stdio-reader", daemon=True).start()
        self._proc, self._answers, self._answered, self._started = proc, answers, 0, setting
        return proc

    def _died(self, args: Sequence[str], proc: "subprocess.Popen[str]") -> CliError:
        """The error of a process that ended without answering (or an older CLI without `stdio`)."""
        try:
            code = proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            code = proc.wait()
        stderr = ""
        if self._stderr is not None:
            self._stderr.seek(0)
            stderr = self._stderr.read().decode("utf-8", "replace")
        self._discard()
        return cli_failure(args, self.prefix, stderr, code if code != 0 else 1, command=self.prefix + ["stdio"])

    def _discard(self) -> None:
        """Forgets the process: killed if it still runs, its pipes and stderr file closed."""
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait()
        if proc is not None:
            for stream in (proc.stdin, proc.stdout):
                if stream is not None:
                    try:
                        stream.close()
                    except OSError:
                        pass
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None

    def run(self, args: Sequence[str], timeout: Optional[float] = None) -> Tuple[int, str, str]:
        """(exit code, stdout, stderr) of `todeval ARGS`, run by the warm process."""
        with self._lock:
            setting = self._setting()
            if self._proc is not None and (self._proc.poll() is not None or setting != self._started):
                # Dead, or started in another folder or environment than this call's (an os.chdir,
                # a TODEVAL_* or other variable set since): a call's results are those of one CLI
                # run started now (relative paths, settings read from the environment), so a new one.
                self._discard()
            proc = self._proc if self._proc is not None else self._start(setting)
            self._next_id += 1
            request_id = self._next_id
            request = json.dumps({"id": request_id, "args": list(args)}) + "\n"
            try:
                try:
                    assert proc.stdin is not None
                    proc.stdin.write(request)
                    proc.stdin.flush()
                except OSError:
                    raise self._died(args, proc) from None
                try:
                    line = self._answers.get(timeout=timeout)
                except queue.Empty:
                    self._discard()
                    raise CliError(f"todeval {args[0]}: no answer within {timeout} s (the warm todeval process was stopped)", command=self.prefix + ["stdio"], hint="raise timeout=") from None
            except BaseException:
                # Interrupted mid-call (KeyboardInterrupt, a signal handler's timeout exception): the
                # process would answer this request later, into the queue the next call reads, and
                # every later call would return the answer of the call before it. Stopped instead.
                self._discard()
                raise
            first = self._answered == 0
            if line is None:
                error = self._died(args, proc)
                if first and _NO_STDIO in error.stderr:
                    # An older CLI without `todeval stdio` (commander's own message): the caller runs
                    # it once per call. Any other death before an answer (a crash, the OOM killer) is
                    # this call's error: taken for an old CLI, it was swallowed and every later call
                    # of the Evaluator ran the CLI twice.
                    self.supported = False
                raise error
            try:
                answer = json.loads(line)
                result = int(answer["code"]), str(answer["stdout"]), str(answer["stderr"])
                answered = answer["id"]
            except (ValueError, TypeError, KeyError):
                self._discard()
                self.supported = False  # not todeval's stdio protocol: run the CLI once per call instead
                raise CliError(f"todeval stdio: answered {line[:80]!r}, not a stdio answer", command=self.prefix + ["stdio"]) from None
            if answered != request_id:
                # Answers come in request order, so another id means the two are out of step: a
                # result returned now would be another call's numbers.
                self._discard()
                raise CliError(f"todeval {args[0]}: the warm todeval process answered request {answered!r}, not {request_id} (it was stopped; the next call starts another)", command=self.prefix + ["stdio"])
            self._answered += 1
            return result

    def close(self) -> None:
        """Ends the process: stdin closed (it exits when it has answered), killed if it has not within 10 s."""
        with self._lock:
            proc = self._proc
            if proc is not None and proc.poll() is None and proc.stdin is not None:
                try:
                    proc.stdin.close()
                    proc.wait(timeout=10)
                except (OSError, subprocess.TimeoutExpired):
                    pass
            self._discard()
        atexit.unregister(self.close)
