/*
 * acc-compile: read a machine's topology and compile collective schedules for it.
 * A thin layer of argument parsing and printing around the library; see --help.
 */
#include "compile_cli.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage_text[] =
    "usage: acc-compile --topo SRC [--nvlink-from PLATFORM] [--print-topo [--json]]\n"
    "                   [--export-topo yaml|nccl-xml [-o FILE]]\n"
    "       acc-compile --topo SRC --list-algos\n"
    "       acc-compile --topo SRC --coll C --algo NAME [--lanes N] [--chunks M] [--root R]\n"
    "                   [--inner A --outer B] [--proto P] [--emit-plan FILE.yaml]\n"
    "                   [--export-msccl FILE.xml]\n"
    "       acc-compile --topo SRC --report [--coll C | --full] [--json] [--plot FILE.svg]\n"
    "       acc-compile --topo SRC --draw FILE.svg             (a picture of the topology)\n"
    "       acc-compile --verify FILE.yaml\n"
    "       acc-compile --import-msccl FILE.xml [--verify] [--emit-plan FILE.yaml]\n"
    "       acc-compile --topo SRC --db FILE [--coll C]          (store schedules)\n"
    "                   [--arch sm_80,sm_90 [--types LIST] [--ops LIST]]   (and their CUBINs)\n"
    "       acc-compile --topo SRC --db FILE --print-selection   (read them back)\n"
    "       acc-compile --list-platforms | --help | --version\n"
    "       acc-compile --topo SRC [--coll C [--algo NAME ...]] [--emit-cuda DIR]\n"
    "                   [--arch sm_80,sm_90] [--types LIST] [--ops LIST]\n"
    "\n"
    "SRC is one of\n"
    "  a file            NCCL topology XML (NCCL_TOPO_DUMP_FILE), hwloc XML (lstopo --of xml),\n"
    "                    `nvidia-smi topo -m` output, or acc topology YAML; the format is\n"
    "                    detected from the content\n"
    "  a platform name   one of the shipped descriptions (--list-platforms), e.g. dgx-h100\n"
    "  auto              discover this machine (hwloc + NVML)\n"
    "  a description     synthetic, e.g. \"nodes=2 gpus=8 nvlink=18 nic=8x400\"\n"
    "\n"
    "Topology\n"
    "  --nvlink-from PLATFORM  add the NVLinks of a shipped platform with as many GPUs of\n"
    "                       the same generation to SRC, a file that lists none (NCCL\n"
    "                       discovers them at run time), e.g. --nvlink-from dgx-h100\n"
    "  --print-topo         print a summary: GPUs, path matrix, NICs, NUMA, network,\n"
    "                       warnings, every assumed fact, and the fingerprint (default)\n"
    "  --json               print the summary (or the --report) as JSON\n"
    "  --export-topo FMT    write the topology as acc YAML (yaml) or NCCL topology XML\n"
    "                       (nccl-xml, usable as NCCL_TOPO_FILE)\n"
    "  -o, --output FILE    where --export-topo writes (default: standard output)\n"
    "  --list-platforms     list the shipped platform descriptions\n"
    "  --draw FILE.svg      a picture: of the topology, or with a plan (--algo, --verify FILE,\n"
    "                       --import-msccl) of the plan: rings and trees as graphs and every\n"
    "                       rank's lanes on a timeline (the simulator's times on --topo SRC)\n"
    "                       with the critical path marked\n"
    "Kernels\n"
    "  --emit-cuda DIR      write the CUDA source of the run's plans into DIR, one .cu file\n"
    "                       per kernel module (one per plan, type and reduction)\n"
    "  --arch LIST          compile those modules with NVRTC for each architecture of LIST\n"
    "                       (sm_80,sm_90,...) through the kernel cache (ACC_CACHE_DIR) and\n"
    "                       report counts and times.  The run's plans: --algo's, --verify\n"
    "                       FILE's or --import-msccl's, else every algorithm that applies\n"
    "                       to SRC (of --coll C); with --db, the plans of the selection\n"
    "                       tables, whose CUBINs are stored in FILE\n"
    "  --types LIST         data types of the modules: fp32,fp16,bf16,fp64,int32 (also\n"
    "                       float,half,bfloat16,double); default fp32,fp16,bf16\n"
    "  --ops LIST           reductions: sum,prod,min,max,avg; default sum.  Collectives that\n"
    "                       only move data have one module per type for all reductions\n"
    "Plans\n"
    "  --list-algos         every algorithm, and whether it applies to SRC (and why not)\n"
    "  --coll C             allreduce, allgather, reduce_scatter, broadcast, reduce, alltoall\n"
    "  --algo NAME          generate the plan of algorithm NAME for SRC (verified)\n"
    "  --lanes N, --chunks M, --root R, --inner A, --outer B, --proto Simple|LL|LL128\n"
    "                       the generator's parameters (0 or absent: its default)\n"
    "  --emit-plan FILE     write the plan as YAML (schedules/FORMAT.md); - for stdout\n"
    "  --verify FILE.yaml   load a plan file and prove it correct\n"
    "  --import-msccl FILE  read an MSCCL algorithm XML into a plan (always verified)\n"
    "  --export-msccl FILE  write the plan as MSCCL algorithm XML\n"
    "Report\n"
    "  --report             per message size (1K to 4G): acc's best plan, its predicted time,\n"
    "                       algbw and busbw, NCCL's choice and time (its 2.28 model), the\n"
    "                       speedup, the fraction of the bound reached; then the selection\n"
    "                       table; for --coll C, else for every collective: then only the\n"
    "                       tables, unless --full; --json for JSON (always everything)\n"
    "  --full               with --report and no --coll: every size of every collective\n"
    "  --plot FILE.svg      with --report: busbw against size for acc, NCCL and the bound\n"
    "Database\n"
    "  --db FILE            store the topology, every selected plan and the selection table of\n"
    "                       every collective (or --coll C) in FILE (SQLite); with --arch, the\n"
    "                       CUBIN of every plan of those tables per architecture, type and\n"
    "                       reduction; running it again changes nothing (and compiles\n"
    "                       nothing: the kernel cache), another topology adds to the file\n"
    "  --print-selection    with --db: print this topology's selection tables from FILE\n"
    "  --plot FILE.svg      with --print-selection: the tables as size bands, acc vs NCCL\n"
    "\n"
    "Exit status: 0 success, 1 unusable input or a plan that fails verification (the message\n"
    "names the file and place, or the rank, lane, operation and chunk), 2 bad command line,\n"
    "3 output could not be written.\n"
    "Logging: ACC_LOG_LEVEL=error|warn|info|debug|trace, ACC_LOG_SUBSYS=topo,compiler,...\n";

int compile_fail(int code)
{
    fprintf(stderr, "acc-compile: %s\n", acc_error_message());
    return code;
}

int compile_write(const char *path, const acc_buf_t *b)
{
    if (!path || strcmp(path, "-") == 0) {
        /* Flushed now, so that a failure stops the run with the output named (main's
         * cli_exit would also catch it, after the remaining actions). */
        if (fwrite(b->data ? b->data : "", 1, b->len, stdout) != b->len || fflush(stdout) != 0) {
            acc_error_set(ACC_ERR_IO, "cannot write standard output: %s", strerror(errno));
            return compile_fail(EXIT_OUTPUT);
        }
        return EXIT_OK;
    }
    if (acc_write_file(path, b->data ? b->data : "", b->len) != ACC_OK) {
        fprintf(stderr,
                "acc-compile: %s; nothing was written: give a path in a directory you can write "
                "(- for standard output)\n",
                acc_error_message());
        return EXIT_OUTPUT;
    }
    return EXIT_OK;
}

static int usage_error(const char *what, const char *arg)
{
    fprintf(stderr, "acc-compile: %s%s%s\nTry 'acc-compile --help'.\n", what, arg ? " " : "",
            arg ? arg : "");
    return EXIT_USAGE;
}

/* Lane, chunk and root counts: 0 (the generator's default) up to 2^20. */
#define COUNT_MAX (1 << 20)

static int parse_count(const char *opt, const char *text, int *out)
{
    int64_t v;
    char what[96];
    if (acc_parse_int64(text, &v) != ACC_OK || v < 0 || v > COUNT_MAX) {
        snprintf(what, sizeof(what), "%s needs an integer from 0 to %d, not", opt, COUNT_MAX);
        usage_error(what, text);
        return -1;
    }
    *out = (int)v;
    return 0;
}

/* Options of the kernel actions (compile_cuda.c). */
enum { OPT_EMIT_CUDA = 400, OPT_ARCH, OPT_TYPES, OPT_OPS };

enum {
    OPT_TOPO = 256,
    OPT_NVLINK_FROM,
    OPT_PRINT,
    OPT_JSON,
    OPT_EXPORT,
    OPT_LIST,
    OPT_VERSION,
    OPT_LIST_ALGOS,
    OPT_COLL,
    OPT_ALGO,
    OPT_LANES,
    OPT_CHUNKS,
    OPT_ROOT,
    OPT_INNER,
    OPT_OUTER,
    OPT_PROTO,
    OPT_EMIT,
    OPT_VERIFY,
    OPT_IMPORT,
    OPT_EXPORT_MSCCL,
    OPT_REPORT,
    OPT_FULL,
    OPT_PLOT,
    OPT_DB,
    OPT_PRINT_SELECTION,
    OPT_DRAW
};

static const struct option longopts[] = {
    {"topo", required_argument, NULL, OPT_TOPO},
    {"nvlink-from", required_argument, NULL, OPT_NVLINK_FROM},
    {"emit-cuda", required_argument, NULL, OPT_EMIT_CUDA},
    {"arch", required_argument, NULL, OPT_ARCH},
    {"types", required_argument, NULL, OPT_TYPES},
    {"ops", required_argument, NULL, OPT_OPS},
    {"print-topo", no_argument, NULL, OPT_PRINT},
    {"json", no_argument, NULL, OPT_JSON},
    {"export-topo", required_argument, NULL, OPT_EXPORT},
    {"output", required_argument, NULL, 'o'},
    {"list-platforms", no_argument, NULL, OPT_LIST},
    {"list-algos", no_argument, NULL, OPT_LIST_ALGOS},
    {"coll", required_argument, NULL, OPT_COLL},
    {"algo", required_argument, NULL, OPT_ALGO},
    {"lanes", required_argument, NULL, OPT_LANES},
    {"chunks", required_argument, NULL, OPT_CHUNKS},
    {"root", required_argument, NULL, OPT_ROOT},
    {"inner", required_argument, NULL, OPT_INNER},
    {"outer", required_argument, NULL, OPT_OUTER},
    {"proto", required_argument, NULL, OPT_PROTO},
    {"emit-plan", required_argument, NULL, OPT_EMIT},
    {"verify", optional_argument, NULL, OPT_VERIFY},
    {"import-msccl", required_argument, NULL, OPT_IMPORT},
    {"export-msccl", required_argument, NULL, OPT_EXPORT_MSCCL},
    {"report", no_argument, NULL, OPT_REPORT},
    {"full", no_argument, NULL, OPT_FULL},
    {"plot", required_argument, NULL, OPT_PLOT},
    {"db", required_argument, NULL, OPT_DB},
    {"print-selection", no_argument, NULL, OPT_PRINT_SELECTION},
    {"draw", required_argument, NULL, OPT_DRAW},
    {"help", no_argument, NULL, 'h'},
    {"version", no_argument, NULL, OPT_VERSION},
    {NULL, 0, NULL, 0},
};

/* The version and what --arch can use: "acc-compile 0.1.0 (NVRTC 13.0)". */
static void print_version(void)
{
    int major = 0, minor = 0;
    if (acc_nvrtc_available() && acc_nvrtc_version(&major, &minor) == ACC_OK)
        printf("acc-compile %s (NVRTC %d.%d)\n", ACC_VERSION_STRING, major, minor);
    else
        printf("acc-compile %s (without NVRTC: --arch unavailable)\n", ACC_VERSION_STRING);
}

static int parse_args(int argc, char **argv, compile_opts_t *o)
{
    int c, types_given = 0, ops_given = 0;

    memset(o, 0, sizeof(*o));
    acc_kbuild_opts_init(&o->kernels);
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":ho:", longopts, NULL)) != -1) {
        switch (c) {
        case OPT_TOPO:
            if (cli_once("acc-compile", &o->topo, "--topo", optarg) != EXIT_OK)
                return EXIT_USAGE;
            break;
        case OPT_NVLINK_FROM:
            o->nvlink_from = optarg;
            break;
        case OPT_EMIT_CUDA:
            o->emit_cuda = optarg;
            break;
        case OPT_ARCH:
            o->arch = optarg;
            break;
        case OPT_TYPES:
            if (compile_parse_types(optarg, o) != EXIT_OK)
                return usage_error(acc_error_message(), NULL);
            types_given = 1;
            break;
        case OPT_OPS:
            if (compile_parse_ops(optarg, o) != EXIT_OK)
                return usage_error(acc_error_message(), NULL);
            ops_given = 1;
            break;
        case OPT_PRINT:
            o->print_topo = 1;
            break;
        case OPT_JSON:
            o->json = 1;
            break;
        case OPT_EXPORT:
            o->export_fmt = optarg;
            break;
        case 'o':
            o->output = optarg;
            break;
        case OPT_LIST:
            o->list_platforms = 1;
            break;
        case OPT_LIST_ALGOS:
            o->list_algos = 1;
            break;
        case OPT_COLL:
            if (cli_once("acc-compile", &o->coll, "--coll", optarg) != EXIT_OK)
                return EXIT_USAGE;
            break;
        case OPT_ALGO:
            if (cli_once("acc-compile", &o->algo, "--algo", optarg) != EXIT_OK)
                return EXIT_USAGE;
            break;
        case OPT_LANES:
            if (parse_count("--lanes", optarg, &o->args.lanes))
                return EXIT_USAGE;
            break;
        case OPT_CHUNKS:
            if (parse_count("--chunks", optarg, &o->args.chunks))
                return EXIT_USAGE;
            break;
        case OPT_ROOT:
            if (parse_count("--root", optarg, &o->args.root))
                return EXIT_USAGE;
            break;
        case OPT_INNER:
            o->args.inner = optarg;
            break;
        case OPT_OUTER:
            o->args.outer = optarg;
            break;
        case OPT_PROTO:
            if (acc_proto_parse(optarg, &o->args.proto) != ACC_OK)
                return usage_error(acc_error_message(), NULL);
            break;
        case OPT_EMIT:
            o->emit_plan = optarg;
            break;
        case OPT_VERIFY:
            o->verify = 1;
            /* "--verify FILE" and "--verify=FILE" both name a plan file. */
            if (optarg)
                o->verify_file = optarg;
            else if (optind < argc && argv[optind][0] != '-')
                o->verify_file = argv[optind++];
            break;
        case OPT_IMPORT:
            o->import_msccl = optarg;
            break;
        case OPT_EXPORT_MSCCL:
            o->export_msccl = optarg;
            break;
        case OPT_REPORT:
            o->report = 1;
            break;
        case OPT_FULL:
            o->full = 1;
            break;
        case OPT_PLOT:
            o->plot = optarg;
            break;
        case OPT_DB:
            if (cli_once("acc-compile", &o->db, "--db", optarg) != EXIT_OK)
                return EXIT_USAGE;
            break;
        case OPT_PRINT_SELECTION:
            o->print_selection = 1;
            break;
        case OPT_DRAW:
            o->draw = optarg;
            break;
        case 'h':
            fputs(usage_text, stdout);
            return -1;
        case OPT_VERSION:
            print_version();
            return -1;
        case ':':
            return usage_error("this option needs a value:", argv[optind - 1]);
        default:
            return usage_error("unknown option", argv[optind - 1]);
        }
    }
    if (optind < argc)
        return usage_error("unexpected argument", argv[optind]);
    if ((o->emit_cuda || o->arch) && !o->topo && !o->verify_file && !o->import_msccl)
        return usage_error("--emit-cuda/--arch need plans: --topo SRC, --verify FILE or "
                           "--import-msccl FILE",
                           NULL);
    if ((types_given || ops_given) && !o->emit_cuda && !o->arch)
        return usage_error("--types and --ops choose the kernels of --emit-cuda DIR or --arch "
                           "LIST; add one",
                           NULL);
    if (o->db && (o->emit_cuda || o->arch) &&
        (o->print_selection || o->algo || o->verify_file || o->import_msccl))
        return usage_error("with --db, --emit-cuda and --arch build the kernels of the stored "
                           "selection tables; they go without --print-selection, --algo, "
                           "--verify FILE and --import-msccl",
                           NULL);
    /* Read before the topology summary becomes the default action below. */
    o->cuda_only = (o->emit_cuda || o->arch) && !o->print_topo && !o->export_fmt;
    if (o->export_fmt && strcmp(o->export_fmt, "yaml") != 0 &&
        strcmp(o->export_fmt, "nccl-xml") != 0)
        return usage_error("--export-topo takes yaml or nccl-xml, not", o->export_fmt);
    if (o->output && !o->export_fmt)
        return usage_error("-o/--output goes with --export-topo", NULL);
    if (o->algo && !o->coll)
        return usage_error("--algo needs --coll", NULL);
    if ((o->algo || o->list_algos) && !o->topo)
        return usage_error("--algo and --list-algos need --topo SRC", NULL);
    if (o->verify_file && o->import_msccl)
        return usage_error("--verify FILE and --import-msccl are separate inputs", NULL);
    if ((o->emit_plan || o->export_msccl) && !o->algo && !o->import_msccl && !o->verify_file)
        return usage_error("--emit-plan/--export-msccl need a plan: --algo, --import-msccl or "
                           "--verify FILE",
                           NULL);
    if (o->full && !o->report)
        return usage_error("--full goes with --report", NULL);
    if (o->plot && !o->report && !o->print_selection)
        return usage_error("--plot FILE.svg goes with --report or --print-selection", NULL);
    if (o->draw && !o->topo && !o->verify_file && !o->import_msccl)
        return usage_error("--draw FILE.svg draws a topology (--topo SRC) or a plan (--algo, "
                           "--verify FILE, --import-msccl FILE); add one",
                           NULL);
    if (o->draw && (o->report || o->db))
        return usage_error("--draw FILE.svg draws a topology or a plan; for the report and the "
                           "selection tables use --plot FILE.svg",
                           NULL);
    if (o->report && !o->topo)
        return usage_error("--report needs --topo SRC", NULL);
    if ((o->db || o->print_selection) && !o->topo)
        return usage_error("--db and --print-selection need --topo SRC", NULL);
    if (o->print_selection && !o->db)
        return usage_error("--print-selection reads a database: add --db FILE", NULL);
    if (o->nvlink_from && !o->topo)
        return usage_error("--nvlink-from PLATFORM adds NVLinks to --topo SRC; add it", NULL);
    if (!o->list_platforms && !o->topo && !o->verify_file && !o->import_msccl)
        return usage_error("--topo SRC is required", NULL);
    if (o->topo && !o->export_fmt && !o->algo && !o->list_algos && !o->report && !o->db && !o->draw)
        o->print_topo = 1;
    return 0;
}

/* Each shipped platform with what it is: nodes, GPUs, NVLink, NICs. */
static int list_platforms(void)
{
    char **names;
    size_t n, i;
    int rc = EXIT_OK;
    acc_buf_t line;

    if (acc_topo_platform_list(&names, &n) != ACC_OK)
        return compile_fail(EXIT_INPUT);
    acc_buf_init(&line);
    for (i = 0; i < n && rc == EXIT_OK; i++) {
        acc_topo_t *t = NULL;
        acc_buf_reset(&line);
        if (acc_topo_load_platform(names[i], &t) != ACC_OK || acc_topo_describe(t, &line) != ACC_OK)
            rc = compile_fail(EXIT_INPUT);
        else
            printf("%-24s %s\n", names[i], line.data);
        acc_topo_destroy(t);
    }
    acc_buf_free(&line);
    acc_strv_free(names, n);
    return rc;
}

static int run(int argc, char **argv)
{
    compile_opts_t o;
    acc_topo_t *topo = NULL;
    int rc = parse_args(argc, argv, &o);

    if (rc < 0)
        return EXIT_OK;
    if (rc > 0)
        return rc;
    if (acc_settings_validate() != ACC_OK)
        return compile_fail(EXIT_USAGE);
    if (o.cuda_only)
        o.print_topo = 0;
    if (o.list_platforms)
        return list_platforms();
    if (o.topo && (rc = compile_topo_load(&o, &topo)) != EXIT_OK)
        return rc;
    rc = topo ? compile_topo_actions(&o, topo) : EXIT_OK;
    /* With --db the kernels are those of the selected plans, built as they are stored. */
    if (rc == EXIT_OK && (o.emit_cuda || o.arch) && !o.db)
        rc = compile_cuda_actions(&o, topo);
    if (rc == EXIT_OK && o.list_algos)
        rc = compile_list_algos(topo);
    if (rc == EXIT_OK && (o.algo || o.verify_file || o.import_msccl))
        rc = compile_plan_actions(&o, topo);
    if (rc == EXIT_OK && o.report)
        rc = compile_report_actions(&o, topo);
    if (rc == EXIT_OK && o.db)
        rc = o.print_selection ? compile_db_print_selection(&o, topo) : compile_db_store(&o, topo);
    acc_topo_destroy(topo);
    return rc;
}

int main(int argc, char **argv)
{
    int rc = cli_budget("acc-compile");
    return cli_exit("acc-compile", rc == EXIT_OK ? run(argc, argv) : rc);
}
