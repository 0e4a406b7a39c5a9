"""Finding and running the todeval CLI (Node) from Python.

The metrics are computed by the CLI itself, in a subprocess, so Python gets exactly the numbers
`todeval evaluate --json` prints; this module only finds the executable and turns a failure into a
TodevalError carrying the CLI's one-line message.
"""

import json
import os
import shutil
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence, Union

from .errors import CliError, CliNotFoundError, CommandUnavailableError, TodevalWarning

Command = Union[str, "os.PathLike[str]", Sequence[str]]

_WARNING = "todeval: warning: "
_HINT = "(run with --help for usage)"


def _as_command(target: Union[str, "os.PathLike[str]"]) -> List[str]:
    """A path to the CLI as an argv prefix: a .js entry point runs under node."""
    path = os.fspath(target)
    if path.endswith((".js", ".mjs")):
        node = shutil.which("node")
        if node is None:
            raise CliNotFoundError(f"todeval: {path} needs node, and no `node` is on PATH")
        return [node, path]
    return [path]


def _node_modules_bin(start: Path) -> Optional[Path]:
    """node_modules/.bin/todeval in `start` or the nearest folder above it that has one."""
    names = ("todeval.cmd", "todeval") if sys.platform == "win32" else ("todeval",)
    for folder in (start, *start.parents):
        for name in names:
            candidate = folder / "node_modules" / ".bin" / name
            if candidate.is_file():
                return candidate
    return None


def _checkout_bin() -> Optional[Path]:
    """bin/todeval.js of the todeval checkout this package sits in (python/todeval/ of the repo)."""
    root = Path(__file__).resolve().parent.parent.parent
    entry = root / "bin" / "todeval.js"
    try:
        is_todeval = json.loads((root / "package.json").read_text(encoding="utf-8")).get("name") == "todeval"
    except (OSError, ValueError):
        return None
    return entry if is_todeval and entry.is_file() else None


def find_cli(todeval: Optional[Command] = None) -> List[str]:
    """
    The argv prefix that runs the todeval CLI, from the first of: `todeval` (a path, or an argv
    list such as ["node", "/opt/todeval/bin/todeval.js"]), $TODEVAL_BIN, node_modules/.bin/todeval
    in the working directory or above, `todeval` on PATH, and bin/todeval.js of the checkout this
    package was imported from.
    """
    if todeval is not None:
        if isinstance(todeval, (str, os.PathLike)):
            return _as_command(todeval)
        argv = [os.fspath(a) for a in todeval]
        if not argv:
            raise ValueError("todeval: an empty command")
        return argv
    env = os.environ.get("TODEVAL_BIN")
    if env:
        return _as_command(env)
    local = _node_modules_bin(Path.cwd())
    if local is not None:
        return [str(local)]
    on_path = shutil.which("todeval")
    if on_path is not None:
        return [on_path]
    checkout = _checkout_bin()
    if checkout is not None:
        return _as_command(checkout)
    raise CliNotFoundError(
        "todeval: the todeval CLI was not found: set TODEVAL_BIN (or pass todeval=PATH), "
        "`npm install todeval` in this project (node_modules/.bin) or put `todeval` on PATH"
    )


def _error_line(stderr: str) -> str:
    """The CLI's one-line error: its last line that is neither a warning nor commander's usage hint."""
    lines = [ln.strip() for ln in stderr.splitlines() if ln.strip() and not ln.startswith(_WARNING) and ln.strip() != _HINT]
    return lines[-1] if lines else ""


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
    run_env = dict(os.environ)
    if env:
        run_env.update(env)

    def named(text: str) -> str:
        for path, name in (rename or {}).items():
            text = text.replace(path, name)
        return text

    try:
        done = subprocess.run(command, stdin=subprocess.DEVNULL, capture_output=True, text=True, encoding="utf-8", timeout=timeout, env=run_env)
    except FileNotFoundError as e:
        raise CliNotFoundError(f"todeval: cannot run {command[0]}: {e.strerror}", command=command) from None
    except subprocess.TimeoutExpired:
        raise CliError(f"todeval {args[0]}: no answer within {timeout} s", command=command) from None
    stderr = named(done.stderr)
    for line in stderr.splitlines():
        if line.startswith(_WARNING):
            warnings.warn(line, TodevalWarning, stacklevel=3)
    if done.returncode != 0:
        line = _error_line(stderr) or f"exited with code {done.returncode}"
        for what, provider in (needs or {}).items():
            if f"unknown option '{what}'" in line or f"unknown command '{what}'" in line:
                raise CommandUnavailableError(
                    f"todeval {args[0]}: this todeval CLI ({prefix[-1]}) has no `{what}`; {provider}",
                    exit_code=done.returncode, stderr=stderr, command=command,
                )
        if not line.startswith("todeval"):
            line = f"todeval {args[0]}: {line}"
        raise CliError(line, exit_code=done.returncode, stderr=stderr, command=command)
    try:
        return json.loads(done.stdout)
    except ValueError:
        raise CliError(f"todeval {args[0]}: printed no JSON on stdout (got {done.stdout[:80]!r})", exit_code=0, stderr=stderr, command=command) from None
