#!/usr/bin/env python3
"""Two links per node, measured: acc's host backend, PyTorch's gloo and Open MPI, allreduce of
floats across 2 and 4 emulated nodes that each have two links (eth0 and eth1, each on a bridge
of its own, each shaped to RATE), every program once over one link and once over both, in the
same run.  Prints, and writes into OUT: multirail.md (busbw per program, size and link count, the
ratio two links / one link, and whether acc reaches 1.8x at every size from 4 MiB: the target
of issue 27) and multirail.json.

How each program is told its interfaces, as its users tell it:
  acc       ACC_SOCKET_IFNAME=eth0 / eth0,eth1 (the fallback ring, no tables: the same plan at
            both settings, so the ratio is the links')
  gloo      GLOO_SOCKET_IFNAME=eth0 / eth0,eth1 (gloo_allreduce.py, PyTorch's torch venv)
  Open MPI  --mca btl_tcp_if_include eth0 / eth0,eth1, with its defaults and with its ring
            forced, the faster per size (as peers.py)

The one-link figures come from the same two-link cluster with the second link idle.  Every
setting runs --repeats times, alternating, and each size's figure is the median.

    multirail.py --out bench/results [--nodes N] [--rate 1gbit] [--repeats 3] [--quick] [--rt]

at 2 and at 4 nodes, or at N alone.

Needs root (the emulated nodes), mpicc and mpirun, and PyTorch (--python).
"""
import argparse
import importlib.machinery
import importlib.util
import os
import subprocess
import sys

from benchlib import (HARNESS, HERE, ROOT, cluster, common_args, fmt, load_note, log, md_table, run,
                      save_json, tool, torch_python_arg, write)
from peers import OMPI_ENV, RING, acc_table, best, median_table, mpi_bench, mpi_table

PROGRAMS = ("acc", "gloo", "Open MPI")
LINKS = {1: "eth0", 2: "eth0,eth1"}
# acc's target: two links give at least this much of one link's busbw from this size on.
TARGET, TARGET_FROM = 1.8, 4 << 20


def harness_module():
    """acc-cluster as a module: its rate parser and its defaults."""
    loader = importlib.machinery.SourceFileLoader("acc_cluster", HARNESS)
    module = importlib.util.module_from_spec(importlib.util.spec_from_loader(loader.name, loader))
    loader.exec_module(module)
    return module


def sweep_args(a):
    return ["-b", "256K", "-e", a.max, "-f", "4", "-n", str(a.iters), "-w", "1"]


def measure(a, nodes, program, links, rt, mpi):
    """One sweep of one program over `links` of the two links of `nodes` nodes: {size: (us,
    busbw, what)}."""
    shape = ["--nodes", str(nodes), "--links", "2", "--rate", a.rate, "--prefix", "accmr"]
    ifs = LINKS[links]
    if program == "acc":
        cmd = rt + ["env", "ACC_LOG_LEVEL=error", "ACC_DB=/nonexistent/acc.db",
                    "ACC_SOCKET_IFNAME=" + ifs, tool("acc-bench"), "--runtime", "host", "--rank",
                    "{rank}", "--nranks", "{nranks}", "--bootstrap", "{bootstrap}", "--topo",
                    "{topo}"] + sweep_args(a) + ["-c", "0"]
        return acc_table(cluster(shape, cmd))
    if program == "gloo":
        cmd = rt + ["env", "GLOO_SOCKET_IFNAME=" + ifs, a.python,
                    os.path.join(HERE, "gloo_allreduce.py")] + sweep_args(a)
        return {k: v + ("gloo",) for k, v in mpi_table(cluster(shape, cmd)).items()}
    mpirun = ["mpirun", "--hostfile", "$CLUSTER_HOSTFILE", "-np", str(nodes), "--map-by",
              "node", "--bind-to", "none", "--mca", "plm_rsh_agent", "$CLUSTER_RSH", "--mca",
              "btl", "tcp,self", "--mca", "btl_tcp_if_include", ifs, "--mca",
              "oob_tcp_if_include", "eth0"]
    tables = [mpi_table(cluster(shape + ["--rsh"], ["sh", "-c", " ".join(
        rt + mpirun + extra + [mpi] + sweep_args(a))], env=OMPI_ENV)) for extra in ([], RING)]
    return {k: v + ("Open MPI",) for k, v in best(*tables).items()}


def section(a, nodes, figures, before, after):
    """The Markdown and the JSON of one node count's figures {program: {links: {size: (us,
    ...)}}}."""
    body, ok, short = [], True, []
    sizes = sorted(set.intersection(*[set(figures[p][l]) for p in PROGRAMS for l in LINKS]))
    # busbw from the times, not from the programs' rounded columns
    busbw = {p: {l: {s: s / figures[p][l][s][0] / 1e3 * 2 * (nodes - 1) / nodes
                     for s in sizes} for l in LINKS} for p in PROGRAMS}
    for size in sizes:
        row = ["%d KiB" % (size >> 10) if size < 1 << 20 else "%d MiB" % (size >> 20)]
        for p in PROGRAMS:
            one, two = busbw[p][1][size], busbw[p][2][size]
            ratio = two / one
            row += [fmt(one, 3), fmt(two, 3), "**%s**" % fmt(ratio, 2)]
            if p == "acc" and size >= TARGET_FROM and ratio < TARGET:
                ok = False
                short.append("%d MiB: %.2fx" % (size >> 20, ratio))
        body.append(row)
    head = ["size"] + [h % p for p in PROGRAMS for h in ("%s 1 link", "%s 2 links", "%s ratio")]
    md = "### %d emulated nodes\n\n" % nodes + md_table(head, body)
    md += ("\nacc at two links >= %.1fx its one-link busbw at every size from 4 MiB: **%s**%s\n"
           % (TARGET, "yes" if ok else "no", "" if ok else " (short at %s)" % ", ".join(short)))
    # A ratio is only as good as its one-link figure: say how much of the link each filled.
    harness = harness_module()
    rate = harness.rate_gbps(a.rate) / 8
    burst = harness.parser().parse_args(["run", "--", "true"]).burst
    top = sizes[-1]
    md += ("\nOne link at %d MiB carries %s of its %.3f GB/s: a program that leaves part of one "
           "link idle gains more than the second link's share.  At %d KiB a call's bytes fit in "
           "the token bucket's burst (%s per link), so the figures there can exceed the shaped "
           "rate.  Before: %s; after: %s.\n"
           % (top >> 20, ", ".join("%s %.0f %%" % (p, 100 * busbw[p][1][top] / rate)
                                   for p in PROGRAMS), rate, sizes[0] >> 10, burst, before, after))
    js = {"nodes": nodes, "target_met": ok, "load_before": before, "load_after": after,
          "busbw": {p: {str(l): {str(s): round(busbw[p][l][s], 4) for s in sizes} for l in LINKS}
                    for p in PROGRAMS},
          "us": {p: {str(l): {str(s): figures[p][l][s][0] for s in sizes} for l in LINKS}
                 for p in PROGRAMS}}
    return md, js


def document(a, sections, commit):
    """multirail.md: what was measured and how, then each node count's section."""
    sweep = " ".join(sweep_args(a))
    md = ("## Two links per node: acc, gloo and Open MPI\n\n"
          "Allreduce of floats across emulated nodes of one rank (bench/cluster/acc-cluster "
          "`--links 2`): each node has eth0 and eth1, each on a bridge and a subnet of its own, "
          "each shaped to %s per direction.  busbw in GB/s (the slowest rank's mean, out of "
          "place), each figure the median of %d sweeps of %d timed calls after one warm-up; "
          "*ratio* is two links' busbw over one link's.  One link is the same cluster with "
          "eth1 idle.\n\n" % (a.rate, a.repeats, a.iters))
    md += ("- acc: `ACC_SOCKET_IFNAME=eth0` against `eth0,eth1`; its host backend opens one "
           "socket per interface on every connection between nodes and stripes each message "
           "across them.  The fallback ring ran at both settings (no tables), so the ratio is "
           "the links' alone.\n"
           "- gloo: PyTorch %s, `GLOO_SOCKET_IFNAME=eth0` against `eth0,eth1` (gloo_allreduce.py)"
           ".  PyTorch's gloo process group makes a context per interface and hands each "
           "collective to one of them in turn, so one allreduce at a time crosses one link.\n"
           "- Open MPI %s: `--mca btl_tcp_if_include eth0` against `eth0,eth1`, its defaults and "
           "its ring forced (coll_tuned algorithm 4), the faster per size.\n\n" %
           (a.torch_version, a.mpi_version))
    md += "\n".join(m for m, _ in sections)
    md += ("\n### Conditions\n\n"
           "- commit %s; %s\n"
           "- the machine is shared (other builds and tests ran beside this one: the load of each "
           "node count is in its section), and the ranks of all nodes share its cores.\n"
           "- %s\n" % (commit, "real-time priority for every rank (--rt)" if a.rt
                        else "normal priority", a.machine))
    md += ("\n### Commands\n\n    bench/cluster/multirail.py %s\n\nwhich runs, per node count N, "
           "repeat and link count (`IFS` eth0, then eth0,eth1; the order alternates between "
           "repeats)%s:\n\n"
           "    acc-cluster run --nodes N --links 2 --rate %s -- env ACC_SOCKET_IFNAME=$IFS "
           "ACC_DB=/nonexistent/acc.db acc-bench --runtime host --rank {rank} --nranks {nranks} "
           "--bootstrap {bootstrap} --topo {topo} %s -c 0\n"
           "    acc-cluster run --nodes N --links 2 --rate %s -- env GLOO_SOCKET_IFNAME=$IFS "
           "python gloo_allreduce.py %s\n"
           "    acc-cluster run --nodes N --links 2 --rate %s --rsh -- mpirun --hostfile "
           "$CLUSTER_HOSTFILE -np N --map-by node --mca plm_rsh_agent $CLUSTER_RSH --mca btl "
           "tcp,self --mca btl_tcp_if_include $IFS [ring: --mca coll_tuned_use_dynamic_rules 1 "
           "--mca coll_tuned_allreduce_algorithm 4] mpi_allreduce %s\n" %
           (" ".join(a.argv), ", every program under `chrt -f 10` (--rt)" if a.rt else "",
            a.rate, sweep, a.rate, sweep, a.rate, sweep))
    js = {"rate": a.rate, "repeats": a.repeats, "commit": commit, "rt": a.rt,
          "target_met": all(j["target_met"] for _, j in sections),
          "counts": [j for _, j in sections]}
    return md, js


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    common_args(p, "/tmp/acc-multirail")
    torch_python_arg(p)
    p.add_argument("--quick", action="store_true", help="one repeat, up to 16 MiB")
    p.add_argument("--repeats", type=int, default=3, help="sweeps per setting (default 3)")
    p.set_defaults(nodes=None)
    a = p.parse_args()
    counts = [a.nodes] if a.nodes else [2, 4]
    a.argv = sys.argv[1:]
    if a.quick:
        a.repeats, a.max, a.iters = 1, "16M", 3
    else:
        a.max, a.iters = "64M", 5
    rt = ["chrt", "-f", "10"] if a.rt else []
    mpi = mpi_bench()
    a.mpi_version = run(["sh", "-c", "mpirun --version | head -1"]).strip().split()[-1]
    a.torch_version = run([a.python, "-c", "import torch; print(torch.__version__)"]).strip()
    a.machine = "%d CPUs (%s), Linux %s" % (
        os.cpu_count(), open("/proc/cpuinfo").read().split("model name")[1].split(":")[1]
        .split("\n")[0].strip(), os.uname().release)
    git = lambda *args: subprocess.run(["git", "-C", ROOT] + list(args), stdout=subprocess.PIPE,
                                       text=True).stdout.strip()
    commit = git("rev-parse", "--short", "HEAD") + (
        " (with uncommitted changes)" if git("status", "--porcelain", "--untracked-files=no")
        else "")
    sections = []
    for nodes in counts:
        before = load_note()
        runs = {p: {l: [] for l in LINKS} for p in PROGRAMS}
        for rep in range(a.repeats):
            for links in (1, 2) if rep % 2 == 0 else (2, 1):
                for program in PROGRAMS:
                    log("%d nodes, repeat %d of %d: %s over %s" %
                        (nodes, rep + 1, a.repeats, program, LINKS[links]))
                    runs[program][links].append(measure(a, nodes, program, links, rt, mpi))
        figures = {p: {l: median_table(runs[p][l]) for l in LINKS} for p in PROGRAMS}
        sections.append(section(a, nodes, figures, before, load_note()))
    md, js = document(a, sections, commit)
    write(os.path.join(a.out, "multirail.md"), md)
    save_json(os.path.join(a.out, "multirail.json"), js)
    print(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
