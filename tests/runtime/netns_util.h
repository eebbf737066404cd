/*
 * netns_util.h - two ranks on two "machines": each in a network namespace of its own, joined
 * by a veth pair (or two, each on a subnet of its own), with a host name that resolves to 127.0.0.1
 * (as in many containers), so that an address taken from the host name reaches nobody but the rank
 * itself.
 *
 * Nothing is named outside the ranks' own namespaces: rank 1 unshares first; rank 0 unshares
 * and makes the veth pair with its peer end placed straight into rank 1's namespace (by pid),
 * so no interface ever appears in the machine's namespace and everything vanishes with the
 * ranks, also when they are killed.  The names are unique to the run all the same.  The host
 * name and /etc/hosts are the ranks' own too (UTS and mount namespaces, /etc/hosts
 * bind-mounted from a scratch file).  Root and iproute2 are needed: netns_skip_unless_possible
 * skips the case with a visible notice where they are not.  Header-only, for tests/runtime.
 */
#ifndef NETNS_UTIL_H
#define NETNS_UTIL_H

#include "acc_test.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdint.h>
#include <sys/mount.h>
#include <sys/random.h>
#include <sys/wait.h>
#include <unistd.h>

typedef struct {
    int up[2];   /* rank 1 -> rank 0: its pid, once it has unshared */
    int down[2]; /* rank 0 -> rank 1: the veth pair exists */
    char veth[2][16];
    char addr[2][32]; /* rank r's address, without the prefix length */
    /* links 2: a second veth pair, on a subnet of its own (netns_pair_init leaves 1) */
    int links;
    char veth2[2][16];
    char addr2[2][32];
    char hostname[32];
    char hosts_file[512]; /* the ranks' /etc/hosts */
} netns_pair_t;

/* Run a shell command in the caller's namespaces; 0 when it succeeded. */
static inline int netns_sh(const char *fmt, ...) ACC_PRINTF(1, 2);
static inline int netns_sh(const char *fmt, ...)
{
    char cmd[512];
    va_list ap;
    int rc;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof(cmd), fmt, ap);
    va_end(ap);
    rc = system(cmd);
    if (rc != 0)
        fprintf(stderr, "netns: '%s' failed (%d)\n", cmd, rc);
    return rc;
}

/* Skip the case where this process cannot make namespaces and a veth pair in them (not root, a
 * sandbox, no iproute2). */
static inline void netns_skip_unless_possible(void)
{
    pid_t pid;
    int st = 0;
    fflush(NULL);
    if ((pid = fork()) == 0) {
        if (unshare(CLONE_NEWNET | CLONE_NEWUTS | CLONE_NEWNS) != 0)
            _exit(1);
        _exit(system("ip link add acctst0 type veth peer name acctst1 >/dev/null 2>&1") == 0 ? 0
                                                                                             : 1);
    }
    waitpid(pid, &st, 0);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
        ACC_SKIP("cannot make network namespaces with a veth pair here (root and iproute2 are "
                 "needed); the case did not run");
}

/* Names and addresses unique to this run, and the scratch /etc/hosts; in the parent, before the
 * ranks are forked. */
static inline void netns_pair_init(netns_pair_t *p)
{
    uint8_t r[3] = {0};
    FILE *f;
    CHECK(getrandom(r, sizeof(r), 0) == (ssize_t)sizeof(r));
    CHECK(pipe(p->up) == 0 && pipe(p->down) == 0);
    snprintf(p->veth[0], sizeof(p->veth[0]), "acc%02x%02x%02xa", r[0], r[1], r[2]);
    snprintf(p->veth[1], sizeof(p->veth[1]), "acc%02x%02x%02xb", r[0], r[1], r[2]);
    snprintf(p->addr[0], sizeof(p->addr[0]), "10.%u.%u.1", 64 + r[0] % 64, r[1]);
    snprintf(p->addr[1], sizeof(p->addr[1]), "10.%u.%u.2", 64 + r[0] % 64, r[1]);
    p->links = 1;
    snprintf(p->veth2[0], sizeof(p->veth2[0]), "acc%02x%02x%02xc", r[0], r[1], r[2]);
    snprintf(p->veth2[1], sizeof(p->veth2[1]), "acc%02x%02x%02xd", r[0], r[1], r[2]);
    snprintf(p->addr2[0], sizeof(p->addr2[0]), "10.%u.%u.1", 128 + r[0] % 64, r[1]);
    snprintf(p->addr2[1], sizeof(p->addr2[1]), "10.%u.%u.2", 128 + r[0] % 64, r[1]);
    snprintf(p->hostname, sizeof(p->hostname), "acc-node-%02x%02x%02x", r[0], r[1], r[2]);
    snprintf(p->hosts_file, sizeof(p->hosts_file), "%s", acc_test_tmp("hosts"));
    CHECK((f = fopen(p->hosts_file, "w")) != NULL);
    fprintf(f, "127.0.0.1 localhost\n127.0.0.1 %s\n", p->hostname);
    CHECK(fclose(f) == 0);
}

/* In rank `rank` (0 or 1) of the pair, first thing: its namespaces, its end of the link up. */
static inline void netns_pair_enter(netns_pair_t *p, int rank)
{
    pid_t pid1 = 0;
    char go = 1;

    if (rank == 1) {
        pid_t me = getpid();
        CHECK(unshare(CLONE_NEWNET | CLONE_NEWUTS | CLONE_NEWNS) == 0);
        CHECK(write(p->up[1], &me, sizeof(me)) == (ssize_t)sizeof(me));
        CHECK(read(p->down[0], &go, 1) == 1);
    } else {
        CHECK(read(p->up[0], &pid1, sizeof(pid1)) == (ssize_t)sizeof(pid1));
        CHECK(unshare(CLONE_NEWNET | CLONE_NEWUTS | CLONE_NEWNS) == 0);
        CHECK(netns_sh("ip link add %s type veth peer name %s netns %d", p->veth[0], p->veth[1],
                       (int)pid1) == 0);
        CHECK(p->links == 1 || netns_sh("ip link add %s type veth peer name %s netns %d",
                                        p->veth2[0], p->veth2[1], (int)pid1) == 0);
        CHECK(write(p->down[1], &go, 1) == 1);
    }
    CHECK(netns_sh("ip addr add %s/24 dev %s && ip link set %s up && ip link set lo up",
                   p->addr[rank], p->veth[rank], p->veth[rank]) == 0);
    CHECK(p->links == 1 || netns_sh("ip addr add %s/24 dev %s && ip link set %s up", p->addr2[rank],
                                    p->veth2[rank], p->veth2[rank]) == 0);
    /* The host name and its resolution are this rank's alone. */
    CHECK(sethostname(p->hostname, strlen(p->hostname)) == 0);
    CHECK(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0);
    CHECK(mount(p->hosts_file, "/etc/hosts", NULL, MS_BIND, NULL) == 0);
}

/* Does the host name resolve to the loopback here (the condition the case is about)? */
static inline int netns_hostname_is_loopback(void)
{
    char host[256];
    struct addrinfo hints, *res = NULL;
    int loop;
    memset(&hints, 0, sizeof(hints));
    hints.ai_family = AF_INET;
    if (gethostname(host, sizeof(host)) != 0 || getaddrinfo(host, NULL, &hints, &res) != 0)
        return 0;
    loop = ntohl(((struct sockaddr_in *)res->ai_addr)->sin_addr.s_addr) >> 24 == 127;
    freeaddrinfo(res);
    return loop;
}

#endif
