# pythons.sh — sourced by tests/integration/py_*.sh: lists the CPython 3.10-3.13 installs
# found under $(pyenv root)/versions (or $VT_PYTHON_ROOT), one "PREFIX MAJOR.MINOR" a line,
# newest patch release of each minor version; with none there, the python3.1x found on PATH
# (by sys.base_prefix) that have their headers. Prints nothing when there are none.
vt_pythons() {
    root=${VT_PYTHON_ROOT:-}
    if [ -z "$root" ]; then
        if command -v pyenv >/dev/null 2>&1; then root="$(pyenv root)/versions"
        else root="$HOME/.pyenv/versions"; fi
    fi
    found=""
    for mm in 3.10 3.11 3.12 3.13; do
        best=""
        for d in "$root/$mm".*; do
            case ${d##*/} in *[!0-9.]*) continue ;; esac
            [ -x "$d/bin/python$mm" ] && [ -f "$d/include/python$mm/Python.h" ] || continue
            best=$d
        done
        [ -n "$best" ] && found="$found$best $mm
"
    done
    if [ -z "$found" ]; then
        for mm in 3.10 3.11 3.12 3.13; do
            command -v "python$mm" >/dev/null 2>&1 || continue
            p=$("python$mm" -c 'import sys; print(sys.base_prefix)' 2>/dev/null) || continue
            [ -x "$p/bin/python$mm" ] && [ -f "$p/include/python$mm/Python.h" ] && found="$found$p $mm
"
        done
    fi
    printf '%s' "$found"
}
