"""python -m vramtrace ARGS: runs the installed vramtrace program with ARGS."""
import sys

from vramtrace import main

sys.exit(main())
