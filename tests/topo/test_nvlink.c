/* acc_topo_nvlink_from(): the NVLink fabric of a shipped platform applied to a file that lists
 * none (aws-ofi-nccl's p5.48xlarge topology), as `acc-compile --topo FILE --nvlink-from PLATFORM`
 * does, and the mismatches it refuses, each message naming both sides. */
#include "nccl_xml_test_util.h"

#define P5 "aws-ofi-nccl-p5.48xl-topo.xml"

static acc_topo_t *platform(const char *name)
{
    acc_topo_t *t = NULL;
    setenv("ACC_PLATFORM_DIR", acc_test_src("schedules/platforms"), 1);
    CHECK_OK(acc_topo_load_platform(name, &t));
    return t;
}

static acc_topo_t *p5_file(void)
{
    acc_topo_t *t = NULL;
    CHECK_OK(acc_topo_load_file(acc_test_data("topologies/nccl-xml/" P5), &t));
    return t;
}

ACC_TEST(p5_file_with_dgx_h100_nvlinks_is_an_nvswitch_machine)
{
    acc_topo_t *file = p5_file(), *dgx = platform("dgx-h100"), *t = NULL;
    char before[ACC_SHA256_HEX_LEN + 1], after[ACC_SHA256_HEX_LEN + 1];
    acc_buf_t canon;
    int a, b;

    CHECK_OK(acc_topo_nvlink_from(file, dgx, &t));
    CHECK_INT(acc_topo_count(t, ACC_VTX_NVSWITCH), 1);
    for (a = 0; a < 8; a++) {
        CHECK_INT(acc_topo_nvlinks_to_switches(t, a), 18);
        for (b = 0; b < 8; b++) {
            acc_topo_path_t p;
            if (a == b)
                continue;
            CHECK_OK(acc_topo_path(t, a, b, &p));
            CHECK_INT(p.cls, ACC_PATH_NVL);
            CHECK_NEAR(p.bw, 18 * 25.0, 1e-9);
        }
    }
    /* The PCIe tree, NICs and GPU facts are the file's. */
    CHECK_INT(acc_topo_count(t, ACC_VTX_NIC), 32);
    CHECK_STR(tt_gpu(t, 3)->busid, "0000:80:00.0");
    CHECK(tt_assumed(t, "NVLinks taken from the shipped platform dgx-h100", "18 per GPU"));
    CHECK(tt_assumed(t, "H100 SXM5 80GB for sm_90 GPUs", NULL));
    CHECK_INT(topo_missing_nvlinks(t, NULL), 0);
    /* The fingerprint describes the NVSwitch machine, not the PCIe one. */
    CHECK_OK(acc_topo_fingerprint(file, before));
    CHECK_OK(acc_topo_fingerprint(t, after));
    CHECK(strcmp(before, after) != 0);
    acc_buf_init(&canon);
    CHECK_OK(acc_topo_canonical(t, &canon));
    CHECK(strstr(canon.data, "gpu 0 sm=90 sms=132 mem=80G numa=0 nvswitch=18\n") != NULL);
    CHECK(strstr(canon.data, "row 0: LOC/0.00/0 NVL/450.00/0") != NULL);
    acc_buf_free(&canon);
    /* The inputs are untouched. */
    CHECK_INT(acc_topo_count(file, ACC_VTX_NVSWITCH), 0);
    acc_topo_destroy(t);
    acc_topo_destroy(dgx);
    acc_topo_destroy(file);
}

ACC_TEST(other_generation_refused_naming_both)
{
    acc_topo_t *file = p5_file(), *a100 = platform("dgx-a100"), *t = NULL;
    CHECK_ERR(acc_topo_nvlink_from(file, a100, &t), ACC_ERR_TOPO);
    CHECK(t == NULL);
    CHECK_MSG_HAS(P5);
    CHECK_MSG_HAS("sm_90");
    CHECK_MSG_HAS("dgx-a100");
    CHECK_MSG_HAS("sm_80");
    acc_topo_destroy(a100);
    acc_topo_destroy(file);
}

/* The p5 file against a synthetic "platform" named `name`: refused with msg, naming the file. */
static void refused_against(const char *desc, const char *name, const char *msg)
{
    acc_topo_t *file = p5_file(), *p = NULL, *t = NULL;
    CHECK_OK(acc_topo_load(desc, &p));
    acc_topo_set_name(p, name);
    CHECK_ERR(acc_topo_nvlink_from(file, p, &t), ACC_ERR_TOPO);
    CHECK(t == NULL);
    CHECK_MSG_HAS(msg);
    CHECK_MSG_HAS(P5);
    acc_topo_destroy(p);
    acc_topo_destroy(file);
}

ACC_TEST(other_gpu_count_refused_naming_both)
{
    refused_against("nodes=1 gpus=4 nvlink=18", "four-h100",
                    " has 8 GPUs per node but four-h100 has 4");
}

ACC_TEST(input_with_nvlinks_refused)
{
    acc_topo_t *dgx = platform("dgx-h100"), *ibm = NULL, *t = NULL;
    CHECK_OK(acc_topo_load_file(acc_test_data("topologies/nccl-xml/" IBM), &ibm));
    CHECK_ERR(acc_topo_nvlink_from(ibm, dgx, &t), ACC_ERR_TOPO);
    CHECK_MSG_HAS(IBM " already lists NVLinks");
    CHECK_MSG_HAS("dgx-h100");
    acc_topo_destroy(ibm);
    acc_topo_destroy(dgx);
}

/* GPUs the file names as H100 PCIe cards have no NVLink to take, though their generation
 * matches. */
ACC_TEST(part_without_nvlinks_refused)
{
    char *text = slurp(P5, NULL);
    char *pcie = replace(text, "class=\"0x030200\"",
                         "class=\"0x030200\" vendor=\"0x10de\" device=\"0x2331\"", 0);
    acc_topo_t *file = NULL, *dgx = platform("dgx-h100"), *t = NULL;

    CHECK_OK(acc_topo_load_buffer(pcie, strlen(pcie), "p5-pcie.xml", &file));
    CHECK_STR(tt_gpu(file, 0)->model, "H100 PCIe 80GB");
    CHECK_INT(topo_missing_nvlinks(file, NULL), 0);
    CHECK_ERR(acc_topo_nvlink_from(file, dgx, &t), ACC_ERR_TOPO);
    CHECK_MSG_HAS(
        "GPU0 of p5-pcie.xml (H100 PCIe 80GB) has 0 NVLinks, but GPU0 of dgx-h100 has 18");
    acc_topo_destroy(dgx);
    acc_topo_destroy(file);
    acc_mem_free(pcie);
    acc_mem_free(text);
}

ACC_TEST(platform_without_nvlinks_refused)
{
    refused_against("nodes=1 gpus=8 nvlink=0", "flat-h100", "flat-h100 has no NVLink to take for ");
}
