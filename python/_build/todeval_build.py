"""
The build backend of the todeval Python package (PEP 517 and PEP 660), on the standard library.

Why our own: `pip install ./python` builds in an isolated environment and first installs the build
requirements from the package index. With none (this backend lives in the source tree,
`backend-path`), a fresh venv with no network installs the package all the same; setuptools would
need PyPI or a pre-installed copy (and `wheel`, for older ones).

Why it matters where it was built from: the metrics run in the todeval CLI (Node). A wheel built
from python/ of a todeval checkout records that checkout's folder in todeval/_origin.json, so the
installed package finds the CLI it came with (todeval.cli.bundled_cli). A wheel built elsewhere
(from the sdist) records nothing and finds the CLI on PATH or by $TODEVAL_BIN.
"""

import base64
import hashlib
import io
import json
import os
import re
import tarfile
import zipfile
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

SOURCE = Path(__file__).resolve().parent.parent  # python/
PACKAGE = "todeval"


def _project() -> Dict[str, Any]:
    """pyproject.toml's [project] table (tomllib on 3.11+, else the simple `key = "value"` lines it has)."""
    text = (SOURCE / "pyproject.toml").read_text(encoding="utf-8")
    try:
        import tomllib  # type: ignore[import-not-found,unused-ignore]

        project: Dict[str, Any] = tomllib.loads(text)["project"]
        return project
    except ImportError:
        section = re.search(r"^\[project\]\n(.*?)(?=^\[|\Z)", text, re.MULTILINE | re.DOTALL)
        body = section.group(1) if section else ""
        found: Dict[str, Any] = dict(re.findall(r'^([\w-]+) = "([^"]*)"', body, re.MULTILINE))
        licence = re.search(r'^license = \{ text = "([^"]*)" \}', body, re.MULTILINE)
        if licence:
            found["license"] = {"text": licence.group(1)}
        classifiers = re.search(r"^classifiers = \[(.*?)\]", body, re.MULTILINE | re.DOTALL)
        if classifiers:
            found["classifiers"] = re.findall(r'"([^"]*)"', classifiers.group(1))
        return found


def _names() -> Tuple[str, str]:
    project = _project()
    return str(project["name"]), str(project["version"])


def _metadata() -> str:
    project = _project()
    lines = [
        "Metadata-Version: 2.1",
        f"Name: {project['name']}",
        f"Version: {project['version']}",
        f"Summary: {project.get('description', '')}",
    ]
    if project.get("requires-python"):
        lines.append(f"Requires-Python: {project['requires-python']}")
    licence = project.get("license")
    if isinstance(licence, dict) and licence.get("text"):
        lines.append(f"License: {licence['text']}")
    for classifier in project.get("classifiers", []) or []:
        lines.append(f"Classifier: {classifier}")
    readme = SOURCE / "README.md"
    lines.append("Description-Content-Type: text/markdown")
    return "\n".join(lines) + "\n\n" + (readme.read_text(encoding="utf-8") if readme.is_file() else "")


def _checkout() -> Optional[str]:
    """The todeval checkout python/ sits in (its package.json names todeval), or None (an unpacked sdist)."""
    root = SOURCE.parent
    try:
        if json.loads((root / "package.json").read_text(encoding="utf-8")).get("name") == PACKAGE and (root / "bin" / "todeval.js").is_file():
            return str(root)
    except (OSError, ValueError):
        pass
    return None


class _Wheel:
    """A wheel being written: files added with their RECORD lines, dist-info last."""

    def __init__(self, directory: str, tag: str = "py3-none-any"):
        name, version = _names()
        self.dist_info = f"{name}-{version}.dist-info"
        self.filename = f"{name}-{version}-{tag}.whl"
        self.tag = tag
        self.zip = zipfile.ZipFile(os.path.join(directory, self.filename), "w", zipfile.ZIP_DEFLATED)
        self.records: List[str] = []

    def add(self, arcname: str, data: bytes) -> None:
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode("ascii")
        info = zipfile.ZipInfo(arcname, date_time=(2020, 1, 1, 0, 0, 0))  # reproducible
        info.external_attr = 0o644 << 16
        info.compress_type = zipfile.ZIP_DEFLATED
        self.zip.writestr(info, data)
        self.records.append(f"{arcname},sha256={digest},{len(data)}")

    def close(self) -> str:
        self.add(f"{self.dist_info}/METADATA", _metadata().encode("utf-8"))
        self.add(f"{self.dist_info}/WHEEL", f"Wheel-Version: 1.0\nGenerator: todeval_build\nRoot-Is-Purelib: true\nTag: {self.tag}\n".encode("ascii"))
        self.add(f"{self.dist_info}/top_level.txt", f"{PACKAGE}\n".encode("ascii"))
        record = "\n".join(self.records + [f"{self.dist_info}/RECORD,,"]) + "\n"
        self.zip.writestr(zipfile.ZipInfo(f"{self.dist_info}/RECORD", date_time=(2020, 1, 1, 0, 0, 0)), record)
        self.zip.close()
        return self.filename


def _package_files() -> List[Path]:
    folder = SOURCE / PACKAGE
    # Subpackages too (todeval.mwzeval, whose metrics module is mwzeval's import path).
    return sorted(p for p in folder.rglob("*") if p.is_file() and (p.suffix == ".py" or p.name == "py.typed") and "__pycache__" not in p.parts)


# -- PEP 517 / PEP 660 hooks ----------------------------------------------------------------------


def get_requires_for_build_wheel(config_settings: Optional[Dict[str, Any]] = None) -> List[str]:
    return []


def get_requires_for_build_sdist(config_settings: Optional[Dict[str, Any]] = None) -> List[str]:
    return []


def get_requires_for_build_editable(config_settings: Optional[Dict[str, Any]] = None) -> List[str]:
    return []


def build_wheel(wheel_directory: str, config_settings: Optional[Dict[str, Any]] = None, metadata_directory: Optional[str] = None) -> str:
    """The package's files, and todeval/_origin.json naming the checkout it was built from (when it was)."""
    wheel = _Wheel(wheel_directory)
    for path in _package_files():
        wheel.add(path.relative_to(SOURCE).as_posix(), path.read_bytes())
    checkout = _checkout()
    if checkout is not None:
        wheel.add(f"{PACKAGE}/_origin.json", (json.dumps({"checkout": checkout}) + "\n").encode("utf-8"))
    return wheel.close()


def build_editable(wheel_directory: str, config_settings: Optional[Dict[str, Any]] = None, metadata_directory: Optional[str] = None) -> str:
    """A .pth file putting python/ on sys.path: the package is imported from the checkout itself."""
    wheel = _Wheel(wheel_directory)
    wheel.add(f"__editable__.{PACKAGE}.pth", (str(SOURCE) + "\n").encode("utf-8"))
    return wheel.close()


def build_sdist(sdist_directory: str, config_settings: Optional[Dict[str, Any]] = None) -> str:
    """pyproject.toml, README.md, this backend and the package (no _origin.json: an sdist is built anywhere)."""
    name, version = _names()
    base = f"{name}-{version}"
    filename = f"{base}.tar.gz"
    files = [SOURCE / "pyproject.toml", SOURCE / "README.md", Path(__file__).resolve(), *_package_files()]
    with tarfile.open(os.path.join(sdist_directory, filename), "w:gz", format=tarfile.PAX_FORMAT) as tar:
        for path in files:
            data = path.read_bytes()
            info = tarfile.TarInfo(f"{base}/{path.relative_to(SOURCE).as_posix()}")
            info.size, info.mode, info.mtime = len(data), 0o644, 1577836800
            tar.addfile(info, io.BytesIO(data))
        pkg_info = _metadata().encode("utf-8")
        info = tarfile.TarInfo(f"{base}/PKG-INFO")
        info.size, info.mode, info.mtime = len(pkg_info), 0o644, 1577836800
        tar.addfile(info, io.BytesIO(pkg_info))
    return filename
