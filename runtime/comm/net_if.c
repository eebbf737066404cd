/*
 * The machine's own interfaces: their addresses, and the list of interfaces a setting such as
 * ACC_SOCKET_IFNAME names, in the syntax NCCL_SOCKET_IFNAME and GLOO_SOCKET_IFNAME use:
 *
 *   eth0,eth1    the interfaces whose names start with eth0, then those starting with eth1
 *   =eth0,eth1   exactly eth0 and eth1
 *   ^docker,lo   every interface that is up and not a loopback, but for those starting with
 *                docker or lo (^= excludes exact names)
 *
 * An interface counts when it is up and has an address other machines can reach (IPv4, or
 * IPv6 but for link-local addresses); each counts once, in the order the list names it (for
 * one prefix, the kernel's order).  A name or prefix that finds none is an error naming it,
 * since a list the user wrote that silently loses an interface would lose its bandwidth too.
 */
#include "rt_internal.h"

#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <string.h>

/* Interfaces looked at, at most: a machine has a few dozen at the very most. */
#define SEEN_MAX 128

typedef struct {
    char name[IFNAMSIZ];
    unsigned flags;
    int family; /* of addr: AF_INET, AF_INET6, or 0 when it has no reachable address */
    net_addr_t addr;
} seen_t;

static int sockaddr_is_loopback(const struct sockaddr *a)
{
    if (a->sa_family == AF_INET)
        return ntohl(((const struct sockaddr_in *)a)->sin_addr.s_addr) >> 24 == 127;
    if (a->sa_family == AF_INET6)
        return IN6_IS_ADDR_LOOPBACK(&((const struct sockaddr_in6 *)a)->sin6_addr);
    return 0;
}

int net_is_loopback(const net_addr_t *a)
{
    return sockaddr_is_loopback((const struct sockaddr *)&a->ss);
}

/* An interface's address fit to be reached from other machines (IPv4, or IPv6 but for
 * link-local addresses, which need a scope the peers do not know). */
static int reachable_family(const struct sockaddr *a)
{
    return a && (a->sa_family == AF_INET ||
                 (a->sa_family == AF_INET6 &&
                  !IN6_IS_ADDR_LINKLOCAL(&((const struct sockaddr_in6 *)a)->sin6_addr)));
}

/* Every interface once, in the kernel's order, with its IPv4 address, else its first reachable
 * IPv6 one; the count, or -1 when getifaddrs fails. */
static int look(seen_t *seen, int max)
{
    struct ifaddrs *all = NULL;
    int n = 0;

    if (getifaddrs(&all) != 0)
        return -1;
    for (struct ifaddrs *i = all; i; i = i->ifa_next) {
        const struct sockaddr *sa = i->ifa_addr;
        int k = 0;
        while (k < n && strcmp(seen[k].name, i->ifa_name) != 0)
            k++;
        if (k == n) {
            if (n == max || strlen(i->ifa_name) >= IFNAMSIZ)
                continue;
            memset(&seen[n], 0, sizeof(seen[n]));
            snprintf(seen[n].name, sizeof(seen[n].name), "%s", i->ifa_name);
            n++;
        }
        seen[k].flags |= i->ifa_flags;
        if (!reachable_family(sa) || seen[k].family == AF_INET ||
            (seen[k].family == AF_INET6 && sa->sa_family == AF_INET6))
            continue;
        seen[k].family = sa->sa_family;
        seen[k].addr.len =
            sa->sa_family == AF_INET ? sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6);
        memcpy(&seen[k].addr.ss, sa, seen[k].addr.len);
    }
    freeifaddrs(all);
    return n;
}

static int usable(const seen_t *s)
{
    return s->family && (s->flags & IFF_UP);
}

int net_interface_addr(net_addr_t *a)
{
    seen_t seen[SEEN_MAX];
    int n = look(seen, SEEN_MAX);
    /* An IPv4 address where any interface has one. */
    for (int v4 = 1; v4 >= 0; v4--)
        for (int k = 0; k < n; k++)
            if (usable(&seen[k]) && !(seen[k].flags & IFF_LOOPBACK) &&
                !net_is_loopback(&seen[k].addr) && (!v4 || seen[k].family == AF_INET)) {
                *a = seen[k].addr;
                return 1;
            }
    return 0;
}

/* The interfaces of this machine, for a message: "lo, eth0". */
static void interface_names(char *buf, size_t n)
{
    seen_t seen[SEEN_MAX];
    int count = look(seen, SEEN_MAX);
    size_t len = 0;
    buf[0] = '\0';
    for (int k = 0; k < count && len + 2 < n; k++) {
        int w = snprintf(buf + len, n - len, "%s%.*s", len ? ", " : "", IFNAMSIZ, seen[k].name);
        len = w < 0 ? n : len + (size_t)w;
    }
}

/* Does an interface's name match one entry of the list (len bytes of it)? */
static int matches(const char *name, const char *entry, size_t len, int exact)
{
    return strncmp(name, entry, len) == 0 && (!exact || name[len] == '\0');
}

/* Does it match any entry of the comma-separated list? */
static int matches_any(const char *name, const char *list, int exact)
{
    for (const char *e = list; *e;) {
        size_t len = strcspn(e, ",");
        if (len && matches(name, e, len, exact))
            return 1;
        e += len + (e[len] == ',');
    }
    return 0;
}

/* Add seen[k] to out unless it is there already; 0 when out is full. */
static int add(net_if_t *out, int max, int *n, const seen_t *s)
{
    for (int i = 0; i < *n; i++)
        if (strcmp(out[i].name, s->name) == 0)
            return 1;
    if (*n == max)
        return 0;
    snprintf(out[*n].name, sizeof(out[*n].name), "%s", s->name);
    out[*n].addr = s->addr;
    (*n)++;
    return 1;
}

acc_status_t net_interfaces(const char *var, const char *spec, net_if_t *out, int max, int *n)
{
    seen_t seen[SEEN_MAX];
    char here[256];
    const char *list = spec;
    int count = look(seen, SEEN_MAX), exclude = 0, exact = 0, full = 0;

    *n = 0;
    if (count < 0)
        return acc_error_set(ACC_ERR_SYSTEM, "%s='%s': cannot list this machine's interfaces", var,
                             spec);
    if (*list == '^') {
        exclude = 1;
        list++;
    }
    if (*list == '=') {
        exact = 1;
        list++;
    }
    if (list[strspn(list, ", ")] == '\0')
        return acc_error_set(ACC_ERR_INVALID, "%s='%s' names no interface (e.g. eth0,eth1)", var,
                             spec);
    if (exclude) {
        for (int k = 0; k < count && !full; k++)
            if (usable(&seen[k]) && !(seen[k].flags & IFF_LOOPBACK) &&
                !matches_any(seen[k].name, list, exact))
                full = !add(out, max, n, &seen[k]);
        if (!*n) {
            interface_names(here, sizeof(here));
            return acc_error_set(ACC_ERR_INVALID,
                                 "%s='%s' leaves no interface that is up, not a loopback and "
                                 "has an address (interfaces here: %s)",
                                 var, spec, here);
        }
    }
    for (const char *e = list; !exclude && *e;) {
        size_t len = strcspn(e, ",");
        int found = 0;
        for (int k = 0; len && k < count && !full; k++)
            if (usable(&seen[k]) && matches(seen[k].name, e, len, exact)) {
                found = 1;
                full = !add(out, max, n, &seen[k]);
            }
        if (len && !found && !full) {
            interface_names(here, sizeof(here));
            return acc_error_set(ACC_ERR_INVALID,
                                 "%s='%s': no interface %s '%.*s' is up with an address "
                                 "(interfaces here: %s)",
                                 var, spec, exact ? "named" : "named or starting with", (int)len, e,
                                 here[0] ? here : "none");
        }
        e += len + (e[len] == ',');
    }
    if (full)
        ACC_WARN(RUNTIME, "%s='%s' names more than %d interfaces: acc uses the first %d", var, spec,
                 max, max);
    return ACC_OK;
}
