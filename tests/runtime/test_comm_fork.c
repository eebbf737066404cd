/*
 * A rank that forks after making its communicator and fusion engine, as PyTorch's DataLoader
 * workers do: the child holds none of acc's sockets (a child that kept them would hide the
 * parent's death from its peers, and keep a rendezvous port accepting), its calls on the
 * parent's communicator and engine fail at once saying why, destroying them there releases
 * nothing, and the parent's communicator and engine run on, during the child's life and after
 * it.
 */
#include "acc_fusion.h"
#include "comm_util.h"
#include "fusion_util.h"
#include "ranks.h"

#include <dirent.h>

/* Sockets among this process's descriptors. */
static int sockets_held(void)
{
    struct dirent *d;
    int n = 0;
    DIR *dir = opendir("/proc/self/fd");
    if (!dir)
        return -1;
    while ((d = readdir(dir)) != NULL) {
        char path[300], target[64];
        ssize_t len;
        snprintf(path, sizeof(path), "/proc/self/fd/%s", d->d_name);
        len = readlink(path, target, sizeof(target) - 1);
        if (len > 0) {
            target[len] = '\0';
            n += strncmp(target, "socket:", 7) == 0;
        }
    }
    closedir(dir);
    return n;
}

/* The child: every check its own exit status, no CHECK (whose exit would run the parent's
 * handlers). */
static int child(acc_comm_t *c, acc_fusion_t *f)
{
    float x[16] = {0};
    acc_status_t st;
    int held = sockets_held();
    if (held != 0) {
        printf("child: holds %d sockets\n", held);
        return 2;
    }
    st = acc_allreduce(x, x, 16, ACC_DT_F32, ACC_RED_SUM, c, NULL);
    printf("child: acc_allreduce: %s: %s\n", acc_status_name(st), acc_error_message());
    if (st != ACC_ERR_INVALID || !strstr(acc_error_message(), "forked"))
        return 3;
    st = acc_fusion_ready(f, 0);
    printf("child: acc_fusion_ready: %s: %s\n", acc_status_name(st), acc_error_message());
    if (st != ACC_ERR_INVALID || !strstr(acc_error_message(), "forked"))
        return 4;
    if (acc_comm_dup(c, &(acc_comm_t *){NULL}) != ACC_ERR_INVALID)
        return 5;
    if (acc_fusion_destroy(f) != ACC_OK || acc_comm_destroy(c) != ACC_OK ||
        acc_comm_abort(c) != ACC_OK)
        return 6;
    return 0;
}

static int fork_a_worker(int rank, int nranks, const acc_unique_id_t *id, void *arg)
{
    acc_comm_t *c;
    acc_fusion_t *f;
    acc_fusion_opts_t o;
    acc_tune_config_t cfg;
    float g[5000];
    pid_t pid = -1;
    int st = 0;
    (void)arg;

    CHECK_OK(acc_comm_init_rank(&c, nranks, id, rank, NULL));
    acc_fusion_opts_init(&o);
    acc_tune_config_acc(&cfg, 4096, 2, ACC_TUNE_ALGO_AUTO);
    o.config = &cfg;
    CHECK_OK(acc_fusion_create(c, &o, &f));
    CHECK_OK(acc_fusion_register(f, g, 5000, ACC_DT_F32, NULL));
    for (int it = 0; it < 6; it++) {
        call_t k = {ACC_COLL_ALLREDUCE, ACC_DT_F32, ACC_RED_SUM, 20000, it & 1, 0, (uint32_t)it};
        if (it == 2) {
            /* A worker, forked with the engine's stream threads running. */
            fflush(NULL);
            CHECK((pid = fork()) >= 0);
            if (pid == 0) {
                st = child(c, f);
                fflush(stdout);
                _exit(st);
            }
        }
        call_ok(c, &k);
        for (int e = 0; e < 5000; e++)
            g[e] = (float)(rank + e % 5);
        CHECK_OK(acc_fusion_ready(f, 0));
        CHECK_OK(acc_fusion_wait(f));
        for (int e = 0; e < 5000; e++)
            CHECK(g[e] == (float)(e % 5) + 0.5f);
        if (it == 4) {
            CHECK(waitpid(pid, &st, 0) == pid);
            CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 0, "rank %d's worker: status %d", rank,
                      st);
        }
    }
    CHECK_OK(acc_fusion_destroy(f));
    CHECK_OK(acc_comm_destroy(c));
    return 0;
}

ACC_TEST(a_worker_forked_after_init_breaks_nothing_and_cannot_use_the_communicator)
{
    comm_env("gpus=2", "30000");
    fusion_env_clear();
    ranks_run(2, fork_a_worker, NULL, 120);
}
