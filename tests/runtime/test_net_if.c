/*
 * The interfaces a list in NCCL_SOCKET_IFNAME's syntax names (ACC_SOCKET_IFNAME): prefixes,
 * '=' for exact names, '^' to exclude, each interface once, in the list's order; a name that
 * finds no interface that is up with an address is an error naming the setting and the name.
 * Each case runs in a network namespace of its own (gone with the process), with two veth
 * pairs, accq0/accr0 and accq1/accr1, up with addresses, and accd, down with one.
 */
#include "netns_util.h"
#include "rt_internal.h"

static void machine(void)
{
    netns_skip_unless_possible();
    CHECK(unshare(CLONE_NEWNET) == 0);
    for (int i = 0; i < 2; i++)
        CHECK(netns_sh("ip link add accq%d type veth peer name accr%d && "
                       "ip addr add 10.%d.0.1/24 dev accq%d && ip addr add 10.%d.0.2/24 dev "
                       "accr%d && ip link set accq%d up && ip link set accr%d up",
                       i, i, 200 + i, i, 200 + i, i, i, i) == 0);
    CHECK(netns_sh("ip link add accd type veth peer name accdp && "
                   "ip addr add 10.210.0.1/24 dev accd") == 0);
    CHECK(netns_sh("ip link set lo up") == 0);
}

/* The interfaces spec names, as "a,b", or the error. */
static acc_status_t names(const char *spec, char *buf, size_t n)
{
    net_if_t ifs[NET_MAX_IFS];
    int count = 0;
    acc_status_t st = net_interfaces("ACC_SOCKET_IFNAME", spec, ifs, NET_MAX_IFS, &count);
    buf[0] = '\0';
    for (int i = 0; st == ACC_OK && i < count; i++) {
        CHECK_MSG(ifs[i].addr.len > 0, "%s has no address", ifs[i].name);
        snprintf(buf + strlen(buf), n - strlen(buf), "%s%s", i ? "," : "", ifs[i].name);
    }
    return st;
}

#define EXPECT(spec, want)                                                                         \
    do {                                                                                           \
        char got_[256];                                                                            \
        CHECK_OK(names(spec, got_, sizeof(got_)));                                                 \
        CHECK_MSG(strcmp(got_, want) == 0, "'%s' named %s, not %s", spec, got_, want);             \
    } while (0)

ACC_TEST(prefixes_exact_names_and_exclusions_name_interfaces_in_the_lists_order)
{
    machine();
    EXPECT("accq", "accq0,accq1");             /* a prefix: every interface it starts */
    EXPECT("accq1,accq0", "accq1,accq0");      /* the list's order */
    EXPECT("accq0,accq0,accq", "accq0,accq1"); /* each once */
    EXPECT("=accq0,accr1", "accq0,accr1");
    EXPECT("^accr,lo", "accq0,accq1"); /* all up but those; never the loopback */
    EXPECT("^=accq0,accr0,accr1", "accq1");
    EXPECT("lo", "lo"); /* named, the loopback counts */
}

ACC_TEST(a_name_that_finds_nothing_up_with_an_address_is_an_error_naming_it)
{
    char got[256];
    machine();
    CHECK_ERR(names("accq0,nosuch9", got, sizeof(got)), ACC_ERR_INVALID);
    CHECK_MSG_HAS("ACC_SOCKET_IFNAME='accq0,nosuch9'");
    CHECK_MSG_HAS("'nosuch9'");
    CHECK_MSG_HAS("accr1"); /* what there is */
    /* '=' takes whole names only. */
    CHECK_ERR(names("=accq", got, sizeof(got)), ACC_ERR_INVALID);
    CHECK_MSG_HAS("'accq'");
    /* Down, it cannot carry anything. */
    CHECK_ERR(names("accd", got, sizeof(got)), ACC_ERR_INVALID);
    CHECK_MSG_HAS("'accd'");
    CHECK_ERR(names(",", got, sizeof(got)), ACC_ERR_INVALID);
    CHECK_MSG_HAS("names no interface");
    CHECK_ERR(names("^acc,lo", got, sizeof(got)), ACC_ERR_INVALID);
    CHECK_MSG_HAS("leaves no interface");
}
