/*
 * acc-bench: run collectives over a range of sizes and print the table of nccl-tests, so that
 * acc's schedules are measured and compared with the tools people already use for NCCL.  Two
 * modes: --backend host runs one plan with every rank a thread (acc_host_exec); --runtime runs
 * the communicator a training job would get, one process per rank, with its own choice per
 * size.  A thin layer of argument parsing around the library; see --help.
 */
#include "acc_bench.h"
#include "acc_compiler.h"

#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

static const char usage_text[] =
    "usage: acc-bench --backend host PLAN [SWEEP]\n"
    "       acc-bench --runtime host|cuda --nranks N [--topo T] [--db F] [--coll C] [SWEEP]\n"
    "                 [--rank R --bootstrap HOST:PORT] [--tables FILE]\n"
    "       acc-bench --model M --runtime host|cuda --nranks N [--topo T] [--db F]\n"
    "                 [--network NET] [--policy ddp,horovod,acc,negotiate,online,record]\n"
    "                 [--iters K] [--grad-scale S] [--jitter W]\n"
    "       acc-bench --help\n"
    "where SWEEP is [-b MIN] [-e MAX] [-f FACTOR | -i STEP] [-d TYPE] [-o OP] [-n ITERS]\n"
    "[-w WARMUP] [-c 0|1].\n"
    "\n"
    "Two different things are measured:\n"
    "  --backend host   one PLAN alone, its ranks as threads of this process, with no\n"
    "                   communicator, database or selection: the plan's executor\n"
    "  --runtime host   a job: N rank processes, each with a communicator of libacc that\n"
    "                   picks acc's plan or the fallback per size, as a training job does\n"
    "\n"
    "--runtime measures a communicator as a training job gets it: acc-bench starts N rank\n"
    "processes, at most 1024, which stop with it on SIGTERM and SIGINT (or, with --rank and\n"
    "--bootstrap, is one rank of a job a launcher started; rank 0 serves the rendezvous at\n"
    "HOST:PORT), each loads the tables of T (else ACC_TOPO) from F\n"
    "(else ACC_DB and the search path), and the last column names what ran per size: acc's\n"
    "plan or the fallback.  C is allreduce (default), allgather, reduce_scatter, broadcast or\n"
    "reduce; -r picks the root.\n"
    "\n"
    "--tables FILE (with --runtime host) measures instead every plan of C that applies to T\n"
    "(each generator at 1, 2 and 4 lanes and chunks) through the runtime at every size of the\n"
    "sweep and stores the fastest per size in FILE as the host backend's own table, with the\n"
    "plans and their times; -n and -w count the calls timed per size (below 64 KiB, times\n"
    "64 KiB / size, at most 16 times).\n"
    "\n"
    "--model replays model M's training iterations (a shipped profile or a profile file) on\n"
    "that runtime: per iteration the profile's compute as time that passes, its gradients\n"
    "handed to the fusion engine as the backward pass produces them, K iterations (default\n"
    "20) per policy: ddp (DDP's defaults), horovod (Horovod's), acc (the optimum stored for M\n"
    "on T with NET: measured, else acc-tune's), negotiate (Horovod's fusion threshold and\n"
    "cycle, agreed by one allreduce instead of its coordinator), online (online tuning from\n"
    "where a job would start, until it ends, then K more; it stores what it measures in F),\n"
    "record (what recording the job's profile costs: DDP's defaults with and without\n"
    "ACC_RECORD, alternately, K / 9 rounds; the recording is stored in F).  M is found as\n"
    "acc-tune finds it (a job's recording in F for T's GPU first).  Each row gives the\n"
    "measured iteration time and exposed communication (the median; online: after tuning)\n"
    "beside the iteration simulator's prediction for the same setting, priced with allreduce\n"
    "times measured on the runtime first, and the copies into and out of fusion buffers (and\n"
    "compression's casts) at rates measured there too.  T must name GPUs the profile has a\n"
    "compute time for.  --grad-scale S (0 < S <= 1, or 1/K) emulates on a network 1/S times\n"
    "slower the share communication has on T's: every gradient and every policy's fusion\n"
    "sizes (DDP's caps, Horovod's threshold, the stored optimum, online tuning's range) times\n"
    "S, so that each bucket holds the tensors it would on T; online tuning then stores in\n"
    "F.scaled.db.\n"
    "--jitter W: every rank marks each run of W gradients in an order of its own.\n"
    "\n"
    "PLAN is one of\n"
    "  --plan FILE.yaml     a plan in acc's YAML form (verified before it runs)\n"
    "  --msccl FILE.xml     an MSCCL algorithm file (imported and verified)\n"
    "  --topo T --coll C --algo NAME [--lanes N] [--chunks M] [-r ROOT]\n"
    "                       generate one: T is a topology file, platform name or synthetic\n"
    "                       description (\"gpus=8 nvlink=18\"), C a collective (allreduce,\n"
    "                       allgather, reduce_scatter, broadcast, reduce, alltoall)\n"
    "\n"
    "Options as in nccl-tests:\n"
    "  --backend B          where the plan runs: 'host', its ranks as threads of this\n"
    "                       process (not --runtime host's rank processes)\n"
    "  --plot FILE.svg      with --backend: the measured busbw beside acc's simulator's\n"
    "                       prediction for the plan on T (--topo T; beside --plan or --msccl\n"
    "                       it names only the machine predicted for), per size\n"
    "  -b, --minbytes SIZE  smallest size (default 32M); K, M, G suffixes are powers of 1024\n"
    "  -e, --maxbytes SIZE  largest size (default 32M), measured also where the steps\n"
    "                       pass it (-b 8 -e 64M -f 4 ends at 64M)\n"
    "  -f, --stepfactor F   multiply the size by F each step\n"
    "  -i, --stepbytes S    add S bytes each step instead (default 1M, used when F is 1)\n"
    "  -d, --datatype T     float, half, bfloat16, double, int32, or all (default float)\n"
    "  -o, --op OP          sum, prod, min, max, avg, or all (default sum)\n"
    "  -r, --root R         root of broadcast and reduce when generating (default 0)\n"
    "  -n, --iters N        timed iterations per size (default 20)\n"
    "  -w, --warmup_iters N untimed iterations first (default 1)\n"
    "  -c, --check 0|1      compare each result with the sequential reference (default 1)\n"
    "\n"
    "The size column is the larger buffer of a rank (count x type size, times the rank count\n"
    "for allgather, reduce_scatter and alltoall); #wrong counts elements farther from the\n"
    "reference than the documented floating-point bound; in-place columns read N/A for plans\n"
    "that do not support in place.\n"
    "A run whose buffers (or model gradients) would not fit the memory the machine leaves it\n"
    "(or ACC_MEMORY_BUDGET) is refused before it starts.\n"
    "Exit status: 0 success, 1 unusable input or wrong results, 2 bad command line, 3 output\n"
    "not written (standard output included).\n";

/* --policy's default: every policy, in the order of the table. */
static const char all_policies[] = "ddp,horovod,acc,negotiate,online";

typedef struct {
    const char *backend, *plan, *msccl, *topo, *coll, *algo;
    int lanes, chunks, root;
    bench_sweep_t sweep;
    bench_comm_t comm;     /* --runtime */
    bench_replay_t replay; /* --model */
    const char *tables;    /* --tables */
    const char *plot;      /* --plot FILE.svg */
} options_t;

static int usage_error(const char *what, const char *arg)
{
    fprintf(stderr, "acc-bench: %s%s%s\nTry 'acc-bench --help'.\n", what, arg ? " " : "",
            arg ? arg : "");
    return EXIT_USAGE;
}

static int parse_count(const char *arg, const char *what, int lo, int *out)
{
    int64_t v;
    if (acc_parse_int64(arg, &v) != ACC_OK || v < lo || v > INT_MAX) {
        char msg[96];
        snprintf(msg, sizeof(msg), "%s takes an integer of at least %d, not", what, lo);
        return usage_error(msg, arg);
    }
    *out = (int)v;
    return 0;
}

/* A fraction: 0.03125 or 1/32, in (0, 1]. */
static int parse_scale(const char *arg, double *out)
{
    char *end = NULL;
    double v = strtod(arg, &end);
    if (end && *end == '/') {
        double d = strtod(end + 1, &end);
        v = d > 0 ? v / d : -1;
    }
    if (!end || *end || !(v > 0) || v > 1)
        return usage_error("--grad-scale takes a fraction in (0, 1] such as 0.25 or 1/32, not",
                           arg);
    *out = v;
    return 0;
}

static int parse_types(const char *arg, bench_sweep_t *s)
{
    int i;
    if (!strcmp(arg, "all")) {
        for (i = 0; i < ACC_DT_COUNT; i++)
            s->dtypes[i] = (acc_dtype_t)i;
        s->ndtypes = ACC_DT_COUNT;
        return 0;
    }
    s->ndtypes = 1;
    if (acc_dtype_parse(arg, &s->dtypes[0]) != ACC_OK)
        return usage_error("-d takes float, half, bfloat16, double, int32 or all, not", arg);
    return 0;
}

static int parse_ops(const char *arg, bench_sweep_t *s)
{
    int i;
    if (!strcmp(arg, "all")) {
        for (i = 0; i < ACC_RED_COUNT; i++)
            s->ops[i] = (acc_redop_t)i;
        s->nops = ACC_RED_COUNT;
        return 0;
    }
    s->nops = 1;
    if (acc_redop_parse(arg, &s->ops[0]) != ACC_OK)
        return usage_error("-o takes sum, prod, min, max, avg or all, not", arg);
    return 0;
}

static int parse_size(const char *arg, const char *what, uint64_t *out)
{
    if (acc_parse_size(arg, out) != ACC_OK)
        return usage_error(what, arg);
    return 0;
}

/* --model's options: each policy known, and nothing of the size sweep. */
static int check_replay(options_t *o)
{
    bench_replay_t *r = &o->replay;
    const char *p = r->policies;
    if (o->coll)
        return usage_error("--model replays a model: it takes no --coll", NULL);
    r->iters = o->sweep.iters;
    if (r->iters < 1)
        return usage_error("--model needs at least one iteration (--iters)", NULL);
    while (*p) {
        size_t n = strcspn(p, ",");
        if (!((n == 3 && !strncmp(p, "ddp", 3)) || (n == 7 && !strncmp(p, "horovod", 7)) ||
              (n == 3 && !strncmp(p, "acc", 3)) || (n == 9 && !strncmp(p, "negotiate", 9)) ||
              (n == 6 && !strncmp(p, "online", 6)) || (n == 6 && !strncmp(p, "record", 6))))
            return usage_error("--policy takes a list of ddp, horovod, acc, negotiate, online "
                               "and record, not",
                               r->policies);
        p += n + (p[n] == ',');
    }
    return 0;
}

/* --runtime's options; the collective defaults to allreduce. */
static int check_runtime(options_t *o)
{
    bench_comm_t *b = &o->comm;
    if (o->plot)
        return usage_error("--plot FILE.svg draws one plan's measured busbw beside the "
                           "simulator's prediction: it goes with --backend host",
                           NULL);
    if (o->backend || o->plan || o->msccl || o->algo || o->lanes || o->chunks)
        return usage_error("--runtime runs the communicator's own choices: it takes no "
                           "--backend, --plan, --msccl, --algo, --lanes or --chunks",
                           NULL);
    if (strcmp(b->runtime, "host") != 0 && strcmp(b->runtime, "cuda") != 0)
        return usage_error("--runtime takes host or cuda, not", b->runtime);
    if (b->nranks < 1)
        return usage_error("--runtime needs --nranks N", NULL);
    if ((b->rank >= 0) != !!b->bootstrap)
        return usage_error("--rank and --bootstrap go together", NULL);
    if (b->rank >= b->nranks)
        return usage_error("--rank is not below --nranks", NULL);
    if (bench_check_nranks(b) != 0)
        return EXIT_USAGE;
    b->topo = o->topo;
    b->coll = ACC_COLL_ALLREDUCE;
    if (o->coll && acc_coll_parse(o->coll, &b->coll) != ACC_OK)
        return usage_error("--coll takes allreduce, allgather, reduce_scatter, broadcast or "
                           "reduce, not",
                           o->coll);
    b->root = o->root > 0 ? o->root : 0;
    if (b->root >= b->nranks)
        return usage_error("-r is not a rank below --nranks", NULL);
    if (o->tables && (strcmp(b->runtime, "host") != 0 || o->replay.model))
        return usage_error("--tables measures the host backend: it goes with --runtime host and "
                           "without --model",
                           NULL);
    if (o->sweep.min_bytes > o->sweep.max_bytes)
        return usage_error("-b is larger than -e", NULL);
    return o->replay.model ? check_replay(o) : 0;
}

static int check_args(options_t *o)
{
    /* --topo beside --plan or --msccl names the machine --plot predicts for. */
    int predict_on = (o->plan || o->msccl) && o->topo && !o->coll && !o->algo;
    int sources = !!o->plan + !!o->msccl + !!((o->topo && !predict_on) || o->coll || o->algo);
    const bench_sweep_t *s = &o->sweep;
    if (o->comm.runtime)
        return check_runtime(o);
    if (o->replay.model || o->replay.network || o->replay.policies != all_policies ||
        o->replay.grad_scale || o->replay.jitter)
        return usage_error("--model, --network, --policy, --grad-scale and --jitter go with "
                           "--runtime",
                           NULL);
    if (o->comm.nranks || o->comm.db || o->comm.bootstrap || o->comm.rank >= 0 || o->tables)
        return usage_error("--nranks, --db, --rank, --bootstrap and --tables go with --runtime",
                           NULL);
    if (!o->backend)
        return usage_error("--backend host or --runtime host|cuda is required", NULL);
    if (strcmp(o->backend, "host") != 0)
        return usage_error("this build has only the host backend; not", o->backend);
    if (sources != 1)
        return usage_error("give exactly one of --plan, --msccl, or --topo/--coll/--algo", NULL);
    if (predict_on && !o->plot)
        return usage_error("--topo with --plan or --msccl names the machine --plot FILE.svg "
                           "predicts for; add --plot or drop --topo",
                           NULL);
    if (o->plot && !o->topo)
        return usage_error("--plot FILE.svg puts the measured busbw beside the simulator's "
                           "prediction on a topology: add --topo T (e.g. dgx-h100)",
                           NULL);
    if ((o->topo || o->coll || o->algo) && !predict_on && !(o->topo && o->coll && o->algo))
        return usage_error("--topo, --coll and --algo go together", NULL);
    if ((!o->topo || predict_on) && (o->lanes || o->chunks))
        return usage_error("--lanes and --chunks go with --topo/--coll/--algo", NULL);
    if (s->min_bytes > s->max_bytes)
        return usage_error("-b is larger than -e", NULL);
    return 0;
}

static int parse_args(int argc, char **argv, options_t *o)
{
    enum {
        OPT_BACKEND = 256,
        OPT_PLAN,
        OPT_MSCCL,
        OPT_TOPO,
        OPT_COLL,
        OPT_ALGO,
        OPT_LANES,
        OPT_CHUNKS,
        OPT_RUNTIME,
        OPT_NRANKS,
        OPT_RANK,
        OPT_BOOTSTRAP,
        OPT_DB,
        OPT_MODEL,
        OPT_NETWORK,
        OPT_POLICY,
        OPT_TABLES,
        OPT_GRAD_SCALE,
        OPT_JITTER,
        OPT_PLOT
    };
    static const struct option longopts[] = {
        {"backend", required_argument, NULL, OPT_BACKEND},
        {"plan", required_argument, NULL, OPT_PLAN},
        {"msccl", required_argument, NULL, OPT_MSCCL},
        {"topo", required_argument, NULL, OPT_TOPO},
        {"coll", required_argument, NULL, OPT_COLL},
        {"algo", required_argument, NULL, OPT_ALGO},
        {"lanes", required_argument, NULL, OPT_LANES},
        {"chunks", required_argument, NULL, OPT_CHUNKS},
        {"runtime", required_argument, NULL, OPT_RUNTIME},
        {"nranks", required_argument, NULL, OPT_NRANKS},
        {"rank", required_argument, NULL, OPT_RANK},
        {"bootstrap", required_argument, NULL, OPT_BOOTSTRAP},
        {"db", required_argument, NULL, OPT_DB},
        {"model", required_argument, NULL, OPT_MODEL},
        {"network", required_argument, NULL, OPT_NETWORK},
        {"policy", required_argument, NULL, OPT_POLICY},
        {"tables", required_argument, NULL, OPT_TABLES},
        {"grad-scale", required_argument, NULL, OPT_GRAD_SCALE},
        {"jitter", required_argument, NULL, OPT_JITTER},
        {"plot", required_argument, NULL, OPT_PLOT},
        {"minbytes", required_argument, NULL, 'b'},
        {"maxbytes", required_argument, NULL, 'e'},
        {"stepfactor", required_argument, NULL, 'f'},
        {"stepbytes", required_argument, NULL, 'i'},
        {"datatype", required_argument, NULL, 'd'},
        {"op", required_argument, NULL, 'o'},
        {"root", required_argument, NULL, 'r'},
        {"iters", required_argument, NULL, 'n'},
        {"warmup_iters", required_argument, NULL, 'w'},
        {"check", required_argument, NULL, 'c'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    bench_sweep_t *s = &o->sweep;
    int c, rc = 0;
    uint64_t step;

    memset(o, 0, sizeof(*o));
    o->root = -1;
    o->comm.rank = -1;
    o->replay.policies = all_policies;
    s->min_bytes = s->max_bytes = 32ull << 20;
    s->factor = 1; /* nccl-tests' defaults: one size, or steps of 1M */
    s->step_bytes = 1u << 20;
    s->dtypes[0] = ACC_DT_F32;
    s->ndtypes = 1;
    s->ops[0] = ACC_RED_SUM;
    s->nops = 1;
    s->iters = 20;
    s->warmup = 1;
    s->check = 1;
    opterr = 0;
    while (rc == 0 &&
           (c = getopt_long(argc, argv, ":hb:e:f:i:d:o:r:n:w:c:", longopts, NULL)) != -1) {
        switch (c) {
        case OPT_BACKEND:
            o->backend = optarg;
            break;
        case OPT_PLAN:
            o->plan = optarg;
            break;
        case OPT_MSCCL:
            o->msccl = optarg;
            break;
        case OPT_TOPO:
            if (cli_once("acc-bench", &o->topo, "--topo", optarg) != EXIT_OK)
                return EXIT_USAGE;
            break;
        case OPT_COLL:
            o->coll = optarg;
            break;
        case OPT_ALGO:
            o->algo = optarg;
            break;
        case OPT_LANES:
            rc = parse_count(optarg, "--lanes", 1, &o->lanes);
            break;
        case OPT_CHUNKS:
            rc = parse_count(optarg, "--chunks", 1, &o->chunks);
            break;
        case OPT_RUNTIME:
            o->comm.runtime = optarg;
            break;
        case OPT_NRANKS:
            rc = parse_count(optarg, "--nranks", 1, &o->comm.nranks);
            break;
        case OPT_RANK:
            rc = parse_count(optarg, "--rank", 0, &o->comm.rank);
            break;
        case OPT_BOOTSTRAP:
            o->comm.bootstrap = optarg;
            break;
        case OPT_DB:
            o->comm.db = optarg;
            break;
        case OPT_MODEL:
            o->replay.model = optarg;
            break;
        case OPT_NETWORK:
            o->replay.network = optarg;
            break;
        case OPT_POLICY:
            o->replay.policies = optarg;
            break;
        case OPT_PLOT:
            o->plot = optarg;
            break;
        case OPT_TABLES:
            o->tables = optarg;
            break;
        case OPT_GRAD_SCALE:
            rc = parse_scale(optarg, &o->replay.grad_scale);
            break;
        case OPT_JITTER:
            rc = parse_count(optarg, "--jitter", 0, &o->replay.jitter);
            break;
        case 'b':
            rc = parse_size(optarg, "-b takes a size such as 8, 64K or 128M, not", &s->min_bytes);
            break;
        case 'e':
            rc = parse_size(optarg, "-e takes a size such as 8, 64K or 128M, not", &s->max_bytes);
            break;
        case 'f':
            rc = parse_count(optarg, "-f", 1, &s->factor);
            break;
        case 'i':
            rc = parse_size(optarg, "-i takes a size in bytes, not", &step);
            if (rc == 0 && step == 0)
                rc = usage_error("-i takes a step of at least 1 byte, not", optarg);
            s->step_bytes = step;
            s->factor = 1;
            break;
        case 'd':
            rc = parse_types(optarg, s);
            break;
        case 'o':
            rc = parse_ops(optarg, s);
            break;
        case 'r':
            rc = parse_count(optarg, "-r", 0, &o->root);
            break;
        case 'n':
            rc = parse_count(optarg, "-n", 0, &s->iters);
            break;
        case 'w':
            rc = parse_count(optarg, "-w", 0, &s->warmup);
            break;
        case 'c':
            rc = parse_count(optarg, "-c", 0, &s->check);
            s->check = !!s->check;
            break;
        case 'h':
            fputs(usage_text, stdout);
            return -1;
        case ':':
            return usage_error("this option needs a value:", argv[optind - 1]);
        default:
            return usage_error("unknown option", argv[optind - 1]);
        }
    }
    if (rc)
        return rc;
    if (optind < argc)
        return usage_error("unexpected argument", argv[optind]);
    return check_args(o);
}

/* The plan to run, verified: loaded, imported or generated. */
static acc_status_t get_plan(const options_t *o, acc_plan_t **out)
{
    acc_topo_t *topo = NULL;
    const acc_algo_t *algo;
    acc_algo_args_t args;
    acc_coll_t coll;
    acc_status_t st;

    if (o->plan) {
        st = acc_plan_load_file(o->plan, out);
        if (st == ACC_OK && (st = acc_plan_verify(*out)) != ACC_OK) {
            acc_error_prefix(st, "%s does not verify: ", o->plan);
            acc_plan_destroy(*out);
            *out = NULL;
        }
    } else if (o->msccl) {
        st = acc_plan_import_msccl_file(o->msccl, out);
    } else {
        if ((st = acc_coll_parse(o->coll, &coll)) != ACC_OK)
            return st;
        if (!(algo = acc_algo_find(coll, o->algo)))
            return ACC_ERR_NOT_FOUND;
        if ((st = acc_topo_load(o->topo, &topo)) != ACC_OK)
            return st;
        memset(&args, 0, sizeof(args));
        args.lanes = o->lanes;
        args.chunks = o->chunks;
        args.root = o->root > 0 ? o->root : 0;
        st = acc_algo_generate(algo, topo, &args, out);
        acc_topo_destroy(topo);
    }
    if (st == ACC_OK && o->root >= 0 && !o->topo && o->root != (*out)->root &&
        ((*out)->coll == ACC_COLL_BROADCAST || (*out)->coll == ACC_COLL_REDUCE)) {
        st = acc_error_set(ACC_ERR_INVALID,
                           "the plan's root is %d; -r %d cannot change it "
                           "(generate the plan with that root instead)",
                           (*out)->root, o->root);
        acc_plan_destroy(*out);
        *out = NULL;
    }
    return st;
}

static int run(int argc, char **argv)
{
    options_t o;
    acc_plan_t *plan = NULL;
    int rc = parse_args(argc, argv, &o);

    if (rc < 0)
        return EXIT_OK;
    if (rc > 0)
        return rc;
    if (acc_settings_validate() != ACC_OK) {
        fprintf(stderr, "acc-bench: %s\n", acc_error_message());
        return EXIT_USAGE;
    }
    if (o.comm.runtime && (rc = bench_check_runtime_memory(&o.comm, &o.sweep, &o.replay)) != 0)
        return rc;
    if (o.replay.model)
        return bench_replay(&o.comm, &o.replay, stdout);
    if (o.tables) {
        bench_tables_t t = {o.tables, &o.sweep};
        return bench_tables(&o.comm, &t, stdout);
    }
    if (o.comm.runtime)
        return bench_comm(&o.comm, &o.sweep, stdout);
    if (get_plan(&o, &plan) != ACC_OK) {
        fprintf(stderr, "acc-bench: %s\n", acc_error_message());
        return EXIT_INPUT;
    }
    if ((rc = bench_check_plan_memory(plan, &o.sweep)) != 0) {
        acc_plan_destroy(plan);
        return rc;
    }
    printf("# acc-bench --backend host: %s '%s' on %d ranks x %d lanes, %s, %d slots%s%s\n",
           acc_coll_name(plan->coll), plan->algo, plan->nranks, plan->nlanes,
           acc_proto_name(plan->proto), plan->slots, plan->params[0] ? ": " : "", plan->params);
    {
        bench_points_t pts;
        rc = bench_sweep(plan, &o.sweep, stdout, o.plot ? &pts : NULL);
        if (o.plot && rc == EXIT_OK)
            rc = bench_plot(plan, o.topo, o.sweep.dtypes[0], &pts, o.plot);
        if (o.plot)
            bench_points_free(&pts);
    }
    acc_plan_destroy(plan);
    return rc;
}

int main(int argc, char **argv)
{
    int rc = cli_budget("acc-bench");
    return cli_exit("acc-bench", rc == EXIT_OK ? run(argc, argv) : rc);
}
