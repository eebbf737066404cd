/*
 * Rails: the host backend's sockets between two nodes, one per network interface.
 *
 * With ACC_SOCKET_IFNAME naming several interfaces (eth0,eth1: NCCL_SOCKET_IFNAME's and
 * GLOO_SOCKET_IFNAME's syntax, net_if.c), every remote connection opens one socket per
 * interface - rail i from this rank's interface i to the peer's address on its interface i -
 * and stripes each message across them (host_net.c), so that two links carry twice what one
 * does.  Each rank listens on each of its interfaces and tells rank 0 those addresses when the
 * backend is made; a plan's instance fetches its remote peers' from rank 0 (hb_rails_fetch).
 *
 * The ranks use the count every one of them has: where one names fewer interfaces than
 * another, all use that many (and rank 0 says so), and where that is one, the connections
 * take the bootstrap's addresses as they do without ACC_SOCKET_IFNAME.  A name that matches
 * nothing fails the communicator on every rank, with the message of the rank that has no such
 * interface.  A communicator of one node has no remote connection and looks at no interface.
 */
#include "host_internal.h"

#include <stdlib.h>
#include <string.h>

int32_t hb_rails_mine(const acc_comm_t *c, hb_state_t *s, acc_status_t *st)
{
    const char *spec = acc_setting_str(ACC_SETTING_SOCKET_IFNAME);
    int n = 0;

    *st = ACC_OK;
    if (c->nnodes < 2 || !spec[0])
        return 0;
    if ((*st = net_interfaces("ACC_SOCKET_IFNAME", spec, s->rail_if, HB_MAX_RAILS, &n)) != ACC_OK)
        return -1;
    return n;
}

/* Listen on each rail's interface; this rank's addresses in mine. */
static acc_status_t listen_rails(hb_state_t *s, net_addr_t *mine)
{
    acc_status_t st;
    for (int r = 0; r < s->nrails; r++) {
        net_addr_t a = s->rail_if[r].addr;
        net_set_port(&a, 0);
        if ((st = net_listen(&a, &s->rail_listen[r], &mine[r])) != ACC_OK)
            return acc_error_prefix(st, "ACC_SOCKET_IFNAME's interface %s: ", s->rail_if[r].name);
    }
    return ACC_OK;
}

acc_status_t hb_rails_setup(acc_comm_t *c, hb_state_t *s, int32_t least, int32_t most, int fewest)
{
    net_addr_t mine[HB_MAX_RAILS];
    acc_status_t st, all;

    /* A rank that failed to read ACC_SOCKET_IFNAME fails the set-up with its own message. */
    s->nrails = least > 1 ? least : 1;
    if (least >= 0 && most > 1 && least < most && c->rank == 0)
        ACC_WARN(RUNTIME,
                 "ACC_SOCKET_IFNAME names %d interfaces on some ranks but %d on rank %d: the "
                 "host backend uses %d socket%s per connection between nodes",
                 most, least, fewest, s->nrails, s->nrails > 1 ? "s" : "");
    if (s->nrails == 1)
        return ACC_OK;
    memset(mine, 0, sizeof(mine));
    /* Every rank takes part in the exchange, even one whose listening failed, so that none
     * waits for it; the set-up's verdict then fails them all with its message.  Rank 0 keeps
     * every rank's addresses; the others fetch those of their peers (hb_rails_fetch). */
    st = listen_rails(s, mine);
    if (!(s->rail_addr = acc_mem_calloc((size_t)c->nranks * (size_t)s->nrails, sizeof(net_addr_t))))
        return acc_error_set(ACC_ERR_NOMEM, "out of memory for the ranks' addresses");
    memcpy(&s->rail_addr[(size_t)c->rank * s->nrails], mine, (size_t)s->nrails * sizeof(mine[0]));
    all = boot_gather(c->boot, mine, (size_t)s->nrails * sizeof(net_addr_t), s->rail_addr);
    if (all != ACC_OK)
        return acc_error_prefix(all, "exchanging the addresses of the rails: ");
    if (st == ACC_OK)
        ACC_INFO(RUNTIME, "rank %d: %d sockets per connection between nodes (%s, ...)", c->rank,
                 s->nrails, s->rail_if[0].name);
    return st;
}

static int compare_int(const void *a, const void *b)
{
    return (*(const int *)a > *(const int *)b) - (*(const int *)a < *(const int *)b);
}

/* The peers of `peers` (sorted) whose record is not known here, each once, at the front. */
static int unknown(const acc_comm_t *c, int *peers, int n, int rails)
{
    const hb_state_t *s = c->be_state;
    int m = 0;
    for (int i = 0; i < n; i++) {
        int p = peers[i];
        if ((m && peers[m - 1] == p) ||
            (rails ? s->rail_addr[(size_t)p * s->nrails].len != 0 : boot_peer_known(c->boot, p)))
            continue;
        peers[m++] = p;
    }
    return m;
}

acc_status_t hb_rails_fetch(acc_comm_t *c, const hb_inst_t *in)
{
    const hb_state_t *s = c->be_state;
    int *peers = acc_mem_alloc(2 * ((size_t)in->nconns + 1) * sizeof(int)), n = 0, m;
    acc_status_t st = ACC_OK;

    if (!peers)
        return acc_error_set(ACC_ERR_NOMEM, "out of memory");
    for (uint32_t i = 0; i < in->nconns; i++) {
        const hb_conn_t *cn = &in->conns[i];
        if (cn->remote && (cn->from == in->rank || cn->to == in->rank))
            peers[n++] = cn->from == in->rank ? cn->to : cn->from;
    }
    qsort(peers, (size_t)n, sizeof(int), compare_int);
    /* Every rank takes part, with nothing to ask for too: a fetch is collective. */
    memcpy(peers + n, peers, (size_t)n * sizeof(int));
    m = unknown(c, peers, n, 0);
    st = boot_fetch_addrs(c->boot, peers, m);
    if (st == ACC_OK && s->nrails > 1) {
        m = unknown(c, peers + n, n, 1);
        st =
            boot_fetch(c->boot, s->rail_addr, (size_t)s->nrails * sizeof(net_addr_t), peers + n, m);
    }
    acc_mem_free(peers);
    return st == ACC_OK ? st : acc_error_prefix(st, "asking rank 0 for the peers' addresses: ");
}

void hb_rails_free(hb_state_t *s)
{
    for (int r = 0; r < HB_MAX_RAILS; r++)
        net_close(&s->rail_listen[r]);
    acc_mem_free(s->rail_addr);
    s->rail_addr = NULL;
}

acc_status_t hb_rails_connect(acc_comm_t *c, int to, int r, double deadline, int *fd)
{
    const hb_state_t *s = c->be_state;
    acc_status_t st;
    if (s->nrails == 1)
        return net_connect(boot_peer_addr(c->boot, to), deadline, &c->abort, fd);
    st = net_connect_from(&s->rail_if[r].addr, &s->rail_addr[(size_t)to * s->nrails + r], deadline,
                          &c->abort, fd);
    return st == ACC_OK ? st : acc_error_prefix(st, "rail %d (%s): ", r, s->rail_if[r].name);
}

acc_status_t hb_rails_accept(acc_comm_t *c, int r, double deadline, int *fd)
{
    const hb_state_t *s = c->be_state;
    return net_accept(s->nrails == 1 ? boot_listen_fd(c->boot) : s->rail_listen[r], deadline,
                      &c->abort, fd);
}
