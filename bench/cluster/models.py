#!/usr/bin/env python3
"""Real models across the emulated cluster (torchrun, one rank per emulated node, real PyTorch on
the CPU): ResNet-50 under DDP, a GPT-2-small-sized transformer under DDP and under FSDP2
(bench/cluster/models_train.py), each with the same seed, weights and data under every policy:

  gloo               PyTorch as shipped: the process group gloo's, DDP's 25 MiB buckets
  gloo-fp16          DDP over gloo with PyTorch's fp16_compress_hook (DDP only)
  gloo-fp16 N MB     the same at each bucket size of --buckets (PyTorch's best, hand-set)
  acc                the process group acc's (init_process_group("cpu:acc")), its defaults
  acc tuned          the same with the job's model named: the fusion size, streams and
                     compression acc's online tuning stored for it (DDP only; tuned first, once
                     per model: a job records the model's gradient timeline with acc's hook,
                     acc-bench replays online tuning on it across the cluster within
                     ACC_TUNE_BUDGET iterations, and the fresh jobs start from the optimum
                     measured, DDP's buckets at its fusion size)

and writes OUT/models.md (the median step of the repeats, each repeat's, the loss after the
last step beside gloo's), models.json and one loss-curve plot per model (models-NAME.svg).
A run replaces the models it measures and keeps the others' results (models.json), so that
the models can be measured one at a time.
The loss curves must agree: acc's fp32 transport within float tolerance of gloo's, the fp16
hook within its rounding.

    models.py [--out bench/results] [--nodes 4] [--rate 1gbit] [--repeats 3] [--steps 6]
              [--models resnet50-ddp,gpt2-ddp,gpt2-fsdp2] [--buckets 5,100] [--quick]

Needs root (network namespaces) and PyTorch (ACC_TORCH_PYTHON, or --python).
"""
import argparse
import json
import os
import sys

from benchlib import (ROOT, cluster, common_args, fmt, fresh_db, load_note, log, md_table,
                      median, online_tune, run, save_json, stored_settings, svg_lines, tool,
                      torch_python_arg, write)

CASES = {"resnet50-ddp": ("resnet50", "ddp"), "gpt2-ddp": ("gpt2", "ddp"),
         "gpt2-fsdp2": ("gpt2", "fsdp2")}


def torchrun(a, case, args, extra_env=None):
    """models_train.py on every node through torchrun; rank 0's JSON line."""
    model, parallel = CASES[case]
    cmd = [os.path.join(os.path.dirname(a.python), "torchrun"), "--nnodes", str(a.nodes),
           "--node-rank", "{node}", "--nproc-per-node", "1", "--master-addr", "{master_addr}",
           "--master-port", "{master_port}",
           os.path.join(ROOT, "bench", "cluster", "models_train.py"), "--model", model,
           "--parallel", parallel, "--steps", str(a.steps), "--warmup", str(a.warmup)] + args
    lib = os.path.join(os.environ.get("ACC_BUILD", os.path.join(ROOT, "build")), "libacc.so")
    env = {"OMP_NUM_THREADS": "1", "PYTHONPATH": os.path.join(ROOT, "python"),
           "ACC_LIBRARY": lib, "ACC_LOG_LEVEL": "error"}
    env.update(extra_env or {})
    envs = [x for k, v in sorted(env.items()) for x in ("--env", "%s=%s" % (k, v))]
    out = cluster(a.shape + ["--per-node"] + envs, a.rt + cmd, timeout=a.timeout)
    for line in out.splitlines():
        if line.startswith("{"):
            return json.loads(line)
    raise SystemExit("no result from models_train.py:\n" + out[-2000:])


def tune(a, case):
    """acc's tuning of a DDP case (see the policy "acc tuned"): the arguments and environment of
    its fresh jobs, and the configuration found."""
    gbps = float(a.rate.replace("gbit", "")) if a.rate.endswith("gbit") else 1.0
    topo = "nodes=%d gpus=1 nic=1x%g" % (a.nodes, gbps)
    db = fresh_db(os.path.join(a.work, "%s.db" % case))
    env = {"ACC_MODEL": case, "ACC_DB": db, "ACC_TOPO": topo}
    log("%s: recording its gradient timeline with acc's hook" % case)
    torchrun(a, case, ["--policy", "acc-record", "--warmup", "2", "--steps", "6"], env)
    profile = os.path.join(a.work, "%s.yaml" % case)
    with open(profile, "w") as f:
        f.write(run([tool("acc-tune"), "profile", "export", case, "--db", db]))
    log("%s: acc's online tuning, replayed across the cluster" % case)
    online_tune(a, profile, topo, db, a.tune_budget)
    env["ACC_MODEL"] = profile  # the key online tuning stored its optimum under
    settings = stored_settings(a.python, profile, topo, db)
    if not settings:
        raise SystemExit("%s: online tuning stored no optimum" % case)
    log("%s: acc's tuned configuration: %s" % (case, settings["text"]))
    args = ["--policy", "acc", "--bucket-mb", "%.6g" % (settings["fusion_bytes"] / float(1 << 20))]
    return args, env, settings["text"]


def policies(a, case, buckets):
    runs = [("gloo", ["--policy", "gloo"], None), ("acc", ["--policy", "acc"], None)]
    if CASES[case][1] == "ddp" and a.tuned:
        args, env, text = tune(a, case)
        runs.append(("acc tuned", args, env))
        a.tuned_text[case] = text
    if CASES[case][1] == "ddp":
        runs.append(("gloo-fp16", ["--policy", "gloo-fp16"], None))
        runs += [("gloo-fp16 %s MB" % mb, ["--policy", "gloo-fp16", "--bucket-mb", mb], None)
                 for mb in buckets if mb]
    return runs


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    common_args(p, "/tmp/acc-models")
    p.add_argument("--models", default=",".join(CASES))
    p.add_argument("--steps", type=int, default=6)
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--buckets", default="5,100")
    p.add_argument("--timeout", type=int, default=3600)
    p.add_argument("--no-tuned", dest="tuned", action="store_false",
                   help="leave out the policy acc tuned (and its tuning)")
    p.add_argument("--tune-budget", type=int, default=32,
                   help="iterations online tuning may measure (ACC_TUNE_BUDGET)")
    torch_python_arg(p)
    p.add_argument("--quick", action="store_true", help="1 repeat, 3 steps, no bucket sweep")
    a = p.parse_args()
    if a.quick:
        a.steps, a.warmup, a.repeats, a.buckets = 3, 1, 1, ""
    unknown = [m for m in a.models.split(",") if m not in CASES]
    if unknown:
        raise SystemExit("models.py: --models %s: not one of %s" % (",".join(unknown),
                                                                   ", ".join(CASES)))
    a.shape = ["--nodes", str(a.nodes), "--rate", a.rate]
    a.rt = ["chrt", "-f", "10"] if a.rt else []
    a.tuned_text = {}
    os.makedirs(a.work, exist_ok=True)
    path = os.path.join(a.out, "models.json")
    cases = load_cases(path)
    for case in a.models.split(","):
        before = load_note()
        runs = policies(a, case, a.buckets.split(","))
        results = {name: [] for name, _, _ in runs}
        for r in range(a.repeats):
            for name, args, env in runs:
                log("%s: %s, repeat %d of %d" % (case, name, r + 1, a.repeats))
                results[name].append(torchrun(a, case, args, env))
        cases[case] = {"nodes": a.nodes, "rate": a.rate, "steps": a.steps, "warmup": a.warmup,
                       "repeats": a.repeats, "rt": bool(a.rt), "load_before": before,
                       "load_after": load_note(), "results": results,
                       "tuned": a.tuned_text.get(case)}
        save_json(path, {"cases": cases})  # each case as soon as it is measured
    report(a.out, cases)


def load_cases(path):
    """The cases measured before (models.json): a run replaces the cases it measures."""
    if not os.path.exists(path):
        return {}
    with open(path) as f:
        return json.load(f).get("cases", {})


def report(out, cases):
    text = ("## Real models across the emulated cluster\n\n"
            "torchrun, one rank per emulated node, real PyTorch on the CPU; the median step "
            "of each run after its warm-up, the median of the repeats; the same seed, weights "
            "and data under every policy.  Each model's run and its conditions are below it "
            "(`bench/cluster/models.py`, which measures the models one at a time and keeps the "
            "others' results).\n\n")
    for case in (c for c in CASES if c in cases):
        c = cases[case]
        res = c["results"]
        step = {k: median([x["step_ms"] for x in v]) for k, v in res.items()}
        last = {k: median([x["losses"][-1] for x in v]) for k, v in res.items()}
        best = min((k for k in step if k.startswith("gloo")), key=lambda k: step[k])
        body = [[k, fmt(step[k]), " ".join(fmt(x["step_ms"]) for x in res[k]),
                 "%.6f" % last[k], "%.2e" % (abs(last[k] - last["gloo"]) / abs(last["gloo"])),
                 fmt(step[best] / step[k], 3)] for k in res]
        first = next(iter(res.values()))[0]
        text += ("### %s (%.1f M parameters)\n\n"
                 "%d emulated nodes (%s links), %d steps after %d of warm-up, %d repeat%s, %s "
                 "priority; %s before, %s after.\n\n"
                 % (case, first["params"] / 1e6, c["nodes"], c["rate"], c["steps"],
                    c["warmup"], c["repeats"], "" if c["repeats"] == 1 else "s",
                    "real-time" if c["rt"] else "normal", c["load_before"], c["load_after"])
                 + ("acc tuned: `%s` (online tuning's optimum, measured on the replayed "
                    "gradient timeline; DDP's buckets at its fusion size).\n\n" % c["tuned"]
                    if c.get("tuned") else "")
                 + md_table(["policy", "step ms", "repeats ms", "loss, last step",
                             "rel. to gloo", "PyTorch's best (%s) / this" % best], body)
                 + "\n![loss curves](models-%s.svg)\n\n" % case)
        svg_lines("Loss per step, %s over %d emulated nodes (%s)" % (case, c["nodes"], c["rate"]),
                  {k: v[0]["losses"] for k, v in res.items()}, "first repeat",
                  os.path.join(out, "models-%s.svg" % case))
    missing = [c for c in CASES if c not in cases]
    text += ("### What this does not show\n\n"
             "- acc tuned's online tuning runs on the model's recorded gradient timeline, "
             "replayed by acc-bench across the cluster (compute as sleeps), not inside the "
             "training job; its fresh jobs run the real model.  FSDP2 has no acc tuned: its "
             "reduce-scatters and all-gathers are not the fusion engine's.\n"
             "- Loss curves agree within rounding's reach, not bit for bit: ResNet-50's "
             "BatchNorm over 4 images per rank amplifies rounding, so fp32 transports that sum "
             "in different orders drift apart within a few steps (gloo against itself with its "
             "sums made in float64 drifts further from gloo than acc does); the first steps are "
             "the comparison.\n")
    if missing:
        text += ("- Not measured yet: %s (`bench/cluster/models.py --models %s`).\n"
                 % (", ".join(missing), ",".join(missing)))
    write(os.path.join(out, "models.md"), text)
    print(text)


if __name__ == "__main__":
    sys.exit(main())
