/* Live discovery (`--topo auto`).  Whether this machine has an NVIDIA driver and GPU is found out
 * here independently (the driver's /proc entries and its NVML library), and the test asserts the
 * outcome that fits: a described machine, or ACC_ERR_NO_DEVICE with the ways to describe one. */
#include "acc_test.h"
#include "topo_hwloc.h"

#include <dirent.h>
#include <dlfcn.h>
#include <stdio.h>

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

/* NUMA nodes of this machine that have CPUs, from the kernel, and node 0's CPU list. */
static int kernel_cpu_nodes(char *node0, size_t n)
{
    int id, count = 0;
    node0[0] = '\0';
    for (id = 0; id < 1024; id++) {
        char path[128], list[256] = "";
        FILE *f;
        snprintf(path, sizeof(path), "/sys/devices/system/node/node%d/cpulist", id);
        if (!(f = fopen(path, "r")))
            continue;
        if (fgets(list, sizeof(list), f) && list[0] != '\n') {
            list[strcspn(list, "\n")] = '\0';
            if (!count)
                snprintf(node0, n, "%s", list);
            count++;
        }
        fclose(f);
    }
    return count;
}

/* The hwloc half of live discovery, without NVML: this machine's NUMA nodes become CPU vertices
 * (checked against the kernel), and GPUs come from the PCI bus or their absence is an error. */
ACC_TEST(hwloc_half_matches_the_kernel)
{
    acc_topo_t *t = NULL;
    char node0[256];
    int nodes = kernel_cpu_nodes(node0, sizeof(node0));
    acc_status_t st;

    CHECK_OK(acc_topo_create(&t));
    st = topo_hwloc_build(t, NULL, 0, "this machine", NULL, NULL);
    if (st != ACC_OK) {
        CHECK_ERR(st, ACC_ERR_TOPO);
        CHECK_MSG_HAS("no NVIDIA GPU on the PCI bus of this machine");
    } else {
        CHECK(acc_topo_count(t, ACC_VTX_GPU) >= 1);
    }
    if (nodes > 0) {
        CHECK_INT(acc_topo_count(t, ACC_VTX_CPU), nodes);
        CHECK_STR(acc_topo_vertex(t, acc_topo_find(t, ACC_VTX_CPU, 0))->affinity, node0);
    } else {
        CHECK_INT(acc_topo_count(t, ACC_VTX_CPU), 1); /* a kernel without NUMA */
    }
    CHECK(acc_topo_vertex(t, acc_topo_find(t, ACC_VTX_CPU, 0))->cpu_arch[0] != '\0');
    acc_topo_destroy(t);
}
