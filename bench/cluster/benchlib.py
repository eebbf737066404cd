"""What the measuring scripts of bench/cluster share: where the build is, running acc-cluster
and acc's programs, reading nccl-tests-style tables, and writing result tables and SVG plots.
Standard library only."""
import json
import os
import re
import shlex
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
HARNESS = os.path.join(HERE, "acc-cluster")


def log(msg):
    print("[%s] %s" % (time.strftime("%H:%M:%S"), msg), file=sys.stderr, flush=True)


def build_dir():
    return os.environ.get("ACC_BUILD", os.path.join(ROOT, "build"))


def tool(name):
    """Path of one of the build's programs."""
    sub = {"acc-bench": "bench", "acc-compile": "tools", "acc-tune": "tools",
           "acc-info": "tools"}[name]
    p = os.path.join(build_dir(), sub, name)
    if not os.access(p, os.X_OK):
        raise SystemExit("%s is not built (cmake --build %s)" % (p, build_dir()))
    return p


def run(cmd, timeout=None, env=None, check=True):
    """Run a command; its stdout.  A failure ends the script with the command and its stderr."""
    log("$ " + " ".join(shlex.quote(c) for c in cmd))
    full = dict(os.environ)
    full.update(env or {})
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       timeout=timeout, env=full)
    if check and p.returncode != 0:
        sys.stderr.write(p.stdout[-3000:] + p.stderr[-3000:])
        raise SystemExit("failed (%d): %s" % (p.returncode, " ".join(cmd)))
    return p.stdout


def cluster(args, cmd, timeout=3600, env=None, check=True):
    """A command across an emulated cluster (acc-cluster run ARGS -- CMD); rank 0's output."""
    return run([sys.executable, HARNESS, "run", "--timeout", str(timeout)] + args + ["--"] + cmd,
               timeout=timeout + 120, env=env, check=check)


def fresh_db(path):
    """Remove a database and its journals (and what online tuning scaled kept beside it), so
    that a run starts from nothing stored."""
    for suffix in ("", "-wal", "-shm", ".scaled.db", ".scaled.db-wal", ".scaled.db-shm"):
        if os.path.exists(path + suffix):
            os.unlink(path + suffix)
    return path


def online_tune(a, profile, topo, db, budget):
    """acc's online tuning of a model profile, replayed by acc-bench on every node of the
    cluster within budget iterations (compressions allowed); rank 0 stores the optimum it
    measured in db.  acc-bench's output."""
    return cluster(a.shape, a.rt + ["env", "ACC_LOG_LEVEL=error", "ACC_TUNE_BUDGET=%d" % budget,
                                    "ACC_TUNE_COMPRESSION=none,fp16,bf16", tool("acc-bench"),
                                    "--model", profile, "--runtime", "host", "--rank", "{rank}",
                                    "--nranks", "{nranks}", "--bootstrap", "{bootstrap}",
                                    "--topo", topo, "--db", db, "--policy", "online", "--iters",
                                    "4"])


def stored_settings(python, model, topo, db):
    """acc.ddp_settings(model, topo, db) through the interpreter that has PyTorch's venv."""
    lib = os.path.join(build_dir(), "libacc.so")
    return json.loads(run([python, "-c", "import acc, json; print(json.dumps("
                           "acc.ddp_settings(%r, %r, db=%r)))" % (model, topo, db)],
                          env={"PYTHONPATH": os.path.join(ROOT, "python"), "ACC_LIBRARY": lib}))


def common_args(p, work):
    """The options every measuring script takes."""
    p.add_argument("--out", default=os.path.join(ROOT, "bench", "results"))
    p.add_argument("--work", default=work)
    p.add_argument("--nodes", type=int, default=4)
    p.add_argument("--rate", default="1gbit")
    p.add_argument("--rt", action="store_true", help="ranks at real-time priority (chrt -f 10)")


def torch_python_arg(p):
    """--python: the interpreter with PyTorch that runs the ranks."""
    p.add_argument("--python", default=os.environ.get("ACC_TORCH_PYTHON",
                                                      "/root/.cache/acc/torch-venv/bin/python"))


def load_note():
    """The machine's load, said beside every figure."""
    with open("/proc/loadavg") as f:
        la = f.read().split()[:3]
    return "load average %s (%d CPUs)" % (" ".join(la), os.cpu_count())


def rows(text):
    """The data rows of an nccl-tests-style table: lists of fields."""
    return [l.split() for l in text.splitlines() if l.strip() and not l.lstrip().startswith("#")]


def md_table(head, body):
    """A Markdown table."""
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in body]
    return "\n".join(out) + "\n"


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)
    log("wrote " + path)


def save_json(path, obj):
    write(path, json.dumps(obj, indent=1) + "\n")


def median(v):
    s = sorted(v)
    n = len(s)
    return (s[n // 2] + s[(n - 1) // 2]) / 2 if n else float("nan")


def fmt(v, d=1):
    return ("%." + str(d) + "f") % v if v == v else "-"


# ---- SVG --------------------------------------------------------------------------------------

def svg_bars(title, groups, series, values, unit, path, note=""):
    """Grouped bars: groups along x (models), one bar per series in each (policies), values
    [group][series] (None: missing), a reference line at 1 when unit is a ratio."""
    w, h, left, top, bottom = 180 + 110 * len(groups), 380, 60, 40, 70
    vmax = max([v for g in values for v in g if v is not None] + [1.0]) * 1.15
    colors = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#b07aa1", "#edc948"]
    gw = (w - left - 20) / max(1, len(groups))
    bw = gw * 0.8 / max(1, len(series))
    y = lambda v: top + (h - top - bottom) * (1 - v / vmax)
    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
           'font-family="sans-serif" font-size="11">' % (w, h),
           '<text x="%d" y="20" font-size="14">%s</text>' % (left, esc(title))]
    for k in range(6):
        v = vmax * k / 5
        out.append('<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#ddd"/>'
                   % (left, w - 20, y(v), y(v)))
        out.append('<text x="%d" y="%.1f" text-anchor="end">%s</text>'
                   % (left - 4, y(v) + 4, fmt(v, 2)))
    if unit == "ratio":
        out.append('<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#333" '
                   'stroke-dasharray="4 3"/>' % (left, w - 20, y(1), y(1)))
    for gi, g in enumerate(groups):
        x0 = left + gi * gw + gw * 0.1
        for si in range(len(series)):
            v = values[gi][si]
            if v is None:
                continue
            x = x0 + si * bw
            out.append('<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"/>'
                       % (x, y(v), bw * 0.9, y(0) - y(v), colors[si % len(colors)]))
        out.append('<text x="%.1f" y="%d" text-anchor="middle">%s</text>'
                   % (x0 + gw * 0.4, h - bottom + 16, esc(g)))
    for si, s in enumerate(series):
        out.append('<rect x="%d" y="%d" width="10" height="10" fill="%s"/>'
                   % (left + si * 150, h - 30, colors[si % len(colors)]))
        out.append('<text x="%d" y="%d">%s</text>' % (left + si * 150 + 14, h - 21, esc(s)))
    if note:
        out.append('<text x="%d" y="%d" fill="#555">%s</text>' % (left, h - 6, esc(note)))
    out.append("</svg>")
    write(path, "\n".join(out) + "\n")


def svg_lines(title, series, unit, path, note=""):
    """Curves over the step: series {name: [value per step]} (a loss curve per policy)."""
    w, h, left, top, bottom = 640, 380, 60, 40, 70
    vals = [v for ys in series.values() for v in ys if v == v]
    vmin, vmax = (min(vals), max(vals)) if vals else (0.0, 1.0)
    span = (vmax - vmin) or 1.0
    vmin, vmax = vmin - 0.05 * span, vmax + 0.05 * span
    steps = max([len(ys) for ys in series.values()] + [2])
    colors = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#b07aa1", "#edc948"]
    x = lambda i: left + (w - left - 20) * i / (steps - 1)
    y = lambda v: top + (h - top - bottom) * (1 - (v - vmin) / (vmax - vmin))
    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
           'font-family="sans-serif" font-size="11">' % (w, h),
           '<text x="%d" y="20" font-size="14">%s</text>' % (left, esc(title))]
    for k in range(6):
        v = vmin + (vmax - vmin) * k / 5
        out.append('<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#ddd"/>'
                   % (left, w - 20, y(v), y(v)))
        out.append('<text x="%d" y="%.1f" text-anchor="end">%s</text>'
                   % (left - 4, y(v) + 4, fmt(v, 3)))
    for si, (name, ys) in enumerate(series.items()):
        c = colors[si % len(colors)]
        pts = " ".join("%.1f,%.1f" % (x(i), y(v)) for i, v in enumerate(ys) if v == v)
        out.append('<polyline points="%s" fill="none" stroke="%s" stroke-width="1.5"/>'
                   % (pts, c))
        out.append('<rect x="%d" y="%d" width="10" height="10" fill="%s"/>'
                   % (left + si * 150, h - 30, c))
        out.append('<text x="%d" y="%d">%s</text>' % (left + si * 150 + 14, h - 21, esc(name)))
    out.append('<text x="%d" y="%d">step (%s)</text>' % (w // 2, h - bottom + 20, esc(unit)))
    if note:
        out.append('<text x="%d" y="%d" fill="#555">%s</text>' % (left, h - 6, esc(note)))
    out.append("</svg>")
    write(path, "\n".join(out) + "\n")


def esc(s):
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def parse_policy_rows(text):
    """acc-bench --model's rows: {policy: (iters, measured, exposed, predicted, pexposed,
    settings)}."""
    out = {}
    for line in text.splitlines():
        m = re.match(r"^  (\w+)\s+(\d+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(.*)$", line)
        if not m or m.group(1) == "policy":
            continue
        conv = lambda v: float(v) if v != "-" else float("nan")
        out[m.group(1)] = (int(m.group(2)), conv(m.group(3)), conv(m.group(4)),
                           conv(m.group(5)), conv(m.group(6)), m.group(7))
    return out
