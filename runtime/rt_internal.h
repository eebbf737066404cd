/*
 * rt_internal.h - what the runtime's folders share: sockets and the bootstrap (comm/), the
 * communicator itself, and the backend interface the host backend (host/) implements.
 * Internal to runtime/.
 *
 * A communicator's life: the bootstrap joins the ranks (comm/bootstrap.c) and gives them a
 * star of TCP connections through rank 0 for small collectives of their own; loading
 * (comm/comm_load.c) finds the topology, the database and the selection tables and has the
 * ranks agree on them; each call (comm/comm_coll.c) is checked, looked up in the table and
 * handed to the backend with the plan to run, acc's or the fallback's.
 */
#ifndef ACC_RT_INTERNAL_H
#define ACC_RT_INTERNAL_H

#include "acc_db.h"
#include "acc_runtime.h"
#include "acc_select.h"
#include "acc_topo.h"

#include <pthread.h>
#include <sys/socket.h>

/* ---- sockets (comm/net.c) ------------------------------------------------------------------ */
/* Deadlines are seconds on acc_now_s()'s clock, 0 for none; abort_flag (optional) is polled
 * every 100 ms and ends the wait with ACC_ERR_ABORTED. */
typedef struct {
    struct sockaddr_storage ss;
    socklen_t len;
} net_addr_t;

void net_addr_text(const net_addr_t *a, char *buf, size_t n);
acc_status_t net_resolve(const char *host, const char *port, net_addr_t *out);
/* Is a a loopback address (127.0.0.0/8, ::1)? */
int net_is_loopback(const net_addr_t *a);
/* The address of the first interface that is up and not a loopback: an IPv4 address where
 * one has it, else a reachable IPv6 one; 1 when found. */
int net_interface_addr(net_addr_t *a);
/* Interfaces a setting names, at most this many. */
#define NET_MAX_IFS 8
typedef struct {
    char name[16]; /* IFNAMSIZ */
    net_addr_t addr;
} net_if_t;
/* The interfaces that spec, the value of the setting var, names in NCCL_SOCKET_IFNAME's syntax
 * (a comma-separated list of name prefixes; '=' first: exact names; '^' first: all but those):
 * each up, with a reachable address, once, in the list's order (net_if.c).  A name that finds
 * none is an error naming var and the name; beyond max, the first max (with a warning). */
acc_status_t net_interfaces(const char *var, const char *spec, net_if_t *out, int max, int *n);
acc_status_t net_listen(const net_addr_t *bind_to, int *fd_out, net_addr_t *bound);
acc_status_t net_connect(const net_addr_t *to, double deadline, const volatile int *abort_flag,
                         int *fd_out);
/* The same; with refused_is_final, a refused connection fails at once (ACC_ERR_NOT_FOUND)
 * instead of being retried: for an address that listened before anyone could know it. */
acc_status_t net_connect_once(const net_addr_t *to, double deadline, const volatile int *abort_flag,
                              int refused_is_final, int *fd_out);
/* net_connect from a local address (its port 0: any): the socket leaves through it. */
acc_status_t net_connect_from(const net_addr_t *from, const net_addr_t *to, double deadline,
                              const volatile int *abort_flag, int *fd_out);
acc_status_t net_accept(int listen_fd, double deadline, const volatile int *abort_flag,
                        int *fd_out);
acc_status_t net_send(int fd, const void *data, size_t len, double deadline,
                      const volatile int *abort_flag);
/* net_send of n parts at once, part i on fds[i], each socket written as it takes data: for a
 * message striped across several connections, which a part-by-part loop would leave idle. */
acc_status_t net_send_parts(const int *fds, const void *const *data, const size_t *len, int n,
                            double deadline, const volatile int *abort_flag);
acc_status_t net_recv(int fd, void *data, size_t len, double deadline,
                      const volatile int *abort_flag);
acc_status_t net_local_addr(int fd, net_addr_t *out);
void net_set_port(net_addr_t *a, unsigned port);
/* Close one of acc's sockets (every socket here is acc's: closed in forked children, see
 * net.c); *fd becomes -1. */
void net_close(int *fd);
/* Is a process listening at a?  1: it took the connection (alive, perhaps stuck), 0: refused
 * (nobody listens: the process that did has exited), -1: no answer within ms. */
int net_probe(const net_addr_t *a, int ms);
/* Register the fork handlers (idempotent); then net_forks() counts the forks between this
 * process's first communicator and now that made it a child: a communicator made at another
 * count belongs to an ancestor process. */
void net_init(void);
extern unsigned net_fork_count; /* net.c's count, read inline on every call's path */
static inline unsigned net_forks(void)
{
    return __atomic_load_n(&net_fork_count, __ATOMIC_SEQ_CST);
}

/* ---- the bootstrap (comm/bootstrap.c) -------------------------------------------------------- */
typedef struct rt_boot rt_boot_t;

#define BOOT_NONCE_BYTES 16

/* An id whose rendezvous a thread of this process serves, at the host name's address; it gives
 * up wait_ms after it starts (<= 0: never) unless a rank arrives, then when the ranks' own
 * timeout has passed since the first arrived. */
acc_status_t boot_root_start(int wait_ms, acc_unique_id_t *id);
/* On rank 0 of b: an id for a later communicator of b's ranks (acc_comm_dup), whose rendezvous
 * listens on the interface where b's peers reached rank 0, never at the host name's address. */
acc_status_t boot_root_start_near(const rt_boot_t *b, acc_unique_id_t *id);
acc_status_t boot_id_from_string(const char *host_port, acc_unique_id_t *id);
/* Join the ranks of id; every rank calls it with the same nranks. */
acc_status_t boot_create(const acc_unique_id_t *id, int rank, int nranks, int timeout_ms,
                         const volatile int *abort_flag, rt_boot_t **out);
void boot_destroy(rt_boot_t *b);
/* Small collectives over the star through rank 0, in the same order on every rank. */
acc_status_t boot_allgather(rt_boot_t *b, const void *mine, size_t bytes, void *all);
/* The same as the last step of a set-up: ranks other than 0 wait twice as long for the result,
 * so that a rank rank 0 counted in always hears rank 0's verdict (see comm_agree_final). */
acc_status_t boot_allgather_final(rt_boot_t *b, const void *mine, size_t bytes, void *all);
acc_status_t boot_bcast(rt_boot_t *b, void *buf, size_t bytes, int root);
acc_status_t boot_barrier(rt_boot_t *b);
/* An allgather sends rank 0 N records and every rank all N: O(N^2) bytes at rank 0.  The set-up
 * and the join use these instead, each O(1) bytes per rank and O(N) at rank 0 (docs/scale.md):
 *
 * One vote per rank, one verdict for all: the failure (status != ACC_OK) of least (order, rank),
 * else ACC_OK with rank -1.  A rank sends its text only when it fails. */
typedef struct {
    int32_t status, order, tag, rank;
    char text[2048];
} boot_vote_t;
void boot_vote_init(boot_vote_t *v, acc_status_t status);
acc_status_t boot_vote(rt_boot_t *b, const boot_vote_t *mine, boot_vote_t *verdict);
/* The same as the last step of a set-up (boot_allgather_final's deadlines). */
acc_status_t boot_vote_final(rt_boot_t *b, const boot_vote_t *mine, boot_vote_t *verdict);
/* Every rank's record to rank 0 (all: nranks records there; unused elsewhere, may be NULL). */
acc_status_t boot_gather(rt_boot_t *b, const void *mine, size_t bytes, void *all);
/* table holds nranks records of rec bytes, whole on rank 0: every other rank asks rank 0 for
 * the n records it names in want and finds them at their places in its table. */
acc_status_t boot_fetch(rt_boot_t *b, void *table, size_t rec, const int *want, int n);
/* What this rank's bootstrap has sent and received, rendezvous included: a frame is a message. */
typedef struct {
    uint64_t msgs_sent, bytes_sent, msgs_recv, bytes_recv;
} boot_traffic_t;
void boot_traffic(const rt_boot_t *b, boot_traffic_t *out);
/* How long those wait for a peer (the communicator's timeout unless changed; <= 0: for ever). */
void boot_set_wait(rt_boot_t *b, int wait_ms);
/* Where each rank listens for the host backend's connections between nodes; the listening
 * socket of this rank; the id's nonce, equal on every rank of the communicator. */
const net_addr_t *boot_peer_addr(const rt_boot_t *b, int rank);
/* Rank 0 knows every rank's address, the others their own and rank 0's: the others' they fetch
 * (collectively, boot_fetch) for the peers they connect to.  Is rank's address known here? */
int boot_peer_known(const rt_boot_t *b, int rank);
acc_status_t boot_fetch_addrs(rt_boot_t *b, const int *ranks, int n);
int boot_listen_fd(const rt_boot_t *b);
const uint8_t *boot_nonce(const rt_boot_t *b);
int boot_timeout_ms(const rt_boot_t *b);

/* ---- the communicator ----------------------------------------------------------------------- */

/* One call, as the API received it. */
typedef struct {
    acc_coll_t coll;
    const void *send;
    void *recv;
    uint64_t count; /* the API's count: allgather's per-rank part, reduce_scatter's result */
    acc_dtype_t dt;
    acc_redop_t op;
    int root;
    acc_stream_t stream;
    int inplace;
    uint64_t nbytes; /* NCCL's nBytes: what the tables are keyed by */
} rt_call_t;

typedef struct rt_backend rt_backend_t;

/* A collective's loaded table: the plan of each entry (NULL for NCCL's ranges, and until the
 * entry's first call: a rank reads only the plans its calls use, comm_table_plan), whether it
 * was read, whether the backend cannot run it on this communicator (asked when it is read),
 * and what ran. */
typedef struct {
    acc_select_table_t *table;
    acc_plan_t **plans;
    unsigned char *read;
    unsigned char *unfit;
    char **unfit_why; /* the reason the ranks agreed on, where a rank's view was asked */
    uint64_t *calls, *bytes;
    size_t last; /* the entry the last look-up found */
} rt_table_t;

/* A collective's last route (comm_coll.c): the size and root of its last call, the table's
 * answer for them (acc's plan and its entry, or none), and the fallback slots (NCCL's, the ring
 * plan's) once a call of them took one.  The answer holds for every later call of that size and
 * root - the tables and their plans, once read, do not change - so a job that repeats its sizes
 * skips the look-ups; a call of another size or root looks up again. */
typedef struct {
    uint64_t nbytes;
    int root;
    int known; /* nbytes and root hold a call's; plan and entry its table's answer */
    acc_plan_t *plan;
    size_t entry;
    size_t nccl_slot; /* index + 1 in fallbacks of NCCL's slot, 0 until a call took it */
    size_t ring_slot; /* the same for the ring plan's slot (its plan in the slot) */
} rt_route_t;

/* What serves the calls acc's tables do not: per (collective, root, what ran) - NCCL through
 * the backend, or acc's ring plan, generated on first use - with what it served. */
typedef struct {
    acc_coll_t coll;
    int root;
    const char *name;              /* "NCCL", "ring": a string that lives as long as acc */
    acc_plan_t *plan;              /* the ring's; NULL for NCCL */
    uint64_t calls, bytes;         /* calls of ranges the tables give NCCL, and of no range */
    uint64_t forced, forced_bytes; /* calls acc's plan could not serve */
} rt_fallback_t;

/* A plan the backend could not set up (every rank agreed), for calls of at least `bytes`:
 * not tried again for those (a smaller call may still fit where a larger one did not). */
typedef struct {
    const acc_plan_t *plan;
    uint64_t bytes;
    acc_status_t status;
    char why[384];
} rt_refusal_t;

struct acc_comm {
    /* its life (comm.c): made by acc, live or closing or dead, by which process */
    uint32_t magic;
    int state;           /* __atomic */
    int closed_by_abort; /* it was closed by acc_comm_abort (__atomic) */
    unsigned forks;      /* net_forks() when it was made */
    int pid;             /* the process that made it */
    int created;         /* set-up is over */
    acc_comm_t *next_dead;
    int rank, nranks;
    /* the options it was made with (strings copied), which acc_comm_dup passes on */
    acc_comm_opts_t opts;
    char *opts_topo, *opts_db;
    int duplicate; /* made by acc_comm_dup: its parent has said what it loaded */
    acc_backend_t backend_kind;
    int timeout_ms;        /* < 0: none */
    int external_fallback; /* the caller runs the fallback: return ACC_NO_DATA instead */
    int device_opt;        /* acc_comm_opts_t.device */
    volatile int abort;    /* set by acc_comm_abort: every wait gives up */
    int inflight;          /* entries that are not calls (comm_enter, __atomic) */
    int gate;              /* one call at a time (comm_begin_call, __atomic) */
    /* sticky: the failure that broke the communicator (comm_break; read with comm_error),
     * written once, under error_lock, message first */
    acc_status_t error;
    char error_msg[512];
    pthread_mutex_t error_lock;
    rt_boot_t *boot;
    char shm_tag[20]; /* random, from rank 0: names this communicator's shared memory */
    /* the machine: node of each rank (same-node ranks share memory), and the topology */
    int *node_of;
    int nnodes;
    acc_topo_t *topo;
    char fingerprint[ACC_SHA256_HEX_LEN + 1];
    /* loading: tables in use, or why everything goes to the fallback */
    int use_tables;
    char db_path[512]; /* the database the tables came from (the cuda backend's CUBINs too) */
    acc_db_t *db;      /* open while the tables are: their plans are read at first use */
    char fallback_reason[2048]; /* as long as an error message (common_status.c) */
    char settings_error[512];   /* the first ACC_* setting it could not use, which turns acc off */
    int forced_said;            /* the warning that acc's plan could not run here was given */
    rt_refusal_t *refused;
    size_t nrefused, refused_cap;
    rt_table_t tables[ACC_COLL_COUNT];
    rt_fallback_t *fallbacks;
    size_t nfallbacks, fallbacks_cap;
    rt_route_t route[ACC_COLL_COUNT];
    void *nccl; /* the NCCL communicator it was made from (acc_comm_from_nccl), borrowed */
    /* the backend */
    const rt_backend_t *be;
    void *be_state;
};

/* A communicator's mark, its states and its gate's (comm.c), here for the calls' path. */
#define COMM_MAGIC 0x61636363u /* "accc" */
enum { COMM_LIVE = 1, COMM_CLOSING, COMM_DEAD };
enum { GATE_FREE = 0, GATE_CALL, GATE_SHUT };

struct rt_backend {
    const char *name;
    acc_status_t (*create)(acc_comm_t *c, void **state);
    /* abort: do not wait for peers */
    void (*destroy)(acc_comm_t *c, void *state, int abort);
    /* Run a verified plan for this rank.  Errors set the message; a failure that leaves the
     * communicator unusable also sets *broken. */
    acc_status_t (*run)(acc_comm_t *c, void *state, const acc_plan_t *plan, const rt_call_t *call,
                        int *broken);
    /* Can this backend run plan (of the communicator's rank count) on this communicator?
     * ACC_ERR_UNSUPPORTED saying why not.  Asked once per table entry, not per call. */
    acc_status_t (*supports)(const acc_comm_t *c, const acc_plan_t *plan);
    /* 1: run() takes a rank's view of a plan (acc_plan_view_t), which is all a rank reads of
     * it; 0: the whole plan (the cuda backend, whose kernel holds every rank's code). */
    int rank_views;
    /* Optional: run a call the backend's own way (NCCL); ACC_ERR_UNSUPPORTED when it has none,
     * and then acc's ring plan serves it through run(). */
    acc_status_t (*fallback)(acc_comm_t *c, void *state, const rt_call_t *call, int *broken);
    /* Optional: a failure the backend found since (a launch that gave up), or ACC_OK. */
    acc_status_t (*async_error)(acc_comm_t *c, void *state);
};

extern const rt_backend_t rt_host_backend;
extern const rt_backend_t rt_cuda_backend;

/* cuda/cuda_backend.c: the CUDA device ordinal a cuda communicator's rank uses; -1 for a
 * communicator of another backend. */
int rt_cuda_comm_device(const acc_comm_t *c);
/* cuda/cuda_backend.c: an aborted communicator's device memory is kept (a kernel of its may
 * still run, and freeing would wait for the device); this synchronises the devices concerned
 * and frees it.  A normal destroy does it too, after its own synchronisation. */
void rt_cuda_reclaim(void);

/* comm/comm_locate.c: where a job finds its machine and its database.  The topology source is
 * given (an option), else ACC_TOPO ("auto": live discovery).  The database is given, else
 * ACC_DB, else the first of /etc/acc/acc.db and share/acc/acc.db of the installation acc runs
 * from (its real prefix, then the configured one: acc_install_data_dirs) that exists;
 * ACC_ERR_NOT_FOUND saying what was looked for and how to build one when none is. */
const char *rt_topo_source(const char *given);
acc_status_t rt_db_locate(const char *given, const char **path);

/* comm/comm_load.c: the database a communicator of these options reads: the option, ACC_DB,
 * or the first of the search path that exists; NULL when there is none.  Borrowed. */
const char *comm_db_path(const acc_comm_opts_t *opts);
/* The plan of entry `entry` of coll's table, read from the database and verified at the
 * entry's first call (every rank makes it at the same call, and the ranks agree that every one
 * could read it); NULL for NCCL's ranges and for a plan that could not be read on some rank
 * (rank 0 says why, once), which the fallback then serves.  (comm_load.c) */
acc_plan_t *comm_table_plan(acc_comm_t *c, acc_coll_t coll, size_t entry);
/* comm/comm_load.c: the communicator's shared-memory tag, its tables and where its ranks are.
 * Loading (the settings, the topology, the database, the tables, the agreement) never fails:
 * what cannot be used becomes c->fallback_reason; only the bootstrap's failures fail these. */
acc_status_t comm_prepare(acc_comm_t *c, const acc_comm_opts_t *opts);
acc_status_t comm_load(acc_comm_t *c, const acc_comm_opts_t *opts);
void comm_unload(acc_comm_t *c);
/* The statistics slot of what served a fallback call; NULL when out of memory. */
rt_fallback_t *comm_fallback_slot(acc_comm_t *c, acc_coll_t coll, int root, const char *name);
/* The ring plan of (coll, root), generated on first use; NULL with the message set. */
acc_plan_t *comm_fallback_plan(acc_comm_t *c, acc_coll_t coll, int root, rt_fallback_t **fb);

/* A collective step of set-up: every rank learns whether every rank managed it (mine is this
 * rank's status, its message the current one); the first failure, with its rank and message,
 * for all, so that all give up together instead of waiting for a peer that already has. */
acc_status_t comm_agree(acc_comm_t *c, acc_status_t mine, const char *step);
/* The same as the last step of a set-up: a rank returns ACC_OK only when rank 0 has counted
 * every rank's success, which every rank waits to hear (boot_allgather_final).  A failure of the
 * exchange itself (a peer gone, a timeout) breaks a communicator that was created already. */
acc_status_t comm_agree_final(acc_comm_t *c, acc_status_t mine, const char *step);

/* Every call on a communicator enters it first and leaves it at the end: ACC_OK (the call is
 * counted in flight) or why not (NULL, not a communicator, closed or closing, made by the
 * process this one forked from), the message naming `what`. */
acc_status_t comm_enter(acc_comm_t *c, const char *what);
void comm_leave(acc_comm_t *c);
/* Enter c through its gate, so that calls on it run one at a time even when a program
 * (wrongly) makes them on several threads at once, and closing waits for them; ends with
 * comm_end_call. */
static inline acc_status_t comm_begin_call(acc_comm_t *c, const char *what);
static inline void comm_end_call(acc_comm_t *c)
{
    __atomic_store_n(&c->gate, GATE_FREE, __ATOMIC_RELEASE);
}
/* The gate held, or a reason to wait for it or refuse the call (comm.c). */
acc_status_t comm_begin_call_slow(acc_comm_t *c, const char *what);
static inline acc_status_t comm_begin_call(acc_comm_t *c, const char *what)
{
    int free_ = GATE_FREE;
    /* Every call takes this way: a live communicator of this process with its gate free, one
     * atomic operation in all (the dispatch's budget is 30 ns); anything else, the slow one. */
    if (__builtin_expect(c && c->magic == COMM_MAGIC && c->forks == net_forks(), 1) &&
        __builtin_expect(__atomic_compare_exchange_n(&c->gate, &free_, GATE_CALL, 0,
                                                     __ATOMIC_ACQUIRE, __ATOMIC_RELAXED),
                         1)) {
        if (__builtin_expect(__atomic_load_n(&c->state, __ATOMIC_SEQ_CST) == COMM_LIVE, 1))
            return ACC_OK;
        comm_end_call(c); /* closing began: the slow way says so */
    }
    return comm_begin_call_slow(c, what);
}
/* Through NCCL's communicator nccl_comm (every rank calls it at the same point of its calls):
 * *same = 1 when every rank passed the same digest.  One all-reduce of 16 bytes, in device
 * memory when the communicator is on a GPU, synchronised.  (comm_nccl.c) */
acc_status_t rt_nccl_agree(void *nccl_comm, uint64_t digest, int *same);
/* Was c made by another process (this one is its forked child)? */
int comm_forked(const acc_comm_t *c);
/* ACC_TIMEOUT_MS in ms (-1: none); an invalid value gives the default (60000) and the error. */
acc_status_t comm_timeout_setting(int *out);

/* comm/comm_dup.c: acc_comm_dup on the host backend whatever comm's backend is, for a layer's
 * control messages (the fusion engine's decisions), which are small, live in host memory and
 * travel on any machine that way.  Collective, as acc_comm_dup. */
acc_status_t comm_dup_host(acc_comm_t *comm, acc_comm_t **out);

/* comm/comm.c: acc_comm_init_rank, for a duplicate (acc_comm_dup) when duplicate is 1. */
acc_status_t comm_init(acc_comm_t **out, int nranks, const acc_unique_id_t *id, int rank,
                       const acc_comm_opts_t *opts, int duplicate);
/* Plans the backend could not set up: remember one (every rank agreed on the failure) for calls
 * of at least `bytes` (0: any), and the failure again (its status and message) for a call it
 * covers, so that it is not tried at every call.  comm_refuse is comm_refuse_at any size with
 * ACC_ERR_UNSUPPORTED and the current message; comm_refused asks whether any size was
 * refused. */
void comm_refuse_at(acc_comm_t *c, const acc_plan_t *plan, uint64_t bytes, acc_status_t status,
                    const char *why);
acc_status_t comm_refused_at(const acc_comm_t *c, const acc_plan_t *plan, uint64_t bytes);
void comm_refuse(acc_comm_t *c, const acc_plan_t *plan);
acc_status_t comm_refused(const acc_comm_t *c, const acc_plan_t *plan);

/* Set the abort flag: every wait of the communicator's calls gives up within a wait slice
 * (ACC_ERR_ABORTED), and nothing else happens - no waiting, no freeing; acc_comm_abort still
 * releases it later.  Safe from any thread while calls run. */
void comm_stop(acc_comm_t *c);

/* Break the communicator with the current error message (the first failure wins). */
acc_status_t comm_break(acc_comm_t *c, acc_status_t st);
/* The failure that broke c, or ACC_OK; c->error_msg is final once this is not ACC_OK. */
static inline acc_status_t comm_error(const acc_comm_t *c)
{
    return __atomic_load_n(&c->error, __ATOMIC_ACQUIRE);
}

#endif
