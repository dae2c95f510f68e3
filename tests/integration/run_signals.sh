#!/bin/sh
# run_signals.sh — `vramtrace run` gives the traced program the signals it would get untraced,
# exactly once: SIGTERM and SIGUSR1 sent to run reach it once and run ends with its status (a
# SIGUSR1 had killed run, exit 138, no summary, the program left running alone); Ctrl-C on a
# terminal (SIGINT to the whole foreground process group) reaches it once, not a second time
# forwarded by run; a SIGTERM sent right after run started is never lost (it had been, while run
# read the exec's result: the program slept on); an inherited SIGCHLD ignored (which has the
# kernel reap children) neither loses the program's status nor changes what the program inherits.
# SIGPROF, SIGVTALRM, SIGIO, SIGPWR, SIGXCPU, SIGXFSZ and real-time signals sent to run reach the
# program, run ending with its status (they had killed run, the program left running alone); a
# SIGTSTP to run stops both, a SIGCONT continues both (run had stopped alone).
# runs: alone (signals sent at chosen moments of the traced program's life)
set -u
fail() { echo "run_signals: $*"; exit 1; }
command -v python3 >/dev/null 2>&1 || { echo "SKIP run_signals: no python3"; exit 77; }
cat >prog.py <<'EOF'
import signal, sys, time
n = {}
def h(s, f):
    n[s] = n.get(s, 0) + 1
for s in (signal.SIGTERM, signal.SIGINT, signal.SIGUSR1):
    signal.signal(s, h)
print("ready", flush=True)
end = time.time() + float(sys.argv[1])
while time.time() < end and not n:
    time.sleep(0.01)
time.sleep(0.3)  # (a second one, if any, comes now)
print("got", n.get(signal.SIGTERM, 0), n.get(signal.SIGINT, 0), n.get(signal.SIGUSR1, 0), flush=True)
sys.exit(7)
EOF
# SIGCHLD ignored by whoever started run: the program's status is still run's (it had returned
# 0 for an exit 3, a SIGKILL, and with --watch), and the program still finds it ignored
chld() { python3 -c 'import os, signal, sys
signal.signal(signal.SIGCHLD, signal.SIG_IGN)
os.execv(sys.argv[1], sys.argv[1:])' "$@"; }
export LD_LIBRARY_PATH="$FAKE"
chld "$VT" run -q -o c1.vt -- sh -c 'exit 3' 2>/dev/null
[ $? = 3 ] || fail "SIGCHLD ignored: an exit 3 not returned"
chld "$VT" run -q --watch -o c2.vt -- sh -c 'exit 3' >/dev/null 2>&1
[ $? = 3 ] || fail "SIGCHLD ignored, --watch: an exit 3 not returned"
chld "$VT" run -q -o c3.vt -- sh -c 'kill -KILL $$' 2>/dev/null
[ $? = 137 ] || fail "SIGCHLD ignored: a SIGKILL not returned as 137"
got=$(chld "$VT" run -q -o c4.vt -- python3 -c 'import signal; print(signal.getsignal(signal.SIGCHLD) == signal.SIG_IGN)' 2>/dev/null)
[ "$got" = True ] || fail "SIGCHLD ignored: the program finds it [$got]"

python3 - "$VT" <<'PY' || exit 1
import os, pty, re, signal, subprocess, sys, time
vt = sys.argv[1]
bad = []
signal.pthread_sigmask(signal.SIG_SETMASK, [])  # (what starts run may block some)

def started(p):
    line = p.stdout.readline()
    assert line.strip() == b"ready", line

# sent to run alone: forwarded once; run ends with the program's status
for sig, want in ((signal.SIGTERM, b"got 1 0 0"), (signal.SIGUSR1, b"got 0 0 1")):
    p = subprocess.Popen([vt, "run", "-q", "-o", "s.vt", "--", sys.executable, "prog.py", "5"],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    started(p)
    p.send_signal(sig)
    out, _ = p.communicate(timeout=20)
    if out.strip() != want or p.returncode != 7:
        bad.append("%s to run: %r, exit %d (want %r, exit 7)" % (sig.name, out, p.returncode, want))

# Ctrl-C on a terminal: the program gets SIGINT from the terminal, not once more from run
try:
    pid, fd = pty.fork()
except OSError as e:  # (no pseudo-terminal here: that part is not checked, said)
    print("run_signals: no pseudo-terminal (%s): Ctrl-C not checked" % e)
    pid = fd = None
if pid == 0:
    os.execv(vt, [vt, "run", "-q", "-o", "t.vt", "--", sys.executable, "prog.py", "5"])
buf = b""
t0 = time.time()
while fd is not None and b"ready" not in buf and time.time() - t0 < 20:
    buf += os.read(fd, 1024)
if fd is not None:
    os.write(fd, b"\x03")
while fd is not None:  # to the end (EIO once the terminal's last process is gone)
    try:
        chunk = os.read(fd, 1024)
    except OSError:
        break
    if not chunk:
        break
    buf += chunk
if pid:
    os.waitpid(pid, 0)
got = re.findall(rb"got \d+ \d+ \d+", buf)
if fd is not None and got != [b"got 0 1 0"]:
    bad.append("Ctrl-C on a terminal: %r (want one SIGINT)" % buf)

# the other signals that end a program by default: forwarded, run ends with the program's status
# (run had been killed by each, exit 128+N, no summary, the program left running alone)
def sleeper(seconds):
    p = subprocess.Popen([vt, "run", "-q", "-o", "o.vt", "--", "sh", "-c",
                          "echo ready; exec sleep %d" % seconds],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    started(p)
    return p

for sig in (signal.SIGPROF, signal.SIGVTALRM, signal.SIGIO, signal.SIGPWR, signal.SIGXCPU,
            signal.SIGXFSZ, signal.SIGRTMIN, signal.SIGRTMIN + 3, signal.SIGRTMAX):
    p = sleeper(5)
    p.send_signal(sig)
    p.communicate(timeout=20)
    if p.returncode != 128 + sig:
        bad.append("signal %d to run: exit %d (want %d: the program's)" % (sig, p.returncode, 128 + sig))

# SIGTSTP to run alone stops run and the program; SIGCONT to run continues both (run had
# stopped alone, the program running on)
def state(pid):
    return open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()[0]

p = sleeper(2)
kids = open("/proc/%d/task/%d/children" % (p.pid, p.pid)).read().split()
prog = int(kids[0]) if kids else 0
p.send_signal(signal.SIGTSTP)
time.sleep(0.3)
stopped = (state(p.pid), state(prog)) if prog else ("?", "?")
p.send_signal(signal.SIGCONT)
time.sleep(0.3)
going = (state(p.pid), state(prog)) if prog else ("?", "?")
p.communicate(timeout=20)
if stopped != ("T", "T") or "T" in going or p.returncode != 0:
    bad.append("SIGTSTP, SIGCONT to run: run, program %s after the stop, %s after the continue, "
               "exit %d (want both T, then neither, exit 0)" % (stopped, going, p.returncode))

# a SIGTERM right after run started: never lost (the program would sleep 5 s on)
lost = 0
for i in range(30):
    t = time.time()
    p = subprocess.Popen([vt, "run", "-q", "-o", "e.vt", "--", sys.executable, "-c",
                          "import time; time.sleep(5)"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(0.0005 + 0.0001 * i)
    p.send_signal(signal.SIGTERM)
    p.wait(timeout=20)
    lost += time.time() - t > 3
if lost:
    bad.append("a SIGTERM right after the start was lost %d times of 30" % lost)
if bad:
    sys.exit("run_signals: " + "; ".join(bad))
PY
exit 0
