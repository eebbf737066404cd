/*
 * The simulator with a measured device in place of its constants (acc_sim_set_device): what a
 * call, a message, a signal and a peer read cost, and what memory moves, when every rank runs
 * on one GPU whose launch, flag hand-off and copy rate bench_kernels has measured.  Without a
 * device every figure comes from sim_constants.c, as before.
 */
#include "sim_internal.h"

#include <math.h>

/* No lane cap on the device: the executor gives a lane as many blocks as the size needs, so
 * that only the shared memory binds. */
#define DEVICE_LANE_CAP 1e12

acc_status_t acc_sim_set_device(acc_sim_t *sim, const acc_sim_device_t *dev)
{
    if (!sim || !dev)
        return acc_error_set(ACC_ERR_INVALID, "acc_sim_set_device: simulator and device needed");
    if (!isfinite(dev->launch_us) || dev->launch_us < 0)
        return acc_error_set(ACC_ERR_INVALID, "acc_sim_set_device: launch_us %g is not >= 0",
                             dev->launch_us);
    if (!isfinite(dev->handoff_us) || !(dev->handoff_us > 0))
        return acc_error_set(ACC_ERR_INVALID, "acc_sim_set_device: handoff_us %g is not > 0",
                             dev->handoff_us);
    if (!isfinite(dev->copy_gbs) || !(dev->copy_gbs > 0))
        return acc_error_set(ACC_ERR_INVALID, "acc_sim_set_device: copy_gbs %g is not > 0",
                             dev->copy_gbs);
    sim->device = *dev;
    sim->device_on = 1;
    /* Bytes read and written per microsecond, no efficiency on top: the copy was measured. */
    sim->raw_cap[sim->res_mem] = dev->copy_gbs * 1e3;
    return ACC_OK;
}

double sim_overhead_us(const acc_sim_t *sim, acc_proto_t proto)
{
    return sim->device_on ? sim->device.launch_us : sim_call_overhead_us(proto);
}

double sim_msg_latency_us(const acc_sim_t *sim, sim_class_t cls)
{
    if (sim->device_on && cls != SIM_CLASS_NET)
        return sim->device.handoff_us;
    return sim_step_latency_us(sim->proto, cls);
}

double sim_peer_lat_us(const acc_sim_t *sim, sim_class_t cls)
{
    if (sim->device_on && cls != SIM_CLASS_NET)
        return sim->device.handoff_us;
    return sim_peer_latency_us(cls);
}

/* On the device a peer's memory is the device's own: one read, one hand-off's time. */
double sim_peer_trips(const acc_sim_t *sim)
{
    return sim->device_on ? 1.0 : sim_peer_read_trips();
}

double sim_lane_cap_us(const acc_sim_t *sim, acc_proto_t proto)
{
    return sim->device_on ? DEVICE_LANE_CAP : sim_lane_cap_gbs(proto, sim->min_sm) * 1e3;
}
