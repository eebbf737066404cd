/* Live discovery against a fake NVML (tests/topo/fake_nvml/): ctest puts the fake, built as
 * libnvidia-ml.so.1, on LD_LIBRARY_PATH, and each case names the machine it describes
 * (FAKE_NVML_MACHINE) and, where hwloc's half matters, the hwloc capture hwloc reads instead of
 * this machine (HWLOC_XMLFILE, which hwloc itself honours).  Both are read by the fake and by
 * hwloc, never by acc.
 *
 * Cases named *_nvml_* run NVML's half alone (topo_nvml_open and topo_nvml_add_links) on a one-
 * socket topology: hwloc's half of live discovery refuses a machine whose PCI bus shows no NVIDIA
 * GPU before NVML's GPUs are placed (see hgx_h100_hidden_from_hwloc). */
#include "acc_test.h"
#include "topo_hwloc.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#define MACHINE(file) acc_test_src("tests/topo/fake_nvml/" file)
#define DGX2_XML      acc_test_data("topologies/hwloc-xml/hwloc-nvidiaDGX2.xml")
#define MINSKY_XML    acc_test_data("topologies/hwloc-xml/hwloc-power8gpudistances.xml")

typedef void (*counters_fn)(int *refs, int *inits, int *misuses);
static counters_fn fake_counters;

/* The libnvidia-ml.so.1 acc will open is the fake: opened here first, it stays loaded, so that
 * acc's dlopen finds this one and its counters stay readable after acc gives up on it. */
static void require_fake(void)
{
    void *lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (lib)
        *(void **)&fake_counters = dlsym(lib, "fake_nvml_counters");
    CHECK_MSG(fake_counters != NULL,
              "libnvidia-ml.so.1 on the loader path is not the fake NVML (%s): run this test "
              "through ctest, which puts the build's tests/fake_nvml on LD_LIBRARY_PATH",
              lib ? "no fake_nvml_counters" : dlerror());
}

/* The fake describes the machine of these files (colon-separated, read in order); hwloc
 * describes `hwloc_xml`, or this machine when NULL. */
static void use_machine(const char *files, const char *hwloc_xml)
{
    require_fake();
    CHECK(setenv("FAKE_NVML_MACHINE", files, 1) == 0);
    if (hwloc_xml)
        CHECK(setenv("HWLOC_XMLFILE", hwloc_xml, 1) == 0);
    else
        CHECK(unsetenv("HWLOC_XMLFILE") == 0);
}

/* A description file of the case's own, for a failure or a change added to a shipped machine. */
static const char *scratch(const char *name, const char *text)
{
    const char *path = acc_test_tmp(name);
    FILE *f = fopen(path, "w");
    CHECK_MSG(f != NULL, "cannot write %s", path);
    fputs(text, f);
    fclose(f);
    return path;
}

static const char *join(const char *a, const char *b)
{
    static char buf[8192];
    snprintf(buf, sizeof(buf), "%s:%s", a, b);
    return buf;
}

/* NVML was shut down as often as initialised (`inits` times), and never called outside that or
 * with a handle it did not give out. */
static void check_nvml_clean(int inits)
{
    int refs, n, misuses;
    fake_counters(&refs, &n, &misuses);
    CHECK_INT(refs, 0);
    CHECK_INT(n, inits);
    CHECK_INT(misuses, 0);
}

static int assumptions_with(const acc_topo_t *t, const char *fragment)
{
    int i, n = 0;
    for (i = 0; i < acc_topo_assumption_count(t); i++)
        n += strstr(acc_topo_assumption(t, i), fragment) != NULL;
    return n;
}

static const acc_topo_vertex_t *gpu(const acc_topo_t *t, int id)
{
    return acc_topo_vertex(t, acc_topo_find(t, ACC_VTX_GPU, id));
}

/* NVML's half of live discovery, on one socket standing in for hwloc's CPUs. */
static acc_topo_t *nvml_half(void)
{
    acc_topo_t *t = NULL;
    acc_topo_vertex_t *v;
    topo_nvml_t *n = NULL;
    int cpu;

    CHECK_OK(acc_topo_create(&t));
    CHECK_OK(acc_topo_add_vertex(t, ACC_VTX_CPU, &cpu));
    v = acc_topo_vertex_mut(t, cpu);
    v->numa = 0;
    snprintf(v->cpu_arch, sizeof(v->cpu_arch), "x86_64");
    CHECK_OK(topo_nvml_open(&n));
    CHECK_OK(topo_nvml_add_links(n, t));
    topo_nvml_close(n);
    CHECK_OK(acc_topo_finalize(t));
    return t;
}

static acc_topo_t *load(const char *path)
{
    acc_topo_t *t = NULL;
    CHECK_OK(acc_topo_load_file(path, &t));
    return t;
}

/* ---- HGX H100: eight GPUs, 18 NVLinks each into four NVSwitch chips --------------------- */

ACC_TEST(hgx_h100_nvml_facts_and_nvswitch_links)
{
    acc_topo_t *t, *dump;
    acc_topo_path_t p, q;
    int g;

    use_machine(MACHINE("hgx-h100.nvml"), NULL);
    t = nvml_half();
    dump = load(acc_test_data("topologies/nccl-xml/ibm-vpc-gx3d-8xh100-topo.xml"));
    CHECK_INT(acc_topo_count(t, ACC_VTX_GPU), 8);
    CHECK_INT(acc_topo_count(t, ACC_VTX_NVSWITCH), 1); /* four chips, one fabric */
    for (g = 0; g < 8; g++) {
        const acc_topo_vertex_t *v = gpu(t, g);
        CHECK_INT(v->sm, 90);
        CHECK_STR(v->model, "H100 SXM5 80GB");
        CHECK_INT(v->device_id, 0x2330);
        CHECK_INT(v->mem_bytes, 81559ull << 20); /* the driver's figure, not the datasheet's */
        CHECK_INT(v->numa, 0);
        CHECK_INT(acc_topo_nvlinks_to_switches(t, g), 18);
        CHECK_INT(acc_topo_nvlinks_to_switches(t, g), acc_topo_nvlinks_to_switches(dump, g));
        CHECK_INT(acc_topo_nvlinks_between(t, g, (g + 1) % 8), 0);
        CHECK_INT(acc_topo_find_link(t, acc_topo_find(t, ACC_VTX_GPU, g),
                                     acc_topo_find(t, ACC_VTX_CPU, 0), ACC_LINK_PCIE)
                      ->gen,
                  5);
    }
    /* NVML writes "00000000:A4:00.0"; the model keeps bus ids short and lower case. */
    CHECK_STR(gpu(t, 0)->busid, "0000:a4:00.0");
    CHECK_STR(gpu(t, 7)->busid, "0000:ea:00.0");
    CHECK_INT(assumptions_with(t, "hwloc does not see it on the PCI bus"), 8);
    CHECK_OK(acc_topo_path(t, 0, 5, &p));
    CHECK_OK(acc_topo_path(dump, 0, 5, &q));
    CHECK_INT(p.cls, ACC_PATH_NVL);
    CHECK_INT(p.cls, q.cls);
    CHECK_NEAR(p.bw, q.bw, 1e-9);
    check_nvml_clean(1);
    acc_topo_destroy(dump);
    acc_topo_destroy(t);
}

/* hwloc, reading this machine, finds none of the fake's GPUs on the PCI bus.  acc refuses the
 * machine there (topo_hwloc.c stops live discovery when hwloc sees no NVIDIA GPU) before
 * topo_nvml_add_links could place them, as hgx_h100_nvml_facts_and_nvswitch_links shows it
 * does; the refusal is clear, and NVML is left shut down. */
ACC_TEST(hgx_h100_hidden_from_hwloc)
{
    acc_topo_t *t = NULL;

    /* This machine's PCI bus has no NVIDIA GPU: NVML's eight are placed from its own facts. */
    use_machine(MACHINE("hgx-h100.nvml"), NULL);
    CHECK_OK(acc_topo_load_live(&t));
    CHECK_INT(acc_topo_gpus_per_node(t), 8);
    CHECK_INT(acc_topo_nvlinks_to_switches(t, 7), 18);
    acc_topo_destroy(t);
    check_nvml_clean(1);
}

/* An NVLink whose state NVML fails to read is left out, as NCCL leaves it out, and said so. */
ACC_TEST(hgx_h100_nvml_link_state_error)
{
    acc_topo_t *t;
    int g;

    use_machine(join(MACHINE("hgx-h100.nvml"),
                     scratch("hgx-state-error.nvml", "fail nvmlDeviceGetNvLinkState 999 5 7\n")),
                NULL);
    t = nvml_half();
    for (g = 0; g < 8; g++)
        CHECK_INT(acc_topo_nvlinks_to_switches(t, g), g == 5 ? 17 : 18);
    CHECK_INT(assumptions_with(t, "GPU5 0000:d6:00.0: 1 NVLink NVML fails to read "
                                  "(nvmlDeviceGetNvLinkState: NVML error 999, Unknown Error)"),
              1);
    check_nvml_clean(1);
    acc_topo_destroy(t);
}

/* A far end NVML fails to read is not taken for an NVSwitch: the link is left out, and said so. */
ACC_TEST(hgx_h100_nvml_far_end_error)
{
    acc_topo_t *t;

    use_machine(
        join(MACHINE("hgx-h100.nvml"),
             scratch("hgx-remote-error.nvml", "fail nvmlDeviceGetNvLinkRemotePciInfo_v2 15 2 0\n")),
        NULL);
    t = nvml_half();
    CHECK_INT(acc_topo_nvlinks_to_switches(t, 2), 17);
    CHECK_INT(acc_topo_nvlinks_to_switches(t, 3), 18);
    CHECK_INT(assumptions_with(t, "GPU2 0000:b8:00.0: 1 NVLink NVML fails to read "
                                  "(nvmlDeviceGetNvLinkRemotePciInfo_v2: NVML error 15, GPU is "
                                  "lost)"),
              1);
    check_nvml_clean(1);
    acc_topo_destroy(t);
}

/* ---- DGX-1: the hybrid cube mesh, NVLinks straight between GPUs ------------------------- */

ACC_TEST(dgx1_nvml_hybrid_cube_mesh)
{
    static const int gpu0[8] = {0, 1, 1, 2, 2, 0, 0, 0};
    acc_topo_t *t, *ref;
    acc_buf_t canon;
    int a, b;

    use_machine(MACHINE("dgx1-v100.nvml"), NULL);
    t = nvml_half();
    ref = load(acc_test_src("schedules/platforms/dawnbench-v100-16node.yaml"));
    CHECK_INT(acc_topo_count(t, ACC_VTX_GPU), 8);
    CHECK_INT(acc_topo_count(t, ACC_VTX_NVSWITCH), 0);
    for (b = 0; b < 8; b++)
        CHECK_INT(acc_topo_nvlinks_between(t, 0, b), gpu0[b]);
    for (a = 0; a < 8; a++) {
        int total = 0;
        CHECK_INT(gpu(t, a)->sm, 70);
        CHECK_STR(gpu(t, a)->model, "V100 SXM2 16GB");
        CHECK_INT(gpu(t, a)->sm_count, 80);
        CHECK_INT(acc_topo_nvlinks_to_switches(t, a), 0);
        for (b = 0; b < 8; b++) {
            acc_topo_path_t p, q;
            int n = acc_topo_nvlinks_between(t, a, b);
            CHECK_MSG(n == acc_topo_nvlinks_between(ref, a, b),
                      "GPU%d-GPU%d: %d NVLinks live, %d in the platform", a, b, n,
                      acc_topo_nvlinks_between(ref, a, b));
            total += n;
            if (!n || a == b)
                continue;
            CHECK_OK(acc_topo_path(t, a, b, &p));
            CHECK_OK(acc_topo_path(ref, a, b, &q));
            CHECK_INT(p.cls, ACC_PATH_NVL);
            CHECK_NEAR(p.bw, q.bw, 1e-9);
        }
        CHECK_INT(total, 6);
    }
    /* What the fingerprint takes of each GPU: generation, SMs, memory in MiB (the driver's),
     * NUMA node and links into a fabric. */
    acc_buf_init(&canon);
    CHECK_OK(acc_topo_canonical(t, &canon));
    CHECK(strstr(canon.data, "\ngpu 0 sm=70 sms=80 mem=16G numa=0 nvswitch=0\n") != NULL);
    CHECK(strstr(canon.data, "\ngpu 7 sm=70 sms=80 mem=16G numa=0 nvswitch=0\n") != NULL);
    acc_buf_free(&canon);
    check_nvml_clean(1);
    acc_topo_destroy(ref);
    acc_topo_destroy(t);
}

/* GPU0 cannot read what its link 0 leads to: no NVSwitch is made up for it, and GPU1's own
 * report of the same link keeps the pair's count. */
ACC_TEST(dgx1_nvml_far_end_error)
{
    acc_topo_t *t;

    use_machine(join(MACHINE("dgx1-v100.nvml"),
                     scratch("dgx1-remote-error.nvml",
                             "fail nvmlDeviceGetNvLinkRemotePciInfo_v2 999 0 0\n"
                             "fail nvmlDeviceGetNvLinkRemoteDeviceType 999 0 0\n")),
                NULL);
    t = nvml_half();
    CHECK_INT(acc_topo_count(t, ACC_VTX_NVSWITCH), 0);
    CHECK_INT(acc_topo_nvlinks_between(t, 0, 1), 1);
    CHECK_INT(acc_topo_nvlinks_between(t, 0, 3), 2);
    CHECK_INT(assumptions_with(t, "GPU0 and GPU1 report 0 and 1 NVLinks between them: 1 taken"), 1);
    CHECK_INT(assumptions_with(t, "GPU0 0000:06:00.0: 1 NVLink NVML fails to read"), 1);
    check_nvml_clean(1);
    acc_topo_destroy(t);
}

/* ---- DGX-2: hwloc's capture of the machine and NVML's view of it ------------------------ */

/* The canonical form the fingerprint hashes, without each GPU's memory: NVML gives the memory
 * the driver can use (32510 MiB of a V100 32GB), a capture the datasheet's (32 GiB). */
static char *canonical_without_memory(const acc_topo_t *t)
{
    acc_buf_t b;
    char *s, *r, *w;

    acc_buf_init(&b);
    CHECK_OK(acc_topo_canonical(t, &b));
    s = acc_buf_take(&b);
    CHECK(s != NULL);
    for (r = w = s; *r;) {
        if (strncmp(r, " mem=", 5) == 0) {
            for (r += 5; *r >= '0' && *r <= '9'; r++)
                ;
            continue;
        }
        *w++ = *r++;
    }
    *w = '\0';
    return s;
}

/* The same machine from its hwloc capture alone and from live discovery (hwloc reading that
 * capture, NVML the fake) gives the same graph: NVML's facts in place of the capture's, its
 * NVLinks instead of the capture's NVLink matrix, not on top of it. */
ACC_TEST(dgx2_live_matches_its_capture)
{
    acc_topo_t *t = NULL, *ref;
    char *live, *capture;
    int a, b;

    use_machine(MACHINE("dgx2.nvml"), DGX2_XML);
    CHECK_OK(acc_topo_load_live(&t));
    ref = load(DGX2_XML);
    CHECK_INT(acc_topo_format(t), ACC_TOPO_FMT_LIVE);
    CHECK_INT(acc_topo_count(t, ACC_VTX_GPU), 16);
    CHECK_INT(acc_topo_count(t, ACC_VTX_CPU), acc_topo_count(ref, ACC_VTX_CPU));
    CHECK_INT(acc_topo_count(t, ACC_VTX_PCISW), acc_topo_count(ref, ACC_VTX_PCISW));
    CHECK_INT(acc_topo_count(t, ACC_VTX_NVSWITCH), 1);
    CHECK_STR(gpu(t, 0)->busid, "0000:34:00.0"); /* NVML's order, the capture's nvml0.. */
    CHECK_STR(gpu(t, 15)->busid, "0000:e7:00.0");
    for (a = 0; a < 16; a++) {
        CHECK_INT(gpu(t, a)->sm, 70);
        CHECK_STR(gpu(t, a)->model, "V100 SXM3 32GB");
        CHECK_INT(gpu(t, a)->mem_bytes, 32510ull << 20);
        CHECK_INT(gpu(t, a)->numa, a < 8 ? 0 : 1);
        CHECK_INT(gpu(t, a)->numa, gpu(ref, a)->numa);
        CHECK_INT(acc_topo_nvlinks_to_switches(t, a), 6);
        CHECK_INT(acc_topo_nvlinks_to_switches(ref, a), 6);
        for (b = 0; b < 16; b++) {
            acc_topo_path_t p, q;
            CHECK_OK(acc_topo_path(t, a, b, &p));
            CHECK_OK(acc_topo_path(ref, a, b, &q));
            CHECK_MSG(p.cls == q.cls && p.bw == q.bw && p.hops == q.hops,
                      "GPU%d-GPU%d: live %s %.2f GB/s %d hops, capture %s %.2f GB/s %d hops", a, b,
                      acc_path_class_name(p.cls), p.bw, p.hops, acc_path_class_name(q.cls), q.bw,
                      q.hops);
        }
    }
    live = canonical_without_memory(t);
    capture = canonical_without_memory(ref);
    CHECK_STR(live, capture);
    acc_mem_free(live);
    acc_mem_free(capture);
    CHECK_INT(assumptions_with(t, "hwloc described another machine than this one"), 1);
    check_nvml_clean(1);
    acc_topo_destroy(ref);
    acc_topo_destroy(t);
}

/* A container given the second baseboard only: NVML numbers its eight GPUs from 0, the other
 * eight are on hwloc's PCI bus but not the driver's, and left out. */
ACC_TEST(dgx2_container_sees_half)
{
    acc_topo_t *t = NULL;
    int g;

    use_machine(join(MACHINE("dgx2.nvml"), scratch("dgx2-half.nvml", "visible 8-15\n")), DGX2_XML);
    CHECK_OK(acc_topo_load_live(&t));
    CHECK_INT(acc_topo_count(t, ACC_VTX_GPU), 8);
    CHECK_STR(gpu(t, 0)->busid, "0000:b7:00.0");
    for (g = 0; g < 8; g++) {
        CHECK_INT(gpu(t, g)->numa, 1);
        CHECK_INT(acc_topo_nvlinks_to_switches(t, g), 6);
    }
    CHECK_INT(assumptions_with(t, "is on the PCI bus but not visible to the driver"), 8);
    check_nvml_clean(1);
    acc_topo_destroy(t);
}

/* A GPU NVML reports beside those hwloc sees, at a bus id the capture lacks: placed under CPU0
 * with what NVML tells of it, and said so; the others keep their place. */
ACC_TEST(dgx2_gpu_hidden_from_hwloc_is_placed)
{
    acc_topo_t *t = NULL;
    const acc_topo_vertex_t *v;
    const acc_topo_link_t *l;

    use_machine(join(MACHINE("dgx2.nvml"),
                     scratch("dgx2-hidden.nvml",
                             "gpu 0000:f1:00.0 0x1db8 7.0 32510 3 16 Tesla V100-SXM3-32GB-H\n"
                             "nvlink 16 1 switch 0000:c1:00.0\n")),
                DGX2_XML);
    CHECK_OK(acc_topo_load_live(&t));
    CHECK_INT(acc_topo_count(t, ACC_VTX_GPU), 17);
    v = gpu(t, 16);
    CHECK_STR(v->busid, "0000:f1:00.0");
    CHECK_STR(v->model, "V100 SXM3 32GB");
    CHECK_INT(v->numa, 0);
    l = acc_topo_find_link(t, acc_topo_find(t, ACC_VTX_GPU, 16), acc_topo_find(t, ACC_VTX_CPU, 0),
                           ACC_LINK_PCIE);
    CHECK(l != NULL);
    CHECK_INT(l->gen, 3);
    CHECK_INT(l->width, 16);
    CHECK_INT(acc_topo_nvlinks_to_switches(t, 16), 1);
    CHECK_INT(acc_topo_nvlinks_to_switches(t, 15), 6);
    CHECK_STR(gpu(t, 15)->busid, "0000:e7:00.0");
    CHECK_INT(assumptions_with(t, "GPU16 0000:f1:00.0 (Tesla V100-SXM3-32GB-H): NVML reports it "
                                  "but hwloc does not see it on the PCI bus"),
              1);
    check_nvml_clean(1);
    acc_topo_destroy(t);
}

/* Twice in one process: the library is loaded once, each discovery ends NVML cleanly, and the
 * machine is the same. */
ACC_TEST(dgx2_live_twice)
{
    acc_topo_t *a = NULL, *b = NULL;
    char fa[ACC_SHA256_HEX_LEN + 1], fb[ACC_SHA256_HEX_LEN + 1];

    use_machine(MACHINE("dgx2.nvml"), DGX2_XML);
    CHECK_OK(acc_topo_load_live(&a));
    CHECK_OK(acc_topo_load_live(&b));
    CHECK_OK(acc_topo_fingerprint(a, fa));
    CHECK_OK(acc_topo_fingerprint(b, fb));
    CHECK_STR(fa, fb);
    check_nvml_clean(2);
    acc_topo_destroy(a);
    acc_topo_destroy(b);
}

/* ---- POWER8 Minsky: NVLinks to the CPU -------------------------------------------------- */

/* NVML's "NPU" ends are the CPU of the GPU's socket, as the capture's matrix has them. */
ACC_TEST(minsky_live_matches_its_capture)
{
    acc_topo_t *t = NULL, *ref;
    char *live, *capture;
    int g;

    use_machine(MACHINE("minsky-p100.nvml"), MINSKY_XML);
    CHECK_OK(acc_topo_load_live(&t));
    ref = load(MINSKY_XML);
    CHECK_INT(acc_topo_count(t, ACC_VTX_GPU), 4);
    CHECK_INT(acc_topo_count(t, ACC_VTX_NVSWITCH), 0);
    for (g = 0; g < 4; g++) {
        int v = acc_topo_find(t, ACC_VTX_GPU, g), cpu = acc_topo_find(t, ACC_VTX_CPU, g / 2);
        const acc_topo_link_t *l = acc_topo_find_link(t, v, cpu, ACC_LINK_NVLINK);
        CHECK_INT(gpu(t, g)->sm, 60);
        CHECK_INT(gpu(t, g)->numa, g / 2);
        CHECK_MSG(l && l->count == 2, "GPU%d: %d NVLinks to CPU%d, expected 2", g, l ? l->count : 0,
                  g / 2);
        CHECK_INT(acc_topo_nvlinks_between(t, g, g ^ 1), 2);
        CHECK_INT(acc_topo_nvlinks_between(t, g, g ^ 2), 0);
    }
    live = canonical_without_memory(t);
    capture = canonical_without_memory(ref);
    CHECK_STR(live, capture);
    acc_mem_free(live);
    acc_mem_free(capture);
    check_nvml_clean(1);
    acc_topo_destroy(ref);
    acc_topo_destroy(t);
}

/* ---- a driver that fails ---------------------------------------------------------------- */

static void check_hint(void)
{
    CHECK_MSG_HAS("--topo");
    CHECK_MSG_HAS("NCCL topology dump");
    CHECK_MSG_HAS("lstopo --of xml");
    CHECK_MSG_HAS("nvidia-smi topo -m");
    CHECK_MSG_HAS("platform name");
}

ACC_TEST(driver_not_loaded)
{
    acc_topo_t *t = NULL;

    use_machine(scratch("not-loaded.nvml", "fail nvmlInit_v2 9\n"), NULL);
    CHECK_ERR(acc_topo_load_live(&t), ACC_ERR_NO_DEVICE);
    CHECK_MSG_HAS("the NVIDIA driver is not loaded (nvmlInit_v2: NVML error 9, Driver Not "
                  "Loaded)");
    check_hint();
    CHECK(t == NULL);
    check_nvml_clean(0);
}

ACC_TEST(driver_refuses_permission)
{
    acc_topo_t *t = NULL;

    use_machine(scratch("no-permission.nvml", "fail nvmlInit_v2 4\n"), NULL);
    CHECK_ERR(acc_topo_load_live(&t), ACC_ERR_NVML);
    CHECK_MSG_HAS("nvmlInit_v2 failed: NVML error 4 (Insufficient Permissions)");
    CHECK(t == NULL);
    check_nvml_clean(0);
}

ACC_TEST(driver_sees_no_gpu)
{
    acc_topo_t *t = NULL;

    use_machine(scratch("no-gpu.nvml", "# a driver without GPUs\n"), NULL);
    CHECK_ERR(acc_topo_load_live(&t), ACC_ERR_NO_DEVICE);
    CHECK_MSG_HAS("the NVIDIA driver sees no GPU");
    check_hint();
    check_nvml_clean(1);
}

/* GPU 3 falls off the bus while its facts are read: the call and the GPU are named, nothing of
 * the first three GPUs leaks, and NVML is shut down. */
ACC_TEST(gpu_lost_during_discovery)
{
    acc_topo_t *t = NULL;

    use_machine(join(MACHINE("hgx-h100.nvml"),
                     scratch("gpu-lost.nvml", "fail nvmlDeviceGetCudaComputeCapability 15 3\n")),
                NULL);
    CHECK_ERR(acc_topo_load_live(&t), ACC_ERR_NVML);
    CHECK_MSG_HAS("nvmlDeviceGetCudaComputeCapability for GPU 3 failed: NVML error 15 (GPU is "
                  "lost)");
    CHECK(t == NULL);
    check_nvml_clean(1);
}

/* A driver whose NVML predates nvmlDeviceGetPciInfo_v3 (the fake_nvml_pre_v3 build): refused
 * as too old, naming the entry point, the same way on every attempt. */
ACC_TEST(driver_pre_v3_too_old)
{
    acc_topo_t *t = NULL;
    int i;

    use_machine(MACHINE("hgx-h100.nvml"), NULL);
    for (i = 0; i < 2; i++) {
        CHECK_ERR(acc_topo_load_live(&t), ACC_ERR_NO_DEVICE);
        CHECK_MSG_HAS("the NVIDIA driver of this machine is too old for acc (its "
                      "libnvidia-ml.so.1 lacks nvmlDeviceGetPciInfo_v3)");
        check_hint();
        CHECK(t == NULL);
    }
    check_nvml_clean(0);
}
