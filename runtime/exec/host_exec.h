/*
 * host_exec.h - the host executor's state, shared by its scheduling half (host_exec.c: threads,
 * blocking, deadlock detection, setup) and its data half (host_ops.c: what each operation does
 * to the buffers).  Internal to acc.
 *
 * Locking: every field marked (L) is read and written only under exec_t.lock.  Buffer contents
 * are touched outside the lock; the plan's own ordering (FIFO connections, dependencies,
 * signal/wait) is what keeps those accesses apart, as it would on a GPU.
 */
#ifndef ACC_HOST_EXEC_H
#define ACC_HOST_EXEC_H

#include "host_reduce.h"

#include <pthread.h>
#include <stdatomic.h>

/* A message in a connection: its chunks back to back, and the element count of each. */
typedef struct {
    unsigned char *data;
    size_t cap;
    uint64_t *lens;
    uint32_t lcap;
    uint32_t nchunks;
} hx_msg_t;

typedef struct {
    hx_msg_t *ring; /* plan->slots messages, allocated by the first send */
    uint32_t head;  /* (L) oldest committed message */
    uint32_t count; /* (L) committed messages */
    int sender;     /* worker index of the sending (rank, lane) */
    int receiver;   /* worker index of the receiving (rank, lane) */
} conn_t;

/* What a blocked thread waits for. */
enum { W_NONE = 0, W_SPACE, W_MSG, W_DEP, W_SIGNAL };

typedef struct exec exec_t;

typedef struct {
    exec_t *x;
    int rank, lane;
    const acc_lane_prog_t *prog;
    uint32_t *in_conn, *out_conn; /* per operation: connection received from / sent to */
    pthread_t tid;
    int started;
    pthread_cond_t cond;
    uint32_t done;   /* (L) operations completed */
    int finished;    /* (L) */
    int blocked;     /* (L) sleeping until a waker clears it */
    uint32_t cur_op; /* (L) the operation being run, for reports */
    int wait_kind;   /* (L) W_* */
    uint32_t wait_conn;
    int wait_lane;
    uint32_t wait_op;
    int wait_peer;
    uint16_t wait_slot;
    uint32_t wait_value;
    hx_msg_t tmp;      /* the value a RECV_REDUCE_SEND forwards */
    const void **ptrs; /* REDUCE_PEERS sources */
} worker_t;

typedef struct {
    unsigned char *base[ACC_BUF_COUNT];
    uint64_t elems[ACC_BUF_COUNT];
    uint32_t nchunks[ACC_BUF_COUNT];
    int64_t *scratch_len; /* elements held by each scratch chunk; -1 before the first write */
    int own_scratch;
} rank_mem_t;

struct exec {
    const acc_plan_t *plan;
    acc_dtype_t dt;
    acc_redop_t op;
    size_t es;
    uint64_t count;
    uint64_t scratch_cap; /* elements a scratch chunk can hold */
    rank_mem_t *mem;
    void **owned; /* private buffers standing in for ones the caller has not */
    size_t nowned;
    conn_t *conns;
    uint32_t nconns;
    worker_t *workers; /* rank x nlanes + lane */
    int nworkers;
    uint32_t *counters; /* (L) signal counters, hx_counter() */
    uint32_t nslots;
    pthread_mutex_t lock;
    pthread_cond_t main_cond;
    int nlive;           /* (L) threads not finished */
    int nblocked;        /* (L) threads asleep in hx_block */
    int abort;           /* (L) */
    acc_status_t status; /* (L) first failure */
    char msg[1024];
    atomic_uint_fast64_t progress;
};

static inline size_t hx_counter(const exec_t *x, int from, int to, uint16_t slot)
{
    return ((size_t)from * (size_t)x->plan->nranks + (size_t)to) * x->nslots + slot;
}

/* With the lock held: sleep until what w->wait_* describes holds (0), or the run is aborted
 * (-1; a deadlock is detected and reported here). */
int hx_block(exec_t *x, worker_t *w);
/* With the lock held: w's condition may now hold. */
void hx_wake(exec_t *x, worker_t *w);
/* Without the lock: record a failure of w's current operation and stop the run; returns -1. */
int hx_fail(exec_t *x, const worker_t *w, acc_status_t st, const char *fmt, ...) ACC_PRINTF(4, 5);
/* Run one operation of w (host_ops.c), without the lock; 0 or -1 (failed or aborted). */
int hx_run_op(exec_t *x, worker_t *w, const acc_op_t *op);

#endif
