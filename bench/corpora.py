"""Fetch and cache evaluation corpora (source distributions) from the package registries.

Kinds: PyPI sdists (`fetch_sdist`), npm tarballs (`fetch_npm`) and Debian binary packages
(`fetch_deb`: `golang-*-dev` ship Go source under `usr/share/gocode/src/...`, `librust-*-dev` ship
crate source under `usr/share/cargo/registry/<crate>-<version>/`), the last for Go and Rust corpora
since the Go proxy and crates.io are not reachable here.

Used by the corpus-level tests, the benchmarks and the evaluation scripts. Corpora are cached under
`$CODESEEK_CORPORA` (default `$XDG_CACHE_HOME/codeseek-corpora`, `~/.cache` without it) so a
second run needs no network.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path


def cache_home() -> Path:
    """`$XDG_CACHE_HOME`, else `~/.cache`."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")


def corpora_dir() -> Path:
    """Where unpacked corpora live (`$CODESEEK_CORPORA`, else `$XDG_CACHE_HOME/codeseek-corpora`)."""
    base = os.environ.get("CODESEEK_CORPORA") or str(cache_home() / "codeseek-corpora")
    path = Path(base)
    path.mkdir(parents=True, exist_ok=True)
    return path


def _unpack(archive: Path, dest: Path) -> None:
    tmp = Path(tempfile.mkdtemp(dir=dest.parent))
    try:
        if archive.name.endswith((".tar.gz", ".tgz")):
            with tarfile.open(archive) as tar:
                tar.extractall(tmp, filter="data")
        elif archive.suffix == ".zip":
            with zipfile.ZipFile(archive) as zf:
                zf.extractall(tmp)
        else:
            raise ValueError(f"unknown archive type: {archive}")
        entries = list(tmp.iterdir())
        top = entries[0] if len(entries) == 1 and entries[0].is_dir() else tmp
        shutil.move(str(top), str(dest))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def fetch_sdist(name: str, version: str) -> Path:
    """Unpacked source distribution of a PyPI package, e.g. fetch_sdist("requests", "2.32.3")."""
    dest = corpora_dir() / f"{name}-{version}"
    if dest.is_dir():
        return dest
    with tempfile.TemporaryDirectory() as tmpdir:
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--no-binary", ":all:",
             "-d", tmpdir, f"{name}=={version}"],
            check=True,
        )
        archives = [p for p in Path(tmpdir).iterdir() if p.is_file()]
        if not archives:
            raise RuntimeError(f"pip downloaded nothing for {name}=={version}")
        _unpack(archives[0], dest)
    return dest


def fetch_npm(name: str, version: str) -> Path:
    """Unpacked npm package tarball, e.g. fetch_npm("express", "4.21.2")."""
    dest = corpora_dir() / f"npm-{name}-{version}"
    if dest.is_dir():
        return dest
    with tempfile.TemporaryDirectory() as tmpdir:
        subprocess.run(["npm", "pack", "--silent", f"{name}@{version}"], cwd=tmpdir, check=True,
                       stdout=subprocess.DEVNULL)
        archives = list(Path(tmpdir).glob("*.tgz"))
        if not archives:
            raise RuntimeError(f"npm pack produced nothing for {name}@{version}")
        _unpack(archives[0], dest)
    return dest


def fetch_deb(name: str, version: str) -> Path:
    """A Debian package unpacked (not installed), e.g. fetch_deb("librust-ureq-dev", "2.6.2-3"): the
    folder holding its `usr/...` tree. `apt-get download NAME=VERSION` needs that version in the apt
    lists (`apt-get update`; `apt-cache policy NAME` shows what is there)."""
    dest = corpora_dir() / f"deb-{name}-{version}"
    if dest.is_dir():
        return dest
    with tempfile.TemporaryDirectory() as tmpdir:
        cmd = ["apt-get", "download", "-q", f"{name}={version}"]
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            cmd[2:2] = ["-o", "APT::Sandbox::User=root"]  # the _apt user cannot write a root-owned temp dir
        try:
            subprocess.run(cmd, cwd=tmpdir, check=True, stdout=subprocess.DEVNULL)
        except subprocess.CalledProcessError as exc:
            raise RuntimeError(f"apt-get download {name}={version} failed (exit {exc.returncode}): run "
                               f"apt-get update; apt-cache policy {name} lists the versions there") from exc
        debs = list(Path(tmpdir).glob("*.deb"))
        if not debs:
            raise RuntimeError(f"apt-get downloaded nothing for {name}={version}")
        unpacked = Path(tempfile.mkdtemp(dir=dest.parent))
        try:
            subprocess.run(["dpkg-deb", "-x", str(debs[0]), str(unpacked)], check=True)
            unpacked.rename(dest)
        finally:
            shutil.rmtree(unpacked, ignore_errors=True)
    return dest


def combine_trees(name: str, parts: dict[str, Path]) -> Path:
    """One folder holding several corpora side by side (`<corpora>/<name>/<key>/...` for each
    `parts[key]`), e.g. to index three sdists as one workspace. Files are hard links where the
    filesystem allows (no extra space; any walker sees plain files, which symlinks would not
    guarantee), copies otherwise. Built once under a temporary name and renamed, so a half-built
    tree is never taken for a cached one."""
    dest = corpora_dir() / name
    if dest.is_dir():
        return dest
    tmp = Path(tempfile.mkdtemp(prefix=f".{name}-", dir=dest.parent))

    def link_or_copy(src: str, dst: str) -> None:
        try:
            os.link(src, dst)
        except OSError:
            shutil.copy2(src, dst)

    try:
        for key, src in parts.items():
            shutil.copytree(src, tmp / key, symlinks=True, copy_function=link_or_copy)
        tmp.rename(dest)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return dest
