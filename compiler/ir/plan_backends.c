/*
 * Which backend can run a plan (acc_plan.h): the one place that says it, for the runtime's
 * backends before they set a plan up, for the selection tables that store the answer per choice,
 * and for the reports that say why a GPU job gets NCCL.
 */
#include "acc_kernels.h"
#include "acc_plan.h"

#include <string.h>

static const char *const backend_names[] = {"auto", "host", "cuda"};

const char *acc_backend_name(acc_backend_t b)
{
    return b >= 0 && b <= ACC_BACKEND_CUDA ? backend_names[b] : "?";
}

acc_status_t acc_backend_parse(const char *s, acc_backend_t *out)
{
    for (int i = 0; s && i <= ACC_BACKEND_CUDA; i++)
        if (acc_str_ieq(s, backend_names[i])) {
            *out = (acc_backend_t)i;
            return ACC_OK;
        }
    return acc_error_set(ACC_ERR_INVALID, "unknown backend '%s' (auto, host, cuda)", s ? s : "");
}

static int node(const int *node_of, uint32_t rank)
{
    return node_of ? node_of[rank] : 0;
}

/* A rank on another node than r that op reaches (-1: none).  Memory operations - put, get,
 * reduce_peers, and the counters of signal and wait - read or write the peer's memory; with
 * `messages` also the peers that op sends to or receives from. */
static int far_peer(const acc_plan_t *p, const acc_op_t *op, int r, const int *node_of,
                    int messages)
{
    int memory = op->code == ACC_OP_PUT || op->code == ACC_OP_GET || op->code == ACC_OP_SIGNAL ||
                 op->code == ACC_OP_WAIT;
    if (op->code == ACC_OP_REDUCE_PEERS) {
        for (uint32_t j = 0; j < op->npeers; j++)
            if (node(node_of, p->peer_pool[op->peers_off + j]) != node(node_of, (uint32_t)r))
                return (int)p->peer_pool[op->peers_off + j];
        return -1;
    }
    if ((memory || messages) && op->peer >= 0 &&
        node(node_of, (uint32_t)op->peer) != node(node_of, (uint32_t)r))
        return op->peer;
    if (messages && op->peer2 >= 0 &&
        node(node_of, (uint32_t)op->peer2) != node(node_of, (uint32_t)r))
        return op->peer2;
    return -1;
}

acc_status_t acc_plan_runs_on(const acc_plan_t *p, acc_backend_t backend, const int *node_of)
{
    int cuda = backend == ACC_BACKEND_CUDA;

    if (backend != ACC_BACKEND_HOST && !cuda)
        return acc_error_set(ACC_ERR_INVALID,
                             "which plans the '%s' backend runs: name host or cuda",
                             acc_backend_name(backend));
    if (cuda && p->nranks > ACC_KARG_RANKS)
        return acc_error_set(ACC_ERR_UNSUPPORTED,
                             "the cuda backend runs acc's plans on up to %d ranks; NCCL serves %d",
                             ACC_KARG_RANKS, p->nranks);
    /* A view answers for its rank alone; the runtime's ranks agree on the answer by a vote.  A
     * quotient's listed ranks answer for all: the others are them, translated. */
    for (int r = p->view ? p->view->rank : 0; r < (p->view ? p->view->rank + 1 : p->nranks); r++)
        for (int l = 0; l < p->nlanes; l++) {
            const acc_lane_prog_t *prog = acc_plan_prog(p, r, l);
            for (uint32_t k = 0; k < prog->nops; k++) {
                const acc_op_t *op = &prog->ops[k];
                int far = far_peer(p, op, r, node_of, cuda);
                if (far < 0)
                    continue;
                if (cuda)
                    return acc_error_set(ACC_ERR_UNSUPPORTED,
                                         "the cuda backend runs multi-node plans through NCCL: "
                                         "%s %s has steps between nodes (rank %d lane %d "
                                         "operation %u reaches rank %d)",
                                         acc_coll_name(p->coll), p->algo, r, l, k, far);
                return acc_error_set(ACC_ERR_UNSUPPORTED,
                                     "the host backend reaches other nodes through messages "
                                     "only: %s %s: rank %d lane %d operation %u (%s) touches the "
                                     "memory of rank %d on another node",
                                     acc_coll_name(p->coll), p->algo, r, l, k,
                                     acc_op_name((acc_opcode_t)op->code), far);
            }
        }
    return ACC_OK;
}

acc_status_t acc_plan_runs_on_nodes(const acc_plan_t *p, acc_backend_t backend, int ranks_per_node)
{
    int *node_of = NULL;
    acc_status_t st;

    if (ranks_per_node > 0 && ranks_per_node < p->nranks) {
        if (!(node_of = acc_mem_calloc((size_t)p->nranks, sizeof(int))))
            return acc_error_set(ACC_ERR_NOMEM, "out of memory asking which backends run %s",
                                 p->algo);
        for (int r = 0; r < p->nranks; r++)
            node_of[r] = r / ranks_per_node;
    }
    st = acc_plan_runs_on(p, backend, node_of);
    acc_mem_free(node_of);
    return st;
}

unsigned acc_plan_backends(const acc_plan_t *p, int ranks_per_node)
{
    unsigned set = 0;
    for (int b = ACC_BACKEND_HOST; b <= ACC_BACKEND_CUDA; b++)
        if (acc_plan_runs_on_nodes(p, (acc_backend_t)b, ranks_per_node) == ACC_OK)
            set |= 1u << b;
    return set;
}

void acc_plan_backend_rule(const char *message, char *out, size_t cap)
{
    const char *colon = strstr(message, ": ");
    size_t n = colon ? (size_t)(colon - message) : strlen(message);
    if (cap)
        snprintf(out, cap, "%.*s", (int)(n < cap ? n : cap - 1), message);
}

void acc_backends_format(unsigned set, char *out, size_t cap)
{
    size_t len = 0;
    if (cap)
        out[0] = '\0';
    for (int b = ACC_BACKEND_HOST; b <= ACC_BACKEND_CUDA; b++)
        if (set & (1u << b) && len < cap)
            len += (size_t)snprintf(out + len, cap - len, "%s%s", len ? " " : "", backend_names[b]);
}

acc_status_t acc_backends_parse(const char *s, unsigned *out)
{
    char word[16];
    unsigned set = 0;
    size_t i = 0;

    while (s && s[i]) {
        size_t n = strcspn(s + i, " ");
        acc_backend_t b;
        snprintf(word, sizeof(word), "%.*s", (int)(n < sizeof(word) ? n : sizeof(word) - 1), s + i);
        if (n == 0 || n >= sizeof(word) || acc_backend_parse(word, &b) != ACC_OK ||
            b == ACC_BACKEND_AUTO)
            return acc_error_set(ACC_ERR_INVALID,
                                 "backend set '%s': '%.*s' is not host or cuda (names "
                                 "separated by one space)",
                                 s, (int)n, s + i);
        set |= 1u << b;
        i += n + (s[i + n] == ' ');
    }
    *out = set;
    return ACC_OK;
}
