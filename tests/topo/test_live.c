/* Live discovery (`--topo auto`).  Whether this machine has an NVIDIA driver and GPU is found out
 * here independently (the driver's /proc entries and its NVML library), and the test asserts the
 * outcome that fits: a described machine, or ACC_ERR_NO_DEVICE with the ways to describe one. */
#include "acc_test.h"
#include "internal.h"

#include <dirent.h>
#include <dlfcn.h>

static int driver_and_gpu_present(void)
{
    DIR *d = opendir("/proc/driver/nvidia/gpus");
    struct dirent *e;
    int gpus = 0;
    void *nvml;

    if (!d)
        return 0;
    while ((e = readdir(d)) != NULL)
        gpus += e->d_name[0] != '.';
    closedir(d);
    nvml = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!nvml)
        return 0;
    dlclose(nvml);
    return gpus > 0;
}

static void check_no_device_message(void)
{
    CHECK_MSG_HAS("no NVIDIA");
    CHECK_MSG_HAS("--topo");
    CHECK_MSG_HAS("NCCL topology dump");
    CHECK_MSG_HAS("lstopo --of xml");
    CHECK_MSG_HAS("nvidia-smi topo -m");
    CHECK_MSG_HAS("platform name");
}

static void check_described(const acc_topo_t *t)
{
    int g;
    CHECK(acc_topo_count(t, ACC_VTX_GPU) >= 1);
    CHECK(acc_topo_count(t, ACC_VTX_CPU) >= 1);
    for (g = 0; g < acc_topo_count(t, ACC_VTX_GPU); g++) {
        const acc_topo_vertex_t *v = acc_topo_vertex(t, acc_topo_find(t, ACC_VTX_GPU, g));
        CHECK(acc_topo_gpu_arch(v->sm) != NULL);
        CHECK(v->busid[0] != '\0');
        CHECK(v->mem_bytes > 0);
        CHECK(acc_topo_vertex_numa(t, acc_topo_find(t, ACC_VTX_GPU, g)) >= 0);
    }
}

ACC_TEST(import_live_matches_the_machine)
{
    acc_topo_t *t = NULL;
    acc_status_t st;

    CHECK_OK(acc_topo_create(&t));
    st = topo_import_live(t);
    if (driver_and_gpu_present()) {
        CHECK_OK(st);
        CHECK_OK(acc_topo_finalize(t));
        check_described(t);
    } else {
        CHECK_ERR(st, ACC_ERR_NO_DEVICE);
        check_no_device_message();
        CHECK_INT(acc_topo_vertex_count(t), 0); /* failed before building anything */
    }
    acc_topo_destroy(t);
}

ACC_TEST(load_auto_matches_the_machine)
{
    acc_topo_t *t = NULL;
    acc_status_t st = acc_topo_load("auto", &t);

    if (driver_and_gpu_present()) {
        CHECK_OK(st);
        CHECK_INT(acc_topo_format(t), ACC_TOPO_FMT_LIVE);
        check_described(t);
    } else {
        CHECK_ERR(st, ACC_ERR_NO_DEVICE);
        check_no_device_message();
        CHECK(t == NULL);
    }
    acc_topo_destroy(t);
}

/* Twice in one process: the library is loaded once and each call ends cleanly. */
ACC_TEST(live_twice)
{
    acc_topo_t *a = NULL, *b = NULL;
    acc_status_t sa = acc_topo_load_live(&a), sb = acc_topo_load_live(&b);
    CHECK_INT(sa, sb);
    if (sa == ACC_OK)
        CHECK_INT(acc_topo_count(a, ACC_VTX_GPU), acc_topo_count(b, ACC_VTX_GPU));
    acc_topo_destroy(a);
    acc_topo_destroy(b);
}
