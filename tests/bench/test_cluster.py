#!/usr/bin/env python3
"""The emulated cluster (bench/cluster/acc-cluster), small and bounded: one case per ctest.

  test_cluster.py CASE     with ACC_CLUSTER (the harness) and ACC_BENCH (acc-bench) set

Cases: allreduce (acc's host backend across shaped nodes, checked), env (what each rank and
node command sees, and that nodes are apart), limits (the wall-clock limit, a failing rank, a
run killed outright and `cleanup`), no_root (the refusal and its exit status).  Every run uses a
prefix of its own, and every case checks that nothing of it is left.  Without root or network
namespaces a case says so and exits 77 (skipped), except no_root, which needs neither.
"""
import json
import os
import re
import secrets
import signal
import subprocess
import sys
import tempfile
import time

HARNESS = os.environ.get("ACC_CLUSTER", "")
BENCH = os.environ.get("ACC_BENCH", "")
SKIP = 77


class Fail(Exception):
    pass


def check(cond, what):
    if not cond:
        raise Fail(what)


def harness(args, timeout=120, **kw):
    return subprocess.run([sys.executable, HARNESS] + args, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, timeout=timeout, **kw)


def leftovers(prefix):
    """Namespaces, /etc/netns entries and state files of prefix."""
    ns = subprocess.run(["ip", "netns", "list"], stdout=subprocess.PIPE, text=True).stdout
    left = [l.split()[0] for l in ns.splitlines() if l.startswith(prefix + "-")]
    for d in ("/etc/netns", "/run/acc-cluster"):
        if os.path.isdir(d):
            left += [os.path.join(d, n) for n in os.listdir(d) if n.startswith(prefix + "-")]
    return left


def need_cluster(prefix):
    """Skip unless this machine can emulate a cluster."""
    p = harness(["run", "--prefix", prefix, "--nodes", "1", "--", "true"], timeout=60)
    if p.returncode == SKIP:
        print("skipped: " + p.stderr.strip())
        sys.exit(SKIP)
    check(p.returncode == 0, "a one-node run of 'true' failed: " + p.stderr)


def running(pid):
    """Is the process there and not a zombie?"""
    try:
        with open("/proc/%s/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def root_links():
    out = subprocess.run(["ip", "-o", "link"], stdout=subprocess.PIPE, text=True).stdout
    return sorted(re.findall(r"^\d+: ([^:@]+)", out, re.M))


def case_allreduce(prefix, tmp):
    """acc-bench on 2 nodes x 2 ranks (shared memory inside, shaped TCP between), every size
    checked against the reference."""
    check(os.access(BENCH, os.X_OK), "ACC_BENCH is not set to acc-bench")
    out = os.path.join(tmp, "out")
    p = harness(["run", "--prefix", prefix, "--nodes", "2", "--ranks-per-node", "2",
                 "--rate", "1gbit", "--timeout", "100", "--out", out, "--",
                 "env", "ACC_TOPO={topo}", BENCH, "--runtime", "host", "--rank", "{rank}",
                 "--nranks", "{nranks}", "--bootstrap", "{bootstrap}", "-b", "1K", "-e", "1M",
                 "-f", "32", "-n", "3", "-w", "1", "-c", "1"])
    check(p.returncode == 0, "the run failed (%d): %s" % (p.returncode, p.stderr))
    rows = [l.split() for l in p.stdout.splitlines() if l.strip() and not l.startswith("#")]
    check(len(rows) == 3, "expected rows for 1K, 32K and 1M:\n" + p.stdout)
    for r in rows:
        check(r[8] == "0" and r[12] == "0", "wrong elements: " + " ".join(r))
    check("on 4 ranks" in p.stdout, "the table is not of 4 ranks:\n" + p.stdout)
    with open(os.path.join(out, "summary.json")) as f:
        s = json.load(f)
    check(sorted(s["procs"]) == ["rank-0", "rank-1", "rank-2", "rank-3"] and
          all(v["rc"] == 0 for v in s["procs"].values()), "summary: %s" % s["procs"])


def case_env(prefix, tmp):
    """Each rank's environment and host name, the hosts file, memory shared within a node only,
    the per-node mode, and no link of the run in the host's namespace."""
    out = os.path.join(tmp, "out")
    before = root_links()
    script = ('echo "$RANK $WORLD_SIZE $LOCAL_RANK $LOCAL_WORLD_SIZE $NODE_RANK $NNODES '
              '$MASTER_ADDR $MASTER_PORT $CLUSTER_BOOTSTRAP $(hostname) '
              '$(getent hosts $(hostname) | cut -d" " -f1) {rank}/{node}"; '
              'if [ "$LOCAL_RANK" = 0 ]; then touch /dev/shm/mark-$NODE_RANK; '
              'touch $CLUSTER_OUT/up-$NODE_RANK; fi; sleep 2; ls /dev/shm')
    proc = subprocess.Popen([sys.executable, HARNESS, "run", "--prefix", prefix, "--nodes", "2",
                             "--ranks-per-node", "2", "--out", out, "--print", "all",
                             "--timeout", "60", "--", "sh", "-c", script],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    t = time.time() + 30
    while time.time() < t and not all(os.path.exists(os.path.join(out, "up-%d" % n))
                                      for n in (0, 1)):
        time.sleep(0.1)
    during = root_links()
    so, se = proc.communicate(timeout=60)
    check(proc.returncode == 0, "the run failed: " + se)
    check(during == before, "links appeared in the host's namespace: %s -> %s" %
          (before, during))
    for r in range(4):
        node, local = r // 2, r % 2
        want = ("%d 4 %d 2 %d 2 10.99.0.1 29500 10.99.0.1:29400 node%d 10.99.0.%d %d/%d" %
                (r, local, node, node, node + 1, r, node))
        with open(os.path.join(out, "rank-%d.out" % r)) as f:
            lines = f.read().split()
        check(" ".join(lines[:12]) == want, "rank %d saw '%s', not '%s'" %
              (r, " ".join(lines[:12]), want))
        # its node's mark only: /dev/shm is the node's own
        check(lines[12:] == ["mark-%d" % node], "rank %d's /dev/shm holds %s" % (r, lines[13:]))
    p = harness(["run", "--prefix", prefix, "--nodes", "3", "--ranks-per-node", "2",
                 "--per-node", "--print", "all", "--", "sh", "-c",
                 'echo "$NODE_RANK $NNODES $NPROC_PER_NODE ${RANK:-none} $WORLD_SIZE"'])
    check(p.returncode == 0, "the per-node run failed: " + p.stderr)
    got = sorted(l for l in p.stdout.splitlines() if l.strip())
    check(got == ["[node-%d] %d 3 2 none 6" % (n, n) for n in range(3)],
          "per-node commands saw %s" % got)
    p = harness(["run", "--prefix", prefix, "--nodes", "2", "--resolve", "loopback", "--",
                 "sh", "-c", 'getent hosts $(hostname) | cut -d" " -f1'])
    check(p.returncode == 0 and p.stdout.strip() == "127.0.0.1",
          "--resolve loopback: %s %s" % (p.stdout, p.stderr))


def case_limits(prefix, tmp):
    """The wall-clock limit, a failing rank ending the others, and a run killed outright, whose
    leftovers the next cleanup removes."""
    t0 = time.time()
    p = harness(["run", "--prefix", prefix, "--nodes", "2", "--timeout", "2", "--", "sleep",
                 "100"])
    check(p.returncode == 3, "a run past its limit exits 3, not %d: %s" % (p.returncode,
                                                                         p.stderr))
    check(time.time() - t0 < 20, "the limit of 2 s took %.1f s" % (time.time() - t0))
    check("wall-clock limit" in p.stderr, "no word of the limit: " + p.stderr)
    check(not leftovers(prefix), "left after the limit: %s" % leftovers(prefix))
    t0 = time.time()
    p = harness(["run", "--prefix", prefix, "--nodes", "2", "--grace", "1", "--timeout", "60",
                 "--", "sh", "-c", 'if [ "$RANK" = 1 ]; then echo broken >&2; exit 5; fi; '
                 'sleep 100'])
    check(p.returncode == 1, "a failed rank makes the run exit 1, not %d" % p.returncode)
    check(time.time() - t0 < 20, "the other ranks were not ended after the grace")
    check("rank-1 exited with 5" in p.stderr and "broken" in p.stderr,
          "the failure is not named with its stderr: " + p.stderr)
    check(not leftovers(prefix), "left after a failure: %s" % leftovers(prefix))
    # Killed outright while its ranks run: namespaces, processes and state stay behind ...
    out = os.path.join(tmp, "killed")
    proc = subprocess.Popen([sys.executable, HARNESS, "run", "--prefix", prefix, "--nodes", "2",
                             "--out", out, "--", "sh", "-c",
                             "touch $CLUSTER_OUT/up-$RANK; sleep 100"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    t = time.time() + 30
    while time.time() < t and not all(os.path.exists(os.path.join(out, "up-%d" % r))
                                      for r in (0, 1)):
        time.sleep(0.1)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    left = leftovers(prefix)
    check(left, "a killed run should leave its namespaces for cleanup to find")
    ns = [x for x in left if not x.startswith("/")]
    pids = sum((subprocess.run(["ip", "netns", "pids", n], stdout=subprocess.PIPE,
                               text=True).stdout.split() for n in ns), [])
    check(pids, "the killed run's ranks should still run")
    # ... until cleanup removes them.
    p = harness(["cleanup", "--prefix", prefix])
    check(p.returncode == 0, "cleanup failed: " + p.stderr)
    check(not leftovers(prefix), "left after cleanup: %s" % leftovers(prefix))
    for pid in pids:
        check(not running(pid), "process %s outlived cleanup" % pid)


def case_no_root(prefix, tmp):
    """Without root: a message saying so, exit status 77, nothing made."""
    cmd = [sys.executable, HARNESS, "run", "--prefix", prefix, "--nodes", "2", "--", "true"]
    if os.geteuid() == 0:
        if not os.path.exists("/usr/bin/setpriv"):
            print("skipped: setpriv (util-linux) is needed to drop root")
            sys.exit(SKIP)
        cmd = ["setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups"] + cmd
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       timeout=60, cwd="/")
    check(p.returncode == SKIP, "without root the exit status is 77, not %d" % p.returncode)
    check("root" in p.stderr, "the message does not say root is needed: " + p.stderr)
    p = harness(["run", "--prefix", "Bad!", "--", "true"])
    check(p.returncode == 2, "a bad prefix is a usage error (2), not %d" % p.returncode)
    p = harness(["run", "--rate", "fast", "--", "true"])
    check(p.returncode == 2 and "--rate" in p.stderr, "a bad rate: %s" % p.stderr)


CASES = {"allreduce": case_allreduce, "env": case_env, "limits": case_limits,
         "no_root": case_no_root}


def main():
    if len(sys.argv) != 2 or sys.argv[1] not in CASES or not os.path.exists(HARNESS):
        print("usage: ACC_CLUSTER=... test_cluster.py %s" % "|".join(CASES), file=sys.stderr)
        return 2
    prefix = "t" + secrets.token_hex(4)
    with tempfile.TemporaryDirectory(prefix="acc-cluster-test-") as tmp:
        os.chmod(tmp, 0o755)
        try:
            if sys.argv[1] != "no_root":
                need_cluster(prefix)
            CASES[sys.argv[1]](prefix, tmp)
        except Fail as e:
            print("FAIL: %s" % e)
            return 1
        finally:
            if os.geteuid() == 0 and leftovers(prefix):
                harness(["cleanup", "--prefix", prefix, "--all"])
    check_left = leftovers(prefix) if os.geteuid() == 0 else []
    if check_left:
        print("FAIL: left behind: %s" % check_left)
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
