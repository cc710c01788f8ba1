"""Canal installs only the ``canal`` package (issue #14): a real install, with no network.

A fresh virtual environment gets Canal's wheel, built here from this checkout (``--no-index
--no-build-isolation``), next to two throwaway distributions that own the top-level ``policy`` and
``workflows`` packages. Canal's dependencies are the running environment's: the new environment reaches
them through a ``.pth`` file naming a folder of links to the running site-packages, Canal itself left
out, so pip still resolves every dependency and nothing of Canal is seen but what the wheel installed.
From a project folder with its own ``runtime/``, ``policy/`` and ``sandbox/`` packages, the installed
``canal`` runs a command in a real sandbox and ``from canal import Canal`` is Canal's class.
"""

from __future__ import annotations

import base64
import hashlib
import os
import shutil
import site
import subprocess
import sys
import sysconfig
import tempfile
import zipfile
from pathlib import Path
from typing import Any

import pytest
from project_helpers import chown_tree, remove_project_containers
from server_helpers import stop_servers

REPO = Path(__file__).resolve().parents[3]
SOURCES = ("pyproject.toml", "LICENSE", "README.md", "canal", "images")
THROWAWAY = {"policy": "policy 9.9.9, not Canal's", "workflows": "workflows 9.9.9, not Canal's"}
SHADOWS = ("runtime", "policy", "sandbox")

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "approvals"))

from os_users import make_user, remove_user  # noqa: E402


def _pip(*args: str, cwd: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "pip", "--isolated", "--disable-pip-version-check",
                           "--no-input", *args], cwd=cwd, capture_output=True, text=True, timeout=180,
                          check=False)
    assert done.returncode == 0, done.stdout + done.stderr


def _copy_checkout(src: Path) -> Path:
    """What a wheel is built from (SOURCES), copied from this checkout to ``src``."""
    for name in SOURCES:
        if (REPO / name).is_dir():
            shutil.copytree(REPO / name, src / name,
                            ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info"))
        else:
            src.mkdir(exist_ok=True)
            shutil.copy2(REPO / name, src / name)
    return src


def _canal_wheel(tmp: Path) -> Path:
    """Canal's wheel, built from a copy of this checkout."""
    src = _copy_checkout(tmp / "src")
    _pip("wheel", "--no-deps", "--no-index", "--no-build-isolation", "-w", str(tmp / "dist"), str(src),
         cwd=tmp)
    (wheel,) = (tmp / "dist").glob("canal_sandbox-*.whl")
    return wheel


def _record_hash(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def _throwaway_wheel(tmp: Path, package: str, owner: str) -> Path:
    """A distribution named like the package it installs at the top level, as PyPI's ``policy`` does."""
    info = f"{package}-9.9.9.dist-info"
    files = {
        f"{package}/__init__.py": f"OWNER = {owner!r}\n".encode(),
        f"{package}/core.py": b"def who() -> str:\n    return __name__\n",
        f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {package}\nVersion: 9.9.9\n".encode(),
        f"{info}/WHEEL": b"Wheel-Version: 1.0\nGenerator: canal-tests\nRoot-Is-Purelib: true\n"
                         b"Tag: py3-none-any\n",
        f"{info}/top_level.txt": f"{package}\n".encode(),
    }
    record = "".join(f"{name},{_record_hash(data)},{len(data)}\n" for name, data in files.items())
    (tmp / "dist").mkdir(exist_ok=True)
    wheel = tmp / "dist" / f"{package}-9.9.9-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        for name, data in files.items():
            zf.writestr(name, data)
        zf.writestr(f"{info}/RECORD", record + f"{info}/RECORD,,\n")
    return wheel


def _dependencies(tmp: Path) -> Path:
    """Links to the running environment's installed distributions, Canal's own install left out."""
    deps = tmp / "deps"
    deps.mkdir()
    here = {Path(p) for p in [*site.getsitepackages(), sysconfig.get_paths()["purelib"]]}
    for folder in here:
        for entry in folder.iterdir() if folder.is_dir() else ():
            name = entry.name
            if (name.startswith(("canal", "__editable__", "pip")) or name.endswith(".pth")
                    or name in THROWAWAY or name in SHADOWS or (deps / name).exists()):
                continue
            (deps / name).symlink_to(entry)
    return deps


def _venv(tmp: Path) -> tuple[Path, Path]:
    venv = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=60)
    python = venv / "bin" / "python"
    where = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    purelib = subprocess.run([str(python), "-c", where], capture_output=True, text=True, check=True,
                             timeout=60).stdout.strip()
    return python, Path(purelib)


def _project(home: Path) -> Path:
    """An agent harness's repository, with packages named like Canal's components."""
    root = home / "harness"
    for name in SHADOWS:
        (root / name).mkdir(parents=True)
        (root / name / "__init__.py").write_text(
            f"raise ImportError('this is the harness project\\'s own {name} package')\n")
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    chown_tree(root)
    return root


def test_canal_installs_only_canal_next_to_policy_and_workflows(
        tmp_path: Path, sandbox_image: str, docker_client: Any) -> None:
    python, purelib = _venv(tmp_path)
    (purelib / "running-environment.pth").write_text(f"{_dependencies(tmp_path)}\n")
    throwaways = [_throwaway_wheel(tmp_path, name, owner) for name, owner in THROWAWAY.items()]
    _pip("--python", str(python), "install", "--no-index", *map(str, throwaways), cwd=tmp_path)
    before = {path.relative_to(purelib): path.read_bytes()
              for name in THROWAWAY for path in (purelib / name).rglob("*.py")}
    _pip("--python", str(python), "install", "--no-index", str(_canal_wheel(tmp_path)), cwd=tmp_path)

    installed = {path.name for path in purelib.iterdir()} - {"running-environment.pth"}
    others = {name for package in THROWAWAY for name in (package, f"{package}-9.9.9.dist-info")}
    assert installed - others == {"canal", "canal_sandbox-0.1.0.dist-info"}
    record = (purelib / "canal_sandbox-0.1.0.dist-info" / "RECORD").read_text().splitlines()
    tops = {line.split(",")[0].split("/")[0] for line in record}
    assert tops - {".."} == {"canal", "canal_sandbox-0.1.0.dist-info"}  # ".." is bin/canal
    after = {path.relative_to(purelib): path.read_bytes()
             for name in THROWAWAY for path in (purelib / name).rglob("*.py")}
    assert after == before

    home = tmp_path / "home"
    home.mkdir()
    project = _project(home)
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("CANAL_", "XDG_", "PYTHON", "VIRTUAL_ENV"))}
    env.update(HOME=str(home), CANAL_RUNTIME_DIR=str(tmp_path / "run"),
               PATH=f"{python.parent}{os.pathsep}{env.get('PATH', '')}")
    try:
        ran = subprocess.run(["canal", "run", "--", "echo", "hello"], cwd=project, env=env,
                             capture_output=True, text=True, timeout=120, check=False)
        assert ran.returncode == 0, ran.stdout + ran.stderr
        assert ran.stdout.splitlines()[0] == "hello"  # then the footer: exit code, time, checkpoint
    finally:
        stop_servers(tmp_path / "run")
        remove_project_containers(docker_client, project)

    def python_c(code: str, cwd: Path) -> list[str]:
        done = subprocess.run(["python", "-c", code], cwd=cwd, env=env, capture_output=True, text=True,
                              timeout=60, check=False)
        assert done.returncode == 0, done.stderr
        return done.stdout.split()

    # in the harness's folder (first on sys.path), Canal is still Canal
    module, name, where = python_c("import canal; from canal import Canal\n"
                                   "print(Canal.__module__, Canal.__name__, canal.__file__)", project)
    assert (module.split(".")[0], name) == ("canal", "Canal")
    assert Path(where).parent == purelib / "canal"
    # and the distributions that own policy and workflows still import intact, Canal imported first
    owners = python_c("import canal.runtime.api, canal.cli.main, policy, workflows\n"
                      "from policy.core import who\n"
                      "print(repr(policy.OWNER), repr(workflows.OWNER), who())", home)
    assert " ".join(owners) == f"{THROWAWAY['policy']!r} {THROWAWAY['workflows']!r} policy.core"


@pytest.mark.skipif(os.geteuid() != 0, reason="another OS user needs root")
def test_a_user_who_can_only_read_the_clone_builds_its_wheel() -> None:
    """Issue 30: the build backend writes nothing into the source tree, so a user with read access to a
    clone (an OS user made here, on a root-owned copy) builds Canal's wheel; its metadata carries the
    license as an SPDX expression (PEP 639) and its license file."""
    base = Path(tempfile.mkdtemp(prefix="canal-readonly-", dir="/tmp"))
    try:
        base.chmod(0o755)
        src = _copy_checkout(base / "src")
        subprocess.run(["chmod", "-R", "u=rwX,go=rX", str(src)], check=True)
        before = sorted(p.relative_to(src).as_posix() for p in src.rglob("*"))
        reader = make_user(base, "reader")
        try:
            out = reader.home
            done = reader.run(sys.executable, "-m", "pip", "--isolated", "--disable-pip-version-check",
                              "--no-input", "--no-cache-dir", "wheel", "--no-deps", "--no-index",
                              "--no-build-isolation", "-w", str(out / "dist"), str(src), timeout=300)
        finally:
            remove_user(reader)
        assert done.returncode == 0, done.stdout + done.stderr
        assert sorted(p.relative_to(src).as_posix() for p in src.rglob("*")) == before  # nothing written
        (wheel,) = (out / "dist").glob("canal_sandbox-*.whl")
        with zipfile.ZipFile(wheel) as zf:
            names = zf.namelist()
            metadata = zf.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
        assert "canal/_images/sandbox/Dockerfile" in names
        assert "canal/_images/egress/Dockerfile" in names
        assert "License-Expression: Apache-2.0" in metadata
        assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names), names
    finally:
        shutil.rmtree(base, ignore_errors=True)
