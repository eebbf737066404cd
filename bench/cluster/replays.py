#!/usr/bin/env python3
"""acc's training-time claims measured: every shipped model profile replayed on the fusion
engine across an emulated cluster (acc-cluster: N nodes of one rank, shaped TCP links), under
DDP's defaults, Horovod's, negotiate, acc's stored optimum and online tuning, R repeats, each
measured beside the iteration simulator's prediction; then ranks finishing their gradients in
orders of their own (--jitter) under DDP's fixed order, Horovod's coordinator and negotiate.

    replays.py --out bench/results [--models resnet50,...] [--repeats 3] [--rate 1gbit]
               [--nodes 4] [--net-gbps 25] [--rt] [--quick]

The stated cluster: N nodes of one GPU each (the profile's own GPU: the compute time is its
published one), on NET-GBPS Gb/s Ethernet.  The emulated links run at RATE, slower by a factor
S = RATE / NET-GBPS, so every gradient and every policy's fusion sizes are scaled by S
(acc-bench --grad-scale): communication keeps the share of the iteration it has on the stated
network, and each bucket holds the tensors it would hold there.  What is not scaled: the
network's latency (the emulated TCP's, tens of microseconds), the CPU's copies (priced by the
prediction), and the cores the ranks share.  acc's stored optimum is what acc-tune finds for the
stated cluster itself (its GPUs, its network; fusion size x streams x compression none, fp16 or
bf16), online tuning searches the same from there; the host backend runs the tables it measured
on the emulated cluster (acc-bench --tables).

Writes OUT/replays.md, replays.csv, replays.json, replays.svg (speedup over DDP per model and
policy), negotiation.md/.svg.  Needs root (acc-cluster).
"""
import argparse
import csv
import io
import os
import sys

from benchlib import (ROOT, cluster, common_args, fmt, fresh_db, load_note, log, md_table, median,
                      parse_policy_rows, run, save_json, svg_bars, tool, write)

# The GPU each profile has a published compute time for (acc-compile's synthetic arch names;
# vit-b16's only entry is an sm_86 part: AWS g5's A10G, written as a topology file).
MODELS = [("resnet50", "a100"), ("vgg16", "v100"), ("bert-base", "a100"),
          ("bert-large", "a100"), ("gpt2", "a100"), ("gpt2-xl", "h100"), ("vit-b16", "a10g")]
# Iterations per policy: the largest models' iterations take seconds on the emulated links.
ITERS = {"gpt2-xl": 8, "bert-large": 12}
POLICIES = "ddp,horovod,negotiate,acc,online"
LABELS = {"ddp": "DDP defaults", "horovod": "Horovod defaults", "negotiate": "negotiate",
          "acc": "acc stored optimum", "online": "acc online tuning"}


def topology(a, arch):
    """The stated cluster as acc describes it: a synthetic string, or a file for the A10G."""
    spec = "nodes=%d gpus=1 arch=%s nic=1x%g" % (a.nodes, "a100" if arch == "a10g" else arch,
                                                  a.net_gbps)
    if arch != "a10g":
        return spec
    path = os.path.join(a.work, "g5-%dnode.yaml" % a.nodes)
    text = run([tool("acc-compile"), "--topo", spec, "--export-topo", "yaml", "-o", "-"])
    text = text.replace("model: A100 SXM4 80GB, sm: 80, sms: 108, memory_gib: 80, "
                        "pci_device: 0x20b2", "model: A10G, sm: 86, sms: 80, memory_gib: 24, "
                        "pci_device: 0x2237").replace("synthetic-%dx1-a100" % a.nodes,
                                                      "aws-g5-%dnode" % a.nodes)
    with open(path, "w") as f:
        f.write(text)
    return path


def database(a, arch, topo, done):
    """The host backend's tables measured on the emulated cluster for this topology, and
    acc-tune's optima go into the same file (one per topology)."""
    if arch in done:
        return done[arch]
    db = os.path.join(a.work, "replay-%s.db" % arch)
    fresh_db(db)
    cluster(a.shape, a.rt + ["env", "ACC_LOG_LEVEL=error", tool("acc-bench"), "--runtime", "host",
                             "--rank", "{rank}", "--nranks", "{nranks}", "--bootstrap",
                             "{bootstrap}", "--topo", topo, "--tables", db, "-b", "1K", "-e",
                             "4M" if a.quick else "16M", "-f", "4", "-n", "3", "-w", "1"])
    done[arch] = db
    return db


def replay(a, model, topo, db, policies, jitter=0, iters=None):
    """One repeat: acc-bench --model across the cluster; its policy rows and header lines."""
    args = [tool("acc-bench"), "--model", model, "--runtime", "host", "--rank", "{rank}",
            "--nranks", "{nranks}", "--bootstrap", "{bootstrap}", "--topo", topo, "--db", db,
            "--grad-scale", "%.9g" % a.scale, "--iters", str(iters or a.iters(model)),
            "--policy", policies]
    if jitter:
        args += ["--jitter", str(jitter)]
    env = ["env", "ACC_LOG_LEVEL=error", "ACC_TUNE_BUDGET=%d" % a.budget,
           "ACC_TUNE_COMPRESSION=none,fp16,bf16"]
    text = cluster(a.shape, a.rt + env + args, timeout=3600)
    return parse_policy_rows(text), [l for l in text.splitlines() if l.startswith("#")]


def summarize(results):
    """Per policy: medians of measured and predicted, the spread, the prediction's error."""
    out = {}
    for pol in results[0]:
        meas = [r[pol][1] for r in results if pol in r]
        pred = [r[pol][3] for r in results if pol in r]
        errs = [abs(p - m) / m * 100 for p, m in zip(pred, meas) if m > 0]
        out[pol] = {"measured": meas, "predicted": pred, "median": median(meas),
                    "pred_median": median(pred), "error_pct": max(errs) if errs else float("nan"),
                    "settings": results[0][pol][5]}
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    common_args(p, "/tmp/acc-replays")
    p.add_argument("--models", default=",".join(m for m, _ in MODELS))
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--net-gbps", type=float, default=25.0)
    p.add_argument("--jitter-model", default="bert-base")
    p.add_argument("--jitter", type=int, default=16)
    p.add_argument("--quick", action="store_true", help="1 repeat, fewer iterations")
    a = p.parse_args()
    os.makedirs(a.work, exist_ok=True)
    rate_gbps = float(a.rate.replace("gbit", "")) if a.rate.endswith("gbit") else 1.0
    a.scale = rate_gbps / a.net_gbps
    a.shape = ["--nodes", str(a.nodes), "--rate", a.rate]
    a.rt = ["chrt", "-f", "10"] if a.rt else []
    a.repeats = 1 if a.quick else a.repeats
    a.iters = lambda m: (6 if a.quick else ITERS.get(m, 20))
    a.budget = 18 if a.quick else 36
    arch_of = dict(MODELS)
    models = [m for m in a.models.split(",") if m]
    before, dbs, report = load_note(), {}, {}
    for m in models:
        arch = arch_of[m]
        topo = topology(a, arch)
        db = database(a, arch, topo, dbs)
        log("%s: acc-tune's optimum for the stated cluster" % m)
        run([tool("acc-tune"), "--model", m, "--topo", topo, "--compress", "none,fp16,bf16",
             "--quiet", "--db", db], env={"ACC_LOG_LEVEL": "error"})
        results, header = [], []
        for r in range(a.repeats):
            log("%s: repeat %d of %d" % (m, r + 1, a.repeats))
            rows, header = replay(a, m, topo, db, POLICIES)
            results.append(rows)
        report[m] = {"arch": arch, "topology": topo, "header": header,
                     "policies": summarize(results)}
    jitter = {}
    if a.jitter_model in arch_of and a.jitter > 1:
        arch = arch_of[a.jitter_model]
        topo = topology(a, arch)
        db = database(a, arch, topo, dbs)
        results = []
        for r in range(a.repeats):
            log("%s with jitter %d: repeat %d" % (a.jitter_model, a.jitter, r + 1))
            results.append(replay(a, a.jitter_model, topo, db, "ddp,horovod,negotiate",
                                  jitter=a.jitter)[0])
        jitter = summarize(results)
    setting = {"nodes": a.nodes, "rate": a.rate, "net_gbps": a.net_gbps, "scale": a.scale,
               "repeats": a.repeats, "rt": bool(a.rt), "quick": a.quick,
               "load_before": before, "load_after": load_note()}
    save_json(os.path.join(a.out, "replays.json"), {"setting": setting, "models": report,
                                                   "jitter": {"model": a.jitter_model,
                                                              "window": a.jitter,
                                                              "policies": jitter}})
    write_report(a, setting, report, jitter)


def write_report(a, setting, report, jitter):
    pols = POLICIES.split(",")
    head = ("## Replays across an emulated cluster\n\n"
            "%d nodes of one rank (the stated cluster: one GPU per node, the profile's own, on %g "
            "Gb/s Ethernet), emulated on %s links with every gradient and fusion size x %.4g "
            "(`acc-bench --grad-scale`); %d repeat%s, the median of each policy's iterations per "
            "repeat, then the median of the repeats [their range].  Predicted: the iteration "
            "simulator with this runtime's measured allreduce times and copy rates.  %s; %s "
            "before, %s after.\n\n" %
            (a.nodes, a.net_gbps, a.rate, a.scale, a.repeats, "" if a.repeats == 1 else "s",
             "Real-time priority (--rt)" if a.rt else "Normal priority", setting["load_before"],
             setting["load_after"]))
    body, csv_rows, groups, values = [], [], [], []
    worst = 0.0
    for m, r in report.items():
        ddp = r["policies"].get("ddp", {}).get("median", float("nan"))
        groups.append(m)
        values.append([])
        for pol in pols:
            s = r["policies"].get(pol)
            if not s:
                values[-1].append(None)
                continue
            sp = ddp / s["median"] if s["median"] > 0 else float("nan")
            worst = max(worst, s["error_pct"]) if s["error_pct"] == s["error_pct"] else worst
            values[-1].append(sp if sp == sp else None)
            body.append([m, LABELS[pol], "%s [%s-%s]" % (fmt(s["median"]), fmt(min(s["measured"])),
                                                         fmt(max(s["measured"]))),
                         fmt(s["pred_median"]), fmt(s["error_pct"]), fmt(sp, 3),
                         "`%s`" % s["settings"]])
            csv_rows.append([m, pol, s["median"], min(s["measured"]), max(s["measured"]),
                             s["pred_median"], s["error_pct"], sp, s["settings"]])
    text = head + md_table(["model", "policy", "measured ms", "predicted ms", "max error %",
                            "speedup over DDP", "settings"], body)
    text += "\nLargest prediction error over every run: %.1f %% (target: 10 %%).\n" % worst
    if jitter:
        ddp = jitter.get("ddp", {}).get("median", float("nan"))
        jb = [[LABELS[p], fmt(s["median"]), fmt(s["pred_median"]),
               fmt(ddp / s["median"], 3) if s["median"] > 0 else "-", "`%s`" % s["settings"]]
              for p, s in jitter.items()]
        jt = ("## Ranks finishing their gradients in orders of their own\n\n"
              "%s, every rank marking each run of %d gradients in an order of its own (a shuffle "
              "per rank and iteration), same setting as above.  The prediction knows nothing of "
              "the orders (every rank's as the profile's).\n\n" % (a.jitter_model, a.jitter) +
              md_table(["policy", "measured ms", "predicted ms", "speedup over DDP", "settings"],
                       jb))
        write(os.path.join(a.out, "negotiation.md"), jt)
        svg_bars("%s, gradients in orders of their own: speedup over DDP" % a.jitter_model,
                 [a.jitter_model], [LABELS[p] for p in jitter],
                 [[ddp / s["median"] for s in jitter.values()]], "ratio",
                 os.path.join(a.out, "negotiation.svg"))
    write(os.path.join(a.out, "replays.md"), text)
    f = io.StringIO()
    w = csv.writer(f)
    w.writerow(["model", "policy", "measured_ms", "min_ms", "max_ms", "predicted_ms",
                "max_error_pct", "speedup_over_ddp", "settings"])
    w.writerows(csv_rows)
    write(os.path.join(a.out, "replays.csv"), f.getvalue())
    svg_bars("Iteration time, speedup over DDP's defaults (emulated %d nodes, %g Gb/s stated)" %
             (a.nodes, a.net_gbps), groups, [LABELS[p] for p in pols], values, "ratio",
             os.path.join(a.out, "replays.svg"),
             note="measured medians; %s links x %.4g scale; see replays.md" % (a.rate, a.scale))
    print(text)


if __name__ == "__main__":
    sys.exit(main())
