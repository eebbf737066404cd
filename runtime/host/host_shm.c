/*
 * The host backend's shared-memory segments: their names, making and mapping them, and
 * removing what dead jobs left.
 *
 * Backing.  A segment is allocated with posix_fallocate, not only sized with ftruncate: a
 * tmpfs smaller than the segment (a container's /dev/shm, 64 MiB by Docker's default) then
 * fails the set-up with ENOSPC, which every rank hears of, instead of killing every rank with
 * SIGBUS at the first write to a page it cannot back.
 *
 * Names.  A segment has a name only between its creation and the moment every rank of its node
 * has mapped it (host_inst.c unlinks it then).  A job killed in that window leaves it behind, so
 * the name says whose it is: /acc-NS-PID-TAG-RANK-INST, NS the creator's PID namespace, PID
 * the creator's process id, TAG the communicator's.  acc_comm_cleanup (run by a process's
 * first host-backend communicator, and by `acc-info --cleanup`) removes the segments whose
 * creator, in this PID namespace, no longer exists; those of other namespaces it cannot judge
 * and leaves alone.
 */
#include "host_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#define SEG_MAGIC 0x61636373u /* "accs" */
#define SHM_DIR   "/dev/shm"

unsigned hb_pid_namespace(void)
{
    struct stat sb;
    return stat("/proc/self/ns/pid", &sb) == 0 ? (unsigned)sb.st_ino : 0;
}

unsigned hb_machine(void)
{
    char id[64] = {0};
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
    size_t n = f ? fread(id, 1, sizeof(id) - 1, f) : 0;
    if (f)
        fclose(f);
    return n ? (unsigned)acc_fnv1a64(id, n) | 1u : 0;
}

void hb_seg_name(const acc_comm_t *c, const hb_state_t *s, const hb_inst_t *in, int r, char *buf,
                 size_t n)
{
    snprintf(buf, n, "/acc-%x-%d-%s-%d-%d", s->pidns[r], s->pids[r], c->shm_tag, r, in->id);
}

static void human(uint64_t bytes, char *buf, size_t n)
{
    static const char *const units[] = {"bytes", "KiB", "MiB", "GiB", "TiB"};
    double v = (double)bytes;
    int u = 0;
    while (v >= 1024 && u < 4) {
        v /= 1024;
        u++;
    }
    snprintf(buf, n, u ? "%.1f %s" : "%.0f %s", v, units[u]);
}

/* Why a segment of `bytes` does not fit: what /dev/shm holds and what is free. */
static acc_status_t no_room(const char *name, int r, uint64_t bytes)
{
    struct statvfs v;
    char need[32], size[32], left[32];
    human(bytes, need, sizeof(need));
    if (statvfs(SHM_DIR, &v) != 0)
        return acc_error_set(ACC_ERR_NOMEM,
                             "shared memory %s of rank %d: " SHM_DIR " cannot hold %s", name, r,
                             need);
    human((uint64_t)v.f_blocks * v.f_frsize, size, sizeof(size));
    human((uint64_t)v.f_bavail * v.f_frsize, left, sizeof(left));
    return acc_error_set(ACC_ERR_NOMEM,
                         "shared memory %s of rank %d: " SHM_DIR " (%s, %s free) cannot hold "
                         "the %s this call needs; give the job a larger " SHM_DIR
                         " (docker run --shm-size, a Kubernetes emptyDir of medium Memory) or "
                         "use smaller calls",
                         name, r, size, left, need);
}

acc_status_t hb_seg_map(const acc_comm_t *c, const hb_state_t *s, hb_inst_t *in, int r, int create)
{
    char name[96];
    uint64_t bytes = in->layouts[r].bytes;
    struct stat sb;
    void *m;
    int fd, e;

    hb_seg_name(c, s, in, r, name, sizeof(name));
    fd = shm_open(name, create ? O_RDWR | O_CREAT | O_EXCL : O_RDWR, 0600);
    if (fd < 0)
        return acc_error_set(ACC_ERR_SYSTEM, "shared memory %s of rank %d: %s%s", name, r,
                             strerror(errno),
                             errno == EEXIST ? " (left over from a dead job? acc-info --cleanup "
                                               "removes those)"
                                             : "");
    if (create && (e = posix_fallocate(fd, 0, (off_t)bytes)) != 0) {
        close(fd);
        shm_unlink(name);
        if (e == ENOSPC || e == ENOMEM || e == EFBIG)
            return no_room(name, r, bytes);
        return acc_error_set(ACC_ERR_SYSTEM,
                             "shared memory %s of rank %d: allocating %llu bytes: %s", name, r,
                             (unsigned long long)bytes, strerror(e));
    }
    if (fstat(fd, &sb) != 0 || (uint64_t)sb.st_size != bytes) {
        close(fd);
        return acc_error_set(ACC_ERR_SYSTEM,
                             "shared memory %s of rank %d is %lld bytes, %llu were expected", name,
                             r, (long long)sb.st_size, (unsigned long long)bytes);
    }
    m = mmap(NULL, (size_t)bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (m == MAP_FAILED) {
        if (create)
            shm_unlink(name);
        return acc_error_set(ACC_ERR_SYSTEM, "mapping shared memory %s of rank %d: %s", name, r,
                             strerror(errno));
    }
    in->seg[r] = m;
    in->seg_bytes[r] = bytes;
    if (create)
        *(uint32_t *)m = SEG_MAGIC;
    else if (*(uint32_t *)m != SEG_MAGIC)
        return acc_error_set(ACC_ERR_INTERNAL, "shared memory %s of rank %d is not acc's", name, r);
    return ACC_OK;
}

void hb_seg_unlink(const acc_comm_t *c, const hb_state_t *s, const hb_inst_t *in)
{
    char name[96];
    hb_seg_name(c, s, in, in->rank, name, sizeof(name));
    shm_unlink(name);
}

acc_status_t acc_comm_cleanup(int *removed)
{
    unsigned ns = hb_pid_namespace(), seg_ns;
    struct dirent *d;
    DIR *dir;
    int n = 0;

    if (removed)
        *removed = 0;
    if (!(dir = opendir(SHM_DIR)))
        return acc_error_set(ACC_ERR_IO, SHM_DIR ": %s", strerror(errno));
    while ((d = readdir(dir)) != NULL) {
        char path[300];
        int pid, used = 0;
        if (sscanf(d->d_name, "acc-%x-%d-%*[0-9a-f]-%*d-%*d%n", &seg_ns, &pid, &used) != 2 ||
            d->d_name[used] != '\0' || seg_ns != ns || pid <= 0)
            continue; /* not a segment of this naming, or of another PID namespace */
        if (kill(pid, 0) == 0 || errno != ESRCH)
            continue; /* its process lives (or is not ours to signal: it exists) */
        snprintf(path, sizeof(path), "/%s", d->d_name);
        if (shm_unlink(path) == 0) {
            ACC_INFO(RUNTIME, "removed " SHM_DIR "%s, left by process %d, which is gone", path,
                     pid);
            n++;
        }
    }
    closedir(dir);
    if (removed)
        *removed = n;
    return ACC_OK;
}
