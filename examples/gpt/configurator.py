"""examples/gpt/configurator.py — nanoGPT-style configuration: config files of `key = value`
lines (executed, like nanoGPT's configurator.py) and --key=value overrides, checked against a
dict of defaults. Shared by examples/gpt/train.py and the simulation examples/sim/sim_train.py."""
import ast
import sys


class _Scope(dict):
    """The namespace a config file runs in: remembers which names it assigned."""

    def __init__(self, base):
        super().__init__(base)
        self.assigned = []

    def __setitem__(self, key, value):
        self.assigned.append(key)
        super().__setitem__(key, value)


def parse_config(argv, defaults, prog):
    """Reads config files (executed, `key = value` lines) and --key=value overrides, in order,
    over a copy of defaults. Returns (config dict, set of keys given). On an unknown key, a value
    of the wrong type or an unreadable file: prints a message naming the argument (prefixed by
    prog) and raises SystemExit(2)."""
    cfg = dict(defaults)
    given = set()
    for arg in argv:
        if not arg.startswith("--"):
            try:
                with open(arg) as f:
                    src = f.read()
            except OSError as e:
                print(f"{prog}: cannot read config file {arg}: {e.strerror} "
                      "(give a path to a file of `key = value` lines)", file=sys.stderr)
                sys.exit(2)
            scope = _Scope(cfg)
            exec(compile(src, arg, "exec"), {}, scope)
            for k in scope.assigned:
                if k in cfg:
                    cfg[k] = scope[k]
                    given.add(k)
            continue
        key, sep, val = arg[2:].partition("=")
        if not sep or key not in cfg:
            print(f"{prog}: unknown option {arg} (known: {', '.join(sorted(cfg))}; "
                  "spell it --key=value)", file=sys.stderr)
            sys.exit(2)
        try:
            value = ast.literal_eval(val)
        except (SyntaxError, ValueError):
            value = val  # a bare string such as --dtype=bfloat16
        if isinstance(cfg[key], bool) and isinstance(value, str) and value.lower() in ("true", "false"):
            value = value.lower() == "true"
        if isinstance(cfg[key], float) and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        if type(value) is not type(cfg[key]):
            print(f"{prog}: {arg}: expected a {type(cfg[key]).__name__}, got {val!r}",
                  file=sys.stderr)
            sys.exit(2)
        cfg[key] = value
        given.add(key)
    return cfg, given
