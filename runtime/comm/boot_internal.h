/*
 * boot_internal.h - the bootstrap's pieces: the id and the messages on the wire, the
 * rendezvous (boot_rendezvous.c), joining (bootstrap.c) and the collectives over the star
 * (boot_star.c).  Internal to runtime/comm/.
 */
#ifndef ACC_BOOT_INTERNAL_H
#define ACC_BOOT_INTERNAL_H

#include "rt_internal.h"

#include <netinet/in.h>

#define ID_MAGIC    "accid02"
#define HELLO_MAGIC 0x61636369u /* "acci" */
enum { MODE_THREAD = 1, MODE_RANK0 = 2 };

/* The id's bytes: magic, mode, nonce, and the rendezvous address. */
typedef struct {
    char magic[8];
    uint32_t mode;
    uint32_t addr_len;
    uint8_t nonce[BOOT_NONCE_BYTES];
    uint8_t addr[96];
} boot_id_t;

_Static_assert(sizeof(boot_id_t) <= ACC_UNIQUE_ID_BYTES, "the id must fit in acc_unique_id_t");
_Static_assert(sizeof(struct sockaddr_in6) <= 96, "an IPv6 address must fit in the id");

/* What a rank says to the rendezvous: who it is, where it listens, how long it waits. */
typedef struct {
    uint32_t magic;
    int32_t rank, nranks;
    int32_t timeout_ms; /* the rank's ACC_TIMEOUT_MS; <= 0: none */
    uint32_t addr_len;
    uint8_t nonce[BOOT_NONCE_BYTES];
    uint8_t addr[96];
} hello_t;

/* The rendezvous' answer: 0, or why this rank was refused (then the text).  An answer of 0 is
 * followed by rank 0's hello, the only address a rank needs to join the star: rank 0 learns the
 * others' from their hellos, so that no rank is sent the table of all (N^2 bytes in all). */
typedef struct {
    int32_t status;
    char text[508];
} answer_t;

struct rt_boot {
    int rank, nranks, timeout_ms;
    int wait_ms; /* how long a collective over the star waits for a peer (boot_set_wait) */
    const volatile int *abort_flag;
    uint8_t nonce[BOOT_NONCE_BYTES];
    int listen_fd;
    int *fds; /* rank 0: a connection to every rank (fds[0] unused); others: fds[0] to rank 0 */
    /* Rank 0: every rank's listening address; others: their own, rank 0's and those fetched
     * (boot_fetch_addrs), the rest zero.  Calloc'd, so the untouched part costs no memory. */
    net_addr_t *addrs;
    uint32_t seq; /* collectives so far, to catch ranks that call them out of order */
    boot_traffic_t traffic;
};

/* A rendezvous in progress: served by a thread (acc_get_unique_id) or by rank 0 itself. */
typedef struct {
    int listen_fd;
    net_addr_t where; /* its address, for messages */
    int nranks;       /* 0 until the first hello */
    uint8_t nonce[BOOT_NONCE_BYTES];
    int *fds; /* per rank, -1 until it arrives */
    hello_t *hellos;
    /* It gives up at deadline (0: never).  A thread's deadline is wait_ms after it starts,
     * then its first hello's timeout after that hello: every rank waits for the others as long
     * as it waits for a peer anywhere else. */
    double deadline;
    int from_first_hello;
    int serving_rank0; /* rank 0 serves it, and has arrived without a connection */
    const volatile int *abort_flag;
    boot_traffic_t *traffic; /* rank 0's, when rank 0 serves it; else NULL */
} rendezvous_t;

/* A deadline timeout_ms from now, in acc_now_s() seconds; 0 (none) for timeout_ms <= 0. */
double boot_deadline(int timeout_ms);
/* Count one message of bytes sent (sent != 0) or received in t (NULL: nothing to count). */
void boot_count(boot_traffic_t *t, int sent, size_t bytes);

/* boot_rendezvous.c */
/* Wait for every rank (arrived: how many are counted already, the serving rank 0 itself),
 * then answer each with rank 0's address; connections stay open in rv->fds.  When it gives
 * up, every rank that arrived hears which ranks did not. */
acc_status_t rendezvous_run(rendezvous_t *rv, int arrived);
void rendezvous_free(rendezvous_t *rv);
/* Serve one rendezvous on a thread of this process, listening at `at` (its port chosen by the
 * kernel); the thread gives up wait_ms after it starts (<= 0: never) unless a rank arrives. */
acc_status_t rendezvous_start_thread(const net_addr_t *at, int wait_ms, boot_id_t *id);
/* "ranks 2, 5 and 7" of those that did not arrive, or whose fd is -1 in fds[from..nranks). */
void boot_missing_text(const int *fds, int from, int nranks, char *buf, size_t n);

#endif
