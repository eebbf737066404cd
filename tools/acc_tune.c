/*
 * acc-tune: find and keep the best gradient-fusion size, stream count and collective choice of
 * a model on a cluster.  A thin layer of argument parsing and printing around the tuner
 * library; see --help.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tune_cli.h"

static const char usage_text[] =
    "usage: acc-tune --model M --topo T [--network N] [--strategy grid|bayes|halving]\n"
    "                [--budget K] [--seed S] [--policy acc|ddp|horovod] [--cycle-ms X]\n"
    "                [--algo auto,acc,nccl] [--fusion-min SIZE] [--fusion-max SIZE]\n"
    "                [--streams-max N] [--compress none,fp16,bf16] [--nccl-only]\n"
    "                [--precision P] [--csv] [--quiet] --db FILE\n"
    "       acc-tune show --db FILE [--model M] [--topo T [--network N]] [--csv]\n"
    "       acc-tune plot FILE.svg --db FILE --model M --topo T [--network N]\n"
    "       acc-tune export --format env|ddp|horovod --db FILE --model M --topo T [--network N]\n"
    "       acc-tune profile export NAME --db FILE [--topo T] [-o FILE.yaml]\n"
    "       acc-tune --help | --version\n"
    "\n"
    "Tuning simulates one training iteration of model M on every GPU of topology T: the\n"
    "backward pass releases gradients (the profile's timeline), a fusion policy packs them\n"
    "into buffers of the fusion size, each buffer is all-reduced on one of several streams,\n"
    "and collectives in flight share the network and take SMs from compute.  It searches\n"
    "fusion sizes (powers of two, 256K to 1G), stream counts (1 to 8) and the collective\n"
    "choice (auto: the faster of acc's plan and NCCL per size; acc; nccl), stores every\n"
    "evaluation as a tuning run and the best as the optimum of (model, topology, network),\n"
    "and prints it beside DDP's defaults (25 MiB buckets, 1 MiB first), Horovod's (128 MiB,\n"
    "1 ms cycle) and no fusion.\n"
    "\n"
    "  --model M          a shipped profile (resnet50, vgg16, bert-base, bert-large, gpt2,\n"
    "                     gpt2-xl, vit-b16), one a job recorded (ACC_RECORD=1; for T's GPU\n"
    "                     it wins over a shipped one of its name) or a profile file\n"
    "                     (tuner/models/README.md)\n"
    "  --topo T           a topology file, a shipped platform (dgx-h100-2node, ...) or a\n"
    "                     synthetic description (\"nodes=2 gpus=8 nvlink=18 nic=8x400\")\n"
    "  --network N        a network stored in the database, or its parameters:\n"
    "                     \"nic=GBPS latency=US rail=0|1 oversub=X nodes=N fabric=NAME\"\n"
    "                     (default: the topology's own)\n"
    "  --strategy S       grid (every configuration; default), bayes (Gaussian process,\n"
    "                     expected improvement) or halving (successive halving)\n"
    "  --budget K         most evaluations (default: grid all, bayes and halving a quarter)\n"
    "  --seed S           seed of bayes and halving (default 1)\n"
    "  --policy P         the fusion tuned: acc (default), ddp (DDP's buckets) or horovod\n"
    "  --cycle-ms X       horovod: the cycle (default 1); acc: a buffer's timeout (0: none)\n"
    "  --algo LIST        collective choices searched (default all the times have)\n"
    "  --fusion-min/--fusion-max SIZE, --streams-max N   bounds of the space\n"
    "  --compress LIST    compressions of fp32 gradients searched (default none)\n"
    "  --nccl-only        price collectives with NCCL's model only (fast; no acc plans)\n"
    "  --precision P      the profile's compute entry of this precision (fp16, bf16, ...)\n"
    "  --csv              print every evaluation as CSV instead of the table\n"
    "  --quiet            no progress on standard error\n"
    "  --db FILE          the acc database (created when missing)\n"
    "\n"
    "show     where each profile came from (shipped, a file, recorded on HOST/GPU at DATE),\n"
    "         the recordings jobs made, the optima, simulated and measured (by a job's\n"
    "         online tuning) side by side, and the best runs (--csv: every run)\n"
    "plot     an SVG heatmap of iteration time over fusion size x streams for one key, the\n"
    "         optimum framed and the baselines noted\n"
    "export   the optimum (the measured one when there is one) as settings: env\n"
    "         (ACC_FUSION_BYTES, ACC_STREAMS, ACC_COMPRESSION), ddp\n"
    "         (bucket_cap_mb) or horovod (HOROVOD_FUSION_THRESHOLD, HOROVOD_NUM_NCCL_STREAMS)\n"
    "profile export  model NAME's profile (a job's recording: the one for T's GPU, or its\n"
    "         only one) in the shipped profiles' format, to FILE.yaml (-o) or standard output,\n"
    "         for --model FILE.yaml or ACC_MODEL_DIR\n"
    "\n"
    "Exit status: 0 success, 1 unusable input (model, topology, database, no optimum),\n"
    "2 bad command line, 3 output could not be written (database, file, standard output).\n"
    "Logging: ACC_LOG_LEVEL=error|warn|info|debug|trace, ACC_LOG_SUBSYS=tuner,...\n";

int tune_fail(int code)
{
    fprintf(stderr, "acc-tune: %s\n", acc_error_message());
    return code;
}

int tune_target_open(const tune_opts_t *o, acc_db_t *db, acc_tune_target_t **t)
{
    if (acc_tune_target_load(o->model, o->topo, o->network, o->precision, db, t) != ACC_OK)
        return tune_fail(EXIT_INPUT);
    return EXIT_OK;
}

static int usage_error(const char *what, const char *arg)
{
    fprintf(stderr, "acc-tune: %s%s%s\nTry 'acc-tune --help'.\n", what, arg ? " " : "",
            arg ? arg : "");
    return EXIT_USAGE;
}

enum {
    OPT_MODEL = 256,
    OPT_TOPO,
    OPT_NETWORK,
    OPT_DB,
    OPT_STRATEGY,
    OPT_BUDGET,
    OPT_SEED,
    OPT_POLICY,
    OPT_CYCLE,
    OPT_ALGO,
    OPT_FMIN,
    OPT_FMAX,
    OPT_SMAX,
    OPT_COMPRESS,
    OPT_NCCL_ONLY,
    OPT_PRECISION,
    OPT_CSV,
    OPT_QUIET,
    OPT_FORMAT,
    OPT_OUTPUT,
    OPT_VERSION
};

static const struct option longopts[] = {
    {"model", required_argument, NULL, OPT_MODEL},
    {"topo", required_argument, NULL, OPT_TOPO},
    {"network", required_argument, NULL, OPT_NETWORK},
    {"db", required_argument, NULL, OPT_DB},
    {"strategy", required_argument, NULL, OPT_STRATEGY},
    {"budget", required_argument, NULL, OPT_BUDGET},
    {"seed", required_argument, NULL, OPT_SEED},
    {"policy", required_argument, NULL, OPT_POLICY},
    {"cycle-ms", required_argument, NULL, OPT_CYCLE},
    {"algo", required_argument, NULL, OPT_ALGO},
    {"fusion-min", required_argument, NULL, OPT_FMIN},
    {"fusion-max", required_argument, NULL, OPT_FMAX},
    {"streams-max", required_argument, NULL, OPT_SMAX},
    {"compress", required_argument, NULL, OPT_COMPRESS},
    {"nccl-only", no_argument, NULL, OPT_NCCL_ONLY},
    {"precision", required_argument, NULL, OPT_PRECISION},
    {"csv", no_argument, NULL, OPT_CSV},
    {"quiet", no_argument, NULL, OPT_QUIET},
    {"format", required_argument, NULL, OPT_FORMAT},
    {"output", required_argument, NULL, OPT_OUTPUT},
    {"help", no_argument, NULL, 'h'},
    {"version", no_argument, NULL, OPT_VERSION},
    {NULL, 0, NULL, 0},
};

static int parse_count(const char *opt, const char *text, int64_t lo, int64_t hi, int64_t *out)
{
    if (acc_parse_int64(text, out) != ACC_OK || *out < lo || *out > hi) {
        char what[96];
        snprintf(what, sizeof(what), "%s needs an integer from %lld to %lld, not", opt,
                 (long long)lo, (long long)hi);
        return usage_error(what, text);
    }
    return 0;
}

static int parse_algos(const char *text, unsigned *out)
{
    char *copy = acc_mem_strdup(text), *tok, *save = NULL;
    acc_tune_algo_t a;
    int rc = 0;

    *out = 0;
    for (tok = copy ? strtok_r(copy, ",", &save) : NULL; tok; tok = strtok_r(NULL, ",", &save)) {
        if (acc_tune_algo_parse(tok, &a) != ACC_OK) {
            rc = usage_error("--algo takes a list of auto, acc and nccl, not", text);
            break;
        }
        *out |= 1u << a;
    }
    acc_mem_free(copy);
    if (!rc && !*out)
        rc = usage_error("--algo needs at least one of auto, acc and nccl", NULL);
    return rc;
}

static int parse_option(int c, const char *arg, tune_opts_t *o)
{
    int64_t v;
    uint64_t size;
    double ms;

    switch (c) {
    case OPT_MODEL:
        o->model = arg;
        break;
    case OPT_TOPO:
        if (cli_once("acc-tune", &o->topo, "--topo", arg) != EXIT_OK)
            return EXIT_USAGE;
        break;
    case OPT_NETWORK:
        o->network = arg;
        break;
    case OPT_DB:
        o->db = arg;
        break;
    case OPT_PRECISION:
        o->precision = arg;
        break;
    case OPT_FORMAT:
        o->format = arg;
        break;
    case OPT_OUTPUT:
        o->output = arg;
        break;
    case OPT_NCCL_ONLY:
        o->nccl_only = 1;
        break;
    case OPT_CSV:
        o->csv = 1;
        break;
    case OPT_QUIET:
        o->quiet = 1;
        break;
    case OPT_STRATEGY:
        if (acc_search_strategy_parse(arg, &o->strategy) != ACC_OK)
            return usage_error("--strategy takes grid, bayes or halving, not", arg);
        break;
    case OPT_BUDGET:
        if (parse_count("--budget", arg, 1, 1000000, &v))
            return EXIT_USAGE;
        o->budget = (size_t)v;
        break;
    case OPT_SEED:
        if (parse_count("--seed", arg, 0, INT64_MAX, &v))
            return EXIT_USAGE;
        o->seed = (uint64_t)v;
        break;
    case OPT_POLICY:
        if (acc_fusion_policy_parse(arg, &o->space.policy) != ACC_OK ||
            o->space.policy == ACC_FUSION_NONE)
            return usage_error("--policy takes acc, ddp or horovod, not", arg);
        break;
    case OPT_CYCLE:
        if (acc_parse_double(arg, &ms) != ACC_OK || !(ms >= 0) || ms > 1e6)
            return usage_error("--cycle-ms needs milliseconds >= 0, not", arg);
        o->space.cycle_ms = ms;
        o->cycle_given = 1;
        break;
    case OPT_ALGO:
        o->algos_given = 1;
        return parse_algos(arg, &o->space.algos);
    case OPT_COMPRESS:
        if (acc_compress_parse_list(arg, &o->space.compressions) != ACC_OK)
            return usage_error(acc_error_message(), NULL);
        break;
    case OPT_FMIN:
    case OPT_FMAX:
        if (acc_parse_size(arg, &size) != ACC_OK || !size || (size & (size - 1)))
            return usage_error("--fusion-min/--fusion-max need a power of two (256K, 64M), not",
                               arg);
        *(c == OPT_FMIN ? &o->space.fusion_min : &o->space.fusion_max) = size;
        break;
    case OPT_SMAX:
        if (parse_count("--streams-max", arg, 1, ACC_TUNE_MAX_STREAMS, &v))
            return EXIT_USAGE;
        o->space.streams_max = (int)v;
        break;
    default:
        return usage_error("unknown option", NULL);
    }
    return 0;
}

/* What each command needs, and nothing it would ignore. */
static int check_args(tune_opts_t *o)
{
    if (!o->db)
        return usage_error("--db FILE is required", NULL);
    if (o->cmd != CMD_PROFILE_EXPORT && o->output)
        return usage_error("-o goes with profile export", NULL);
    if (o->cmd == CMD_PROFILE_EXPORT) {
        if (o->model || o->network || o->format || o->csv)
            return usage_error("profile export takes NAME, --db, --topo and -o", NULL);
        return 0;
    }
    if (o->cmd != CMD_EXPORT && o->format)
        return usage_error("--format goes with export", NULL);
    if (o->cmd == CMD_EXPORT &&
        (!o->format ||
         (strcmp(o->format, "env") && strcmp(o->format, "ddp") && strcmp(o->format, "horovod"))))
        return usage_error("export needs --format env, ddp or horovod", NULL);
    if (o->cmd == CMD_SHOW) {
        if (o->network && !o->topo)
            return usage_error("show: --network goes with --topo", NULL);
        return 0;
    }
    if (!o->model || !o->topo)
        return usage_error("--model M and --topo T are required", NULL);
    if (o->cmd != CMD_TUNE && o->csv)
        return usage_error("--csv goes with tuning and show", NULL);
    if (o->space.policy == ACC_FUSION_HOROVOD && !o->cycle_given)
        o->space.cycle_ms = 1.0; /* Horovod's default cycle */
    /* Horovod round-robins its buffers over its streams (gpu_operations.cc); DDP has one. */
    if (o->space.policy != ACC_FUSION_ACC)
        o->space.assign = ACC_STREAMS_ROUND_ROBIN;
    if (o->nccl_only && !o->algos_given)
        o->space.algos = 1u << ACC_TUNE_ALGO_NCCL;
    if (acc_tune_space_check(&o->space) != ACC_OK)
        return usage_error(acc_error_message(), NULL);
    return 0;
}

static int parse_args(int argc, char **argv, tune_opts_t *o)
{
    int c, rc;

    memset(o, 0, sizeof(*o));
    acc_tune_space_init(&o->space);
    o->seed = 1;
    if (argc > 1 && strcmp(argv[1], "show") == 0)
        o->cmd = CMD_SHOW;
    else if (argc > 1 && strcmp(argv[1], "plot") == 0)
        o->cmd = CMD_PLOT;
    else if (argc > 1 && strcmp(argv[1], "export") == 0)
        o->cmd = CMD_EXPORT;
    else if (argc > 1 && strcmp(argv[1], "profile") == 0) {
        if (argc < 3 || strcmp(argv[2], "export") != 0)
            return usage_error("profile takes the command export:", "acc-tune profile export NAME");
        o->cmd = CMD_PROFILE_EXPORT;
        argv++;
        argc--;
    }
    if (o->cmd != CMD_TUNE) {
        argv++;
        argc--;
    }
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, ":ho:", longopts, NULL)) != -1) {
        if (c == 'h') {
            fputs(usage_text, stdout);
            return -1;
        }
        if (c == OPT_VERSION) {
            printf("acc-tune %s\n", ACC_VERSION_STRING);
            return -1;
        }
        if (c == ':')
            return usage_error("this option needs a value:", argv[optind - 1]);
        if (c == '?')
            return usage_error("unknown option", argv[optind - 1]);
        if ((rc = parse_option(c == 'o' ? OPT_OUTPUT : c, optarg, o)) != 0)
            return rc;
    }
    if (o->cmd == CMD_PLOT && optind < argc)
        o->plot = argv[optind++];
    if (o->cmd == CMD_PROFILE_EXPORT && optind < argc)
        o->profile = argv[optind++];
    if (optind < argc)
        return usage_error("unexpected argument", argv[optind]);
    if (o->cmd == CMD_PLOT && !o->plot)
        return usage_error("plot needs the SVG file to write: acc-tune plot FILE.svg ...", NULL);
    if (o->cmd == CMD_PROFILE_EXPORT && !o->profile)
        return usage_error("profile export needs the model: acc-tune profile export NAME ...",
                           NULL);
    return check_args(o);
}

static int run(int argc, char **argv)
{
    tune_opts_t o;
    int rc = parse_args(argc, argv, &o);

    if (rc < 0)
        return EXIT_OK;
    if (rc)
        return rc;
    if (acc_settings_validate() != ACC_OK)
        return tune_fail(EXIT_USAGE);
    switch (o.cmd) {
    case CMD_SHOW:
        return tune_show(&o);
    case CMD_PLOT:
        return tune_plot(&o);
    case CMD_EXPORT:
        return tune_export(&o);
    case CMD_PROFILE_EXPORT:
        return tune_profile_export(&o);
    default:
        return tune_run(&o);
    }
}

int main(int argc, char **argv)
{
    int rc = cli_budget("acc-tune");
    return cli_exit("acc-tune", rc == EXIT_OK ? run(argc, argv) : rc);
}
