/*
 * acc-compile: read a machine's topology and compile collective schedules for it.
 * A thin layer of argument parsing and printing around the library; see --help.
 */
#include "acc_topo.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

enum { EXIT_OK = 0, EXIT_INPUT = 1, EXIT_USAGE = 2, EXIT_OUTPUT = 3 };

static const char usage_text[] =
    "usage: acc-compile --topo SRC [--print-topo [--json]] [--export-topo yaml|nccl-xml [-o FILE]]\n"
    "       acc-compile --list-platforms | --help | --version\n"
    "\n"
    "SRC is one of\n"
    "  a file            NCCL topology XML (NCCL_TOPO_DUMP_FILE), hwloc XML (lstopo --of xml),\n"
    "                    `nvidia-smi topo -m` output, or acc topology YAML; the format is\n"
    "                    detected from the content\n"
    "  a platform name   one of the shipped descriptions (--list-platforms), e.g. dgx-h100\n"
    "  auto              discover this machine (hwloc + NVML)\n"
    "  a description     synthetic, e.g. \"nodes=2 gpus=8 nvlink=18 nic=8x400\"\n"
    "\n"
    "  --print-topo         print a summary: GPUs, path matrix, NICs, NUMA, network,\n"
    "                       every assumed fact, and the fingerprint (default action)\n"
    "  --json               print the summary as JSON\n"
    "  --export-topo FMT    write the topology as acc YAML (yaml) or NCCL topology XML\n"
    "                       (nccl-xml, usable as NCCL_TOPO_FILE)\n"
    "  -o, --output FILE    where --export-topo writes (default: standard output)\n"
    "  --list-platforms     list the shipped platform descriptions\n"
    "\n"
    "Exit status: 0 success, 1 unusable input (the message names the file and place),\n"
    "2 bad command line, 3 output could not be written.\n"
    "Logging: ACC_LOG_LEVEL=error|warn|info|debug|trace, ACC_LOG_SUBSYS=topo,compiler,...\n";

typedef struct {
    const char *topo;
    const char *export_fmt;
    const char *output;
    int print_topo;
    int json;
    int list_platforms;
} options_t;

static int usage_error(const char *what, const char *arg)
{
    fprintf(stderr, "acc-compile: %s%s%s\nTry 'acc-compile --help'.\n", what, arg ? " " : "",
            arg ? arg : "");
    return EXIT_USAGE;
}

static int parse_args(int argc, char **argv, options_t *o)
{
    enum { OPT_TOPO = 256, OPT_PRINT, OPT_JSON, OPT_EXPORT, OPT_LIST, OPT_VERSION };
    static const struct option longopts[] = {
        {"topo", required_argument, NULL, OPT_TOPO},
        {"print-topo", no_argument, NULL, OPT_PRINT},
        {"json", no_argument, NULL, OPT_JSON},
        {"export-topo", required_argument, NULL, OPT_EXPORT},
        {"output", required_argument, NULL, 'o'},
        {"list-platforms", no_argument, NULL, OPT_LIST},
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, OPT_VERSION},
        {NULL, 0, NULL, 0},
    };
    int c;

    memset(o, 0, sizeof(*o));
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":ho:", longopts, NULL)) != -1) {
        switch (c) {
        case OPT_TOPO: o->topo = optarg; break;
        case OPT_PRINT: o->print_topo = 1; break;
        case OPT_JSON: o->json = 1; break;
        case OPT_EXPORT: o->export_fmt = optarg; break;
        case 'o': o->output = optarg; break;
        case OPT_LIST: o->list_platforms = 1; break;
        case 'h': fputs(usage_text, stdout); return -1;
        case OPT_VERSION: printf("acc-compile %s\n", ACC_VERSION_STRING); return -1;
        case ':': return usage_error("this option needs a value:", argv[optind - 1]);
        default: return usage_error("unknown option", argv[optind - 1]);
        }
    }
    if (optind < argc)
        return usage_error("unexpected argument", argv[optind]);
    if (o->export_fmt && strcmp(o->export_fmt, "yaml") != 0 &&
        strcmp(o->export_fmt, "nccl-xml") != 0)
        return usage_error("--export-topo takes yaml or nccl-xml, not", o->export_fmt);
    if (o->output && !o->export_fmt)
        return usage_error("-o/--output goes with --export-topo", NULL);
    if (!o->list_platforms && !o->topo)
        return usage_error("--topo SRC is required", NULL);
    if (!o->export_fmt)
        o->print_topo = 1;
    return 0;
}

static int write_out(const char *path, const acc_buf_t *b)
{
    if (!path || strcmp(path, "-") == 0) {
        fwrite(b->data, 1, b->len, stdout);
        return EXIT_OK;
    }
    if (acc_write_file(path, b->data, b->len) != ACC_OK) {
        fprintf(stderr, "acc-compile: %s\n", acc_error_message());
        return EXIT_OUTPUT;
    }
    return EXIT_OK;
}

static int list_platforms(void)
{
    char **names;
    size_t n, i;
    if (acc_topo_platform_list(&names, &n) != ACC_OK) {
        fprintf(stderr, "acc-compile: %s\n", acc_error_message());
        return EXIT_INPUT;
    }
    for (i = 0; i < n; i++)
        printf("%s\n", names[i]);
    acc_topo_strv_free(names, n);
    return EXIT_OK;
}

int main(int argc, char **argv)
{
    options_t o;
    acc_topo_t *topo = NULL;
    acc_buf_t b;
    int rc = parse_args(argc, argv, &o);
    acc_status_t st = ACC_OK;

    if (rc < 0)
        return EXIT_OK;
    if (rc > 0)
        return rc;
    if (acc_settings_validate() != ACC_OK) {
        fprintf(stderr, "acc-compile: %s\n", acc_error_message());
        return EXIT_USAGE;
    }
    if (o.list_platforms)
        return list_platforms();
    if (acc_topo_load(o.topo, &topo) != ACC_OK) {
        fprintf(stderr, "acc-compile: %s\n", acc_error_message());
        return EXIT_INPUT;
    }
    acc_buf_init(&b);
    if (o.print_topo) {
        st = o.json ? acc_topo_summary_json(topo, &b) : acc_topo_summary(topo, &b);
        if (st == ACC_OK)
            rc = write_out(NULL, &b);
        acc_buf_reset(&b);
    }
    if (st == ACC_OK && o.export_fmt) {
        st = strcmp(o.export_fmt, "yaml") == 0 ? acc_topo_export_yaml(topo, &b)
                                                : acc_topo_export_nccl_xml(topo, &b);
        if (st == ACC_OK)
            rc = write_out(o.output, &b);
    }
    if (st != ACC_OK) {
        fprintf(stderr, "acc-compile: %s\n", acc_error_message());
        rc = EXIT_INPUT;
    }
    acc_buf_free(&b);
    acc_topo_destroy(topo);
    return rc;
}
