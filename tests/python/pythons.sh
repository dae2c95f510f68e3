# pythons.sh — sourced by tests/integration/py_*.sh: lists the CPython 3.10-3.13 installs
# found under $(pyenv root)/versions (or $VT_PYTHON_ROOT), one "PREFIX MAJOR.MINOR" a line,
# newest patch release of each minor version. Prints nothing when there are none.
vt_pythons() {
    root=${VT_PYTHON_ROOT:-}
    if [ -z "$root" ]; then
        if command -v pyenv >/dev/null 2>&1; then root="$(pyenv root)/versions"
        else root="$HOME/.pyenv/versions"; fi
    fi
    [ -d "$root" ] || return 0
    for mm in 3.10 3.11 3.12 3.13; do
        best=""
        for d in "$root/$mm".*; do
            case ${d##*/} in "$mm".[0-9]*) ;; *) continue ;; esac
            case ${d##*/} in *[!0-9.]*) continue ;; esac
            [ -x "$d/bin/python$mm" ] && [ -f "$d/include/python$mm/Python.h" ] || continue
            best=$d
        done
        [ -n "$best" ] && echo "$best $mm"
    done
}
