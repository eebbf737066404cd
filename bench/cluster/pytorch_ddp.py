#!/usr/bin/env python3
"""acc against real PyTorch: torchrun with one rank per emulated node, a communication-bound model
(ddp_train.py: a wide MLP of 58.7 M parameters, batch 8), the same seed and data for every
policy:

  gloo            DDP over gloo with its defaults (25 MiB buckets)
  gloo-fp16       the same with PyTorch's own fp16_compress_hook
  hand-set        DDP over gloo with the fp16 hook and the bucket size a sweep found best
  acc-default     DDP with acc's hook at DDP's defaults (25 MiB, one stream, no compression)
  acc-fp16        the same with acc's fp16 compression (beside gloo-fp16: the casts' cost)
  acc-tuned       DDP with acc's hook at the configuration acc's online tuning found and
                  stored for this model on this cluster (its fusion size as DDP's bucket cap)

Two ratios, kept apart: the tuning's own value (acc-default / acc-tuned: the same transport)
and the whole against PyTorch as shipped (the better of gloo and gloo-fp16 / acc-tuned), beside
the best hand-set DDP.  The loss on a fixed batch after N steps is reported for each; a
compressed run must stay within TOL (relative) of gloo's fp32 loss.

    pytorch_ddp.py --out bench/results [--nodes 4] [--rate 1gbit] [--steps 20] [--repeats 2]
                   [--python /root/.cache/acc/torch-venv/bin/python] [--quick]

How acc's configuration is found: ddp_train.py --policy profile measures the model's gradient
timeline and step time on the cluster (no communication) and writes it as an acc model profile;
acc-bench --model replays it across the same cluster with online tuning (fusion size x streams
x compression none/fp16/bf16), which stores its measured optimum; the PyTorch run reads it
(acc.ddp_settings).  The host backend runs the tables it measured on the cluster.
Writes OUT/pytorch.md, pytorch.json, pytorch.svg.  Needs root and PyTorch.
"""
import argparse
import json
import os
import sys

from benchlib import (ROOT, cluster, common_args, fmt, fresh_db, load_note, log, md_table, median,
                      online_tune, save_json, stored_settings, svg_bars, tool, torch_python_arg,
                      write)

TOL = 0.01  # relative difference of the loss after N steps allowed to compression


def torchrun(a, args, env, timeout=1800):
    """ddp_train.py on every node through torchrun; rank 0's JSON line."""
    py = a.python
    trun = os.path.join(os.path.dirname(py), "torchrun")
    cmd = [trun, "--nnodes", str(a.nodes), "--node-rank", "{node}", "--nproc-per-node", "1",
           "--master-addr", "{master_addr}", "--master-port", "{master_port}",
           os.path.join(ROOT, "bench", "cluster", "ddp_train.py"), "--steps", str(a.steps),
           "--warmup", str(a.warmup)] + args
    envs = []
    for k, v in sorted(env.items()):
        envs += ["--env", "%s=%s" % (k, v)]
    out = cluster(a.shape + ["--per-node"] + envs, a.rt + cmd, timeout=timeout)
    for line in out.splitlines():
        if line.startswith("{"):
            return json.loads(line)
    raise SystemExit("no result from ddp_train.py:\n" + out[-2000:])


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    common_args(p, "/tmp/acc-pytorch")
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--repeats", type=int, default=2)
    p.add_argument("--buckets", default="1,5,100", help="the hand-set sweep's bucket sizes, MB "
                   "(25, PyTorch's default, is gloo-fp16's run)")
    torch_python_arg(p)
    p.add_argument("--quick", action="store_true", help="1 repeat, 10 steps, one hand-set size")
    a = p.parse_args()
    if a.quick:
        a.steps, a.warmup, a.repeats, a.buckets = 10, 2, 1, "100"
    os.makedirs(a.work, exist_ok=True)
    a.shape = ["--nodes", str(a.nodes), "--rate", a.rate]
    a.rt = ["chrt", "-f", "10"] if a.rt else []
    gbps = float(a.rate.replace("gbit", "")) if a.rate.endswith("gbit") else 1.0
    topo = "nodes=%d gpus=1 nic=1x%g" % (a.nodes, gbps)
    db = os.path.join(a.work, "pytorch.db")
    fresh_db(db)
    before = load_note()
    lib = os.path.join(os.environ.get("ACC_BUILD", os.path.join(ROOT, "build")), "libacc.so")
    env = {"OMP_NUM_THREADS": "1", "PYTHONPATH": os.path.join(ROOT, "python"),
           "ACC_LIBRARY": lib, "ACC_LOG_LEVEL": "error", "ACC_DB": db, "ACC_TOPO": topo}
    log("the host backend's tables on the cluster")
    cluster(a.shape, a.rt + ["env", "ACC_LOG_LEVEL=error", tool("acc-bench"), "--runtime", "host",
                             "--rank", "{rank}", "--nranks", "{nranks}", "--bootstrap",
                             "{bootstrap}", "--topo", topo, "--tables", db, "-b", "1K", "-e",
                             "64M", "-f", "4", "-n", "2", "-w", "1"])
    log("the model's gradient timeline")
    profile = os.path.join(a.work, "wide-mlp.yaml")
    torchrun(a, ["--policy", "profile", "--profile", profile], env)
    log("acc's online tuning of it, replayed on the cluster")
    tuned_text = online_tune(a, profile, topo, db, 24 if a.quick else 48)
    settings = stored_settings(a.python, profile, topo, db)
    if not settings:
        raise SystemExit("online tuning stored no optimum:\n" + tuned_text)
    tuned = {"bucket_mb": settings["fusion_bytes"] / float(1 << 20),
             "streams": settings["streams"], "compression": settings["compression"],
             "text": settings["text"], "measured": settings["measured"]}
    log("acc's tuned configuration: %s" % tuned["text"])
    runs = [("gloo", ["--policy", "gloo"]), ("gloo-fp16", ["--policy", "gloo-fp16"]),
            ("acc-default", ["--policy", "acc", "--bucket-mb", "25", "--acc-streams", "1",
                             "--acc-compress", "none"]),
            ("acc-fp16", ["--policy", "acc", "--bucket-mb", "25", "--acc-streams", "1",
                          "--acc-compress", "fp16"]),
            ("acc-tuned", ["--policy", "acc", "--bucket-mb", "%.6g" % tuned["bucket_mb"],
                           "--acc-streams", str(tuned["streams"]), "--acc-compress",
                           tuned["compression"]])]
    for mb in [b for b in a.buckets.split(",") if b]:
        runs.append(("gloo-fp16 %s MB" % mb, ["--policy", "gloo-fp16", "--bucket-mb", mb]))
    results = {name: [] for name, _ in runs}
    for r in range(a.repeats):
        for name, args in runs:
            log("%s, repeat %d of %d" % (name, r + 1, a.repeats))
            results[name].append(torchrun(a, args, env))
    report(a, before, topo, tuned, results)


def report(a, before, topo, tuned, results):
    step = {k: median([x["step_ms"] for x in v]) for k, v in results.items()}
    loss = {k: median([x["eval_loss"] for x in v]) for k, v in results.items()}
    hand = min((k for k in step if k.startswith("gloo-fp16")), key=lambda k: step[k])
    shipped = min(("gloo", "gloo-fp16"), key=lambda k: step[k])
    own = step["acc-default"] / step["acc-tuned"]
    whole = step[shipped] / step["acc-tuned"]
    body = []
    for k in results:
        dev = abs(loss[k] - loss["gloo"]) / loss["gloo"] if loss["gloo"] else float("nan")
        body.append([k, fmt(step[k]), " ".join(fmt(x["step_ms"]) for x in results[k]),
                     "%.6f" % loss[k], "%.2e" % dev, "yes" if dev <= TOL else "**no**",
                     fmt(step[k] / step["acc-tuned"], 3)])
    text = ("## acc against PyTorch (DDP, gloo) across the emulated cluster\n\n"
            "torchrun, one rank on each of %d emulated nodes (%s links, acc's topology `%s`), "
            "a wide MLP of 58.7 M parameters, batch 8 per rank, %d steps (the median after %d "
            "warm-up steps; %d repeat%s, the median of the repeats), the same seed and data for "
            "every policy.  acc's tuned configuration, found by its online tuning on this "
            "cluster (%s): `%s`.  %s; %s before, %s after.\n\n" %
            (a.nodes, a.rate, topo, a.steps, a.warmup, a.repeats, "" if a.repeats == 1 else "s",
             "measured" if tuned["measured"] else "simulated", tuned["text"],
             "Real-time priority (--rt)" if a.rt else "Normal priority", before, load_note()))
    text += md_table(["policy", "step ms", "repeats ms", "loss after N steps",
                      "rel. to gloo fp32", "within %.0e" % TOL, "step / acc-tuned"], body)
    text += ("\n- The tuning's own value (acc's hook at DDP's defaults / tuned, the same "
             "transport): **%.3fx** (goal >= 1.3x where communication-bound)\n"
             "- Against PyTorch as shipped (the better of gloo and gloo + fp16 hook, %s, / "
             "acc tuned): **%.3fx** (goal > 1)\n"
             "- The best hand-set DDP (%s, bucket size by sweep, fp16 hook) / acc tuned: "
             "**%.3fx**\n"
             "- Compression at the same buckets and one stream: gloo + fp16 hook / acc fp16: "
             "**%.3fx** (goal >= 1); fp32 transport, gloo / acc at DDP's defaults: **%.3fx** "
             "(goal >= 1)\n" % (own, shipped, whole, hand, step[hand] / step["acc-tuned"],
                                 step["gloo-fp16"] / step["acc-fp16"],
                                 step["gloo"] / step["acc-default"]))
    write(os.path.join(a.out, "pytorch.md"), text)
    save_json(os.path.join(a.out, "pytorch.json"), {"tuned": tuned, "results": results,
                                                   "step_ms": step, "loss": loss,
                                                   "tuning_value": own, "vs_shipped": whole,
                                                   "load_before": before})
    names = list(results)
    svg_bars("Step time of a wide MLP over %d emulated nodes (%s), ms" % (a.nodes, a.rate),
             [""], names, [[step[k] for k in names]], "ms", os.path.join(a.out, "pytorch.svg"),
             note="DDP over gloo vs DDP with acc's hook; see pytorch.md")
    print(text)


if __name__ == "__main__":
    sys.exit(main())
