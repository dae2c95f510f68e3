"""vramtrace — GPU memory profiler for PyTorch training, installed by pip.

The profiler is a C program (bin/vramtrace) with its LD_PRELOAD library in
lib/vramtrace/; this package only finds that program and runs it, so that
`python -m vramtrace ARGS` is `vramtrace ARGS`.
"""
import os
import shutil
import sys
import sysconfig

__all__ = ["binary", "main"]


def binary():
    """Path of the vramtrace program this package was installed with, or None.

    The file is the one pip recorded for this distribution (any install scheme:
    venv, --user, --prefix); failing that, the scripts directory, then PATH."""
    try:
        from importlib.metadata import PackageNotFoundError, distribution

        try:
            for f in distribution("vramtrace").files or []:
                if f.name == "vramtrace" and f.parts[0] == "..":
                    p = os.path.realpath(str(f.locate()))
                    if os.access(p, os.X_OK):
                        return p
        except PackageNotFoundError:
            pass
    except ImportError:  # Python < 3.8
        pass
    p = os.path.join(sysconfig.get_path("scripts"), "vramtrace")
    if os.access(p, os.X_OK):
        return p
    return shutil.which("vramtrace")


def main(argv=None):
    """Replaces this process with `vramtrace ARGV...` (exit status: the program's own)."""
    args = sys.argv[1:] if argv is None else list(argv)
    exe = binary()
    if exe is None:
        sys.stderr.write("vramtrace: the vramtrace program was not found next to this Python "
                         "package (reinstall with `pip install .` from the source tree)\n")
        return 2
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(exe, [exe] + args)
    return 2  # not reached
