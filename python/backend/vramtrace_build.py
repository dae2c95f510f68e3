"""vramtrace_build — the PEP 517 build backend behind `pip install .` and `make wheel`.

Runs `make all` (the Makefile builds build/vramtrace and build/libvramtrace.so) and packs a
platform wheel by hand with the standard library only, so building needs no download:
  vramtrace-V.data/scripts/vramtrace                -> <prefix>/bin/vramtrace (on PATH)
  vramtrace-V.data/data/lib/vramtrace/libvramtrace.so -> <prefix>/lib/vramtrace/ (where
                                                      `vramtrace run` looks: ../lib/vramtrace/)
  vramtrace-V.data/data/share/doc/vramtrace/         -> <prefix>/share/doc/vramtrace/ (README.md
                                                      and docs/*.md, the pages --help cites)
  vramtrace/__init__.py, __main__.py                  -> `python -m vramtrace ...`
"""
import base64
import hashlib
import io
import os
import re
import subprocess
import sys
import sysconfig
import tarfile
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NAME = "vramtrace"
SUMMARY = "GPU memory profiler for PyTorch training (LD_PRELOAD capture + analyzer CLI)"


def _version():
    """The version the CLI prints (analyzer/cmd/main.c VT_VERSION_STRING)."""
    with open(os.path.join(ROOT, "analyzer", "cmd", "main.c"), encoding="utf-8") as f:
        m = re.search(r'#define VT_VERSION_STRING "([^"]+)"', f.read())
    if not m:
        raise RuntimeError("vramtrace_build: no VT_VERSION_STRING in analyzer/cmd/main.c")
    return m.group(1)


def _tag():
    """py3-none-<platform>: the wheel holds native programs, no Python extension."""
    plat = re.sub(r"[^A-Za-z0-9_]", "_", sysconfig.get_platform())
    return "py3-none-" + plat


def _metadata():
    return (
        "Metadata-Version: 2.1\n"
        f"Name: {NAME}\n"
        f"Version: {_version()}\n"
        f"Summary: {SUMMARY}\n"
        "Requires-Python: >=3.8\n"
        "Description-Content-Type: text/markdown\n\n"
        "See README.md: `vramtrace run -- python train.py`, then `vramtrace report FILE`.\n"
    )


def _wheel_file():
    return (
        "Wheel-Version: 1.0\n"
        "Generator: vramtrace_build\n"
        "Root-Is-Purelib: false\n"
        f"Tag: {_tag()}\n"
    )


def _make():
    """Builds the binary and the preload library; returns the build directory."""
    build = os.environ.get("BUILD", "build")
    if not os.path.isabs(build):
        build = os.path.join(ROOT, build)
    cmd = [os.environ.get("MAKE", "make"), "-C", ROOT, "--no-print-directory"]
    if "MAKEFLAGS" not in os.environ:  # under `make wheel` the jobserver is inherited
        cmd.append("-j" + str(max(1, min(os.cpu_count() or 1, 8))))
    cmd += ["BUILD=" + build, "all"]
    print("vramtrace_build: " + " ".join(cmd), file=sys.stderr)
    subprocess.run(cmd, check=True, stdout=sys.stderr)
    for f in ("vramtrace", "libvramtrace.so"):
        if not os.path.isfile(os.path.join(build, f)):
            raise RuntimeError(f"vramtrace_build: make did not produce {build}/{f}")
    return build


def _dist_info():
    return f"{NAME}-{_version()}.dist-info"


def _record_line(arc, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{arc},sha256={digest},{len(data)}"


def _files(build):
    """(archive name, bytes, mode) of everything in the wheel but RECORD."""
    v = _version()
    data = f"{NAME}-{v}.data"
    out = []
    pkg = os.path.join(ROOT, "python", NAME)
    for f in sorted(os.listdir(pkg)):
        if f.endswith(".py"):
            with open(os.path.join(pkg, f), "rb") as fh:
                out.append((f"{NAME}/{f}", fh.read(), 0o644))
    with open(os.path.join(build, "vramtrace"), "rb") as fh:
        out.append((f"{data}/scripts/vramtrace", fh.read(), 0o755))
    with open(os.path.join(build, "libvramtrace.so"), "rb") as fh:
        out.append((f"{data}/data/lib/vramtrace/libvramtrace.so", fh.read(), 0o755))
    # the pages `--help` and the reports cite, where `make install` puts them too
    doc = f"{data}/data/share/doc/{NAME}"
    with open(os.path.join(ROOT, "README.md"), "rb") as fh:
        out.append((f"{doc}/README.md", fh.read(), 0o644))
    docs = os.path.join(ROOT, "docs")
    for f in sorted(os.listdir(docs)):  # (every file: the pages' image and data too)
        if os.path.isfile(os.path.join(docs, f)):
            with open(os.path.join(docs, f), "rb") as fh:
                out.append((f"{doc}/docs/{f}", fh.read(), 0o644))
    di = _dist_info()
    out.append((f"{di}/METADATA", _metadata().encode(), 0o644))
    out.append((f"{di}/WHEEL", _wheel_file().encode(), 0o644))
    return out


def _write_wheel(path, files):
    records = []
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as z:
        for arc, data, mode in files:
            info = zipfile.ZipInfo(arc, date_time=(2020, 1, 1, 0, 0, 0))
            info.external_attr = (0o100000 | mode) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, data)
            records.append(_record_line(arc, data))
        rec = f"{_dist_info()}/RECORD"
        records.append(f"{rec},,")
        info = zipfile.ZipInfo(rec, date_time=(2020, 1, 1, 0, 0, 0))
        info.external_attr = (0o100000 | 0o644) << 16
        z.writestr(info, "\n".join(records) + "\n")


# ---- PEP 517 hooks ----------------------------------------------------------------------


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    di = os.path.join(metadata_directory, _dist_info())
    os.makedirs(di, exist_ok=True)
    with open(os.path.join(di, "METADATA"), "w", encoding="utf-8") as f:
        f.write(_metadata())
    with open(os.path.join(di, "WHEEL"), "w", encoding="utf-8") as f:
        f.write(_wheel_file())
    return _dist_info()


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    build = _make()
    name = f"{NAME}-{_version()}-{_tag()}.whl"
    os.makedirs(wheel_directory, exist_ok=True)
    _write_wheel(os.path.join(wheel_directory, name), _files(build))
    return name


def build_sdist(sdist_directory, config_settings=None):
    """The tracked source files (git ls-files; without git: the tree minus build outputs)."""
    base = f"{NAME}-{_version()}"
    try:
        out = subprocess.run(["git", "-C", ROOT, "ls-files", "-z"], check=True,
                             capture_output=True).stdout
        names = [n for n in out.decode().split("\0") if n]
    except (OSError, subprocess.CalledProcessError):
        names = []
        skip = {".git", "build", ".deps", ".debs", "__pycache__"}
        for d, dirs, fs in os.walk(ROOT):
            dirs[:] = [x for x in dirs if x not in skip]
            names += [os.path.relpath(os.path.join(d, f), ROOT) for f in fs]
    os.makedirs(sdist_directory, exist_ok=True)
    name = base + ".tar.gz"
    with tarfile.open(os.path.join(sdist_directory, name), "w:gz", format=tarfile.PAX_FORMAT) as t:
        for n in sorted(names):
            p = os.path.join(ROOT, n)
            if os.path.isfile(p):
                t.add(p, arcname=f"{base}/{n}", recursive=False)
        pkg = io.BytesIO(_metadata().encode())
        info = tarfile.TarInfo(f"{base}/PKG-INFO")
        info.size = len(pkg.getvalue())
        t.addfile(info, pkg)
    return name
