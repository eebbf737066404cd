/*
 * The sweep behind a selection table: every variant of every generator of a collective,
 * generated and verified once, simulated with each protocol at the sizes where it can still
 * win, by a few threads with one simulator each.
 *
 * Order.  Three passes over the groups (a generator with one inner/outer pair): all defaults,
 * then every lanes line, then the chunk counts at the lanes that won (select_variants.c).
 * Breadth first, so that acc's best at each size is near its final value early and the pruning
 * skips most sizes of the later, mostly losing, variants.  Within a pass every plan is generated
 * and verified first, then they are swept smallest first: small plans (trees, halving-doubling,
 * one-shot) are the fast ones at small sizes, which lets the big ones (rings over every rank,
 * seconds per simulation at 1024 ranks) skip those sizes.
 *
 * Pruning.  A candidate (variant, protocol) is not simulated at a size where its time at a
 * smaller size already exceeds acc's best there: the simulator's times do not fall when the
 * size grows (sizes only add bytes to every transfer).
 *
 * Measurements.  A candidate whose hash (with its protocol) a measured time names takes that
 * time at that size instead of its simulation (which is kept as its prediction), and is never
 * pruned, since measured times need not grow with the size.
 *
 * Determinism.  Ties go to the earlier candidate (pass, then registry order, then protocol), and
 * a candidate is skipped only when it could neither beat nor tie the best, so the result is the
 * same whatever the number of threads and the order they finish in.
 *
 * Memory.  A plan that holds no size is freed as soon as it loses its last one, unless its own
 * thread is still simulating it; at 1024 ranks plans reach hundreds of megabytes.
 *
 * By class.  Above ACC_SELECT_CLASS_RANKS a generator with a class form is built and proven in
 * it (acc_algo_generate_class) and simulated on its quotient (acc_cplan_quotient: one node's
 * ranks played for all), so that a 65,536-rank ring costs what an 8-rank one does.  A generator
 * without one is built rank by rank; where that is refused (the verifier's limit, the memory
 * estimate, a plan with no quotient) it is left out, and left_out says why, rather than
 * failing the sweep.
 *
 * Steadiness.  After the passes, a size whose best differs from the next smaller size's keeps
 * that one's candidate when it is within SELECT_KEEP of the best there: a table that flips
 * between two plans at every power of two for a 0.1 % gain (reduce_scatter on p4d, lanes=16
 * and 24) costs a kernel and a range each time, and no model is that exact.  The largest size
 * keeps it at any gain: a last range of one size would serve calls of exactly that size.
 */
#include "select_internal.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* Protocols in the order they are tried: bulk first, so that the low-latency ones, which lose
 * at large sizes, meet a best to be pruned against.  Those acc has no kernel for with a plan
 * are skipped (select_proto_worth). */
static const acc_proto_t protos[] = {ACC_PROTO_SIMPLE, ACC_PROTO_LL128, ACC_PROTO_LL};
static acc_status_t keep_steady(select_sweep_t *sw);
#define NPROTO (sizeof(protos) / sizeof(protos[0]))

typedef struct {
    const acc_algo_t *algo;
    acc_algo_args_t base;
    char def_params[ACC_PLAN_PARAMS_MAX]; /* the default plan's params */
} group_t;

typedef struct {
    int group;
    int is_default;
    acc_algo_args_t args;
} task_t;

typedef struct {
    select_sweep_t *sw;
    group_t *groups;
    size_t ngroups;
    task_t *tasks; /* the current pass; task k fills slot slot0 + k */
    size_t ntasks, next, slot0;
    /* Stage 1 sweeps each plan in nparts parts, every nparts-th size each, on as many threads:
     * by class a pass has a plan or two, each of them seconds per size, and one thread a plan
     * would leave the others idle.  1 below ACC_SELECT_CLASS_RANKS. */
    size_t nparts;
    int stage;     /* 0: generate every task's plan; 1: sweep them in `order` */
    size_t *order; /* tasks by operation count, fewest first */
    pthread_mutex_t lock;
    acc_status_t st; /* the first failure, and its message (messages are per thread) */
    char msg[1024];
} pool_t;

static uint64_t key_of(int var, size_t k)
{
    return (uint64_t)var * NPROTO + k;
}

/* Would (t, key) replace best?  Lower time, or the same time and an earlier candidate. */
static int better(double t, uint64_t key, const select_best_t *b)
{
    return b->var < 0 || t < select_best_us(b) || (t == select_best_us(b) && key < b->key);
}

/* The time measured for the plan of this hash at nbytes, or -1. */
static double measured_at(const select_sweep_t *sw, acc_coll_t coll, const char *hash,
                          uint64_t nbytes)
{
    size_t j;
    for (j = 0; hash[0] && j < sw->nmeasured; j++) {
        const acc_select_measured_t *m = &sw->measured[j];
        if (m->coll == coll && m->nbytes == nbytes && strcmp(m->plan_hash, hash) == 0)
            return m->us;
    }
    return -1;
}

/* The plan's hash with its protocol set when some measurement names it, else "".  Only hashed
 * when some measurement is of its collective: the text of a plan of millions of operations
 * takes seconds to write.  A class plan goes by its binary form's hash, as it is stored. */
static acc_status_t measured_hash(const select_sweep_t *sw, select_slot_t *slot, acc_proto_t proto,
                                  char hash[ACC_SHA256_HEX_LEN + 1])
{
    acc_plan_t *plan = slot->plan;
    acc_proto_t was = plan->proto;
    size_t j;
    acc_status_t st;
    hash[0] = '\0';
    for (j = 0; j < sw->nmeasured && sw->measured[j].coll != plan->coll; j++)
        ;
    if (j == sw->nmeasured)
        return ACC_OK;
    /* Under the pool's lock: the plan's protocol is set for the hash and put back, while the
     * other parts' threads simulate it with theirs (acc_sim_plan_proto). */
    if (slot->cplan)
        slot->cplan->proto = proto;
    plan->proto = proto;
    st = slot->cplan ? acc_cplan_hash(slot->cplan, hash) : acc_plan_hash(plan, hash);
    plan->proto = was;
    if (st != ACC_OK)
        return st;
    for (j = 0; j < sw->nmeasured; j++)
        if (sw->measured[j].coll == plan->coll && strcmp(sw->measured[j].plan_hash, hash) == 0)
            return ACC_OK;
    hash[0] = '\0';
    return ACC_OK;
}

/* A slot's plans, taken from it under the lock to be freed unlocked. */
typedef struct {
    acc_plan_t *plan;
    acc_cplan_t *cplan;
} taken_t;

static taken_t take(select_slot_t *slot)
{
    taken_t t = {slot->plan, slot->cplan};
    slot->plan = NULL;
    slot->cplan = NULL;
    return t;
}

static void drop(taken_t t)
{
    acc_plan_destroy(t.plan);
    acc_cplan_destroy(t.cplan);
}

/* Under the lock: record a result (measured < 0: none); returns the plans of a slot that lost
 * its last size (to free unlocked). */
static taken_t record(select_sweep_t *sw, size_t i, int var, size_t k, const acc_sim_result_t *res,
                      double measured)
{
    select_best_t *b = &sw->best[i];
    taken_t victim = {NULL, NULL};

    if (!better(measured >= 0 ? measured : res->time_us, key_of(var, k), b))
        return victim;
    if (b->var >= 0) {
        select_slot_t *old = &sw->slots[b->var];
        if (--old->wins == 0 && !old->active)
            victim = take(old);
    }
    b->var = var;
    b->key = key_of(var, k);
    b->proto = protos[k];
    b->r = *res;
    b->measured_us = measured;
    sw->slots[var].wins++;
    return victim;
}

/* Simulate one variant with every protocol over part `part` of the sweep's sizes (every
 * nparts-th from the part's own), sharing the plan with the other parts' threads. */
static acc_status_t sweep_plan(pool_t *pool, int thread, int var, size_t part)
{
    select_sweep_t *sw = pool->sw;
    acc_plan_t *plan = sw->slots[var].plan; /* alive: active until this returns */
    size_t k, i, nsim[NPROTO] = {0};
    acc_status_t st;

    if (!plan) /* left out */
        return ACC_OK;
    for (k = 0; k < NPROTO; k++) {
        double lower = 0; /* the time at the last size simulated: a bound for larger ones */
        char hash[ACC_SHA256_HEX_LEN + 1];
        if (!select_proto_worth(sw->topo, plan, sw->slots[var].ops, protos[k]))
            continue;
        pthread_mutex_lock(&pool->lock);
        st = measured_hash(sw, &sw->slots[var], protos[k], hash);
        pthread_mutex_unlock(&pool->lock);
        if (st != ACC_OK)
            return st;
        for (i = part; i < sw->nsizes; i += pool->nparts) {
            const select_best_t *b = &sw->best[i];
            double measured = measured_at(sw, plan->coll, hash, sw->sizes[i]);
            acc_sim_result_t res;
            taken_t victim;
            int skip;

            /* A measured candidate is never pruned: its times need not grow with the size. */
            pthread_mutex_lock(&pool->lock);
            skip = !sw->exhaustive && !hash[0] && b->var >= 0 &&
                   (lower > select_best_us(b) ||
                    (lower == select_best_us(b) && key_of(var, k) > b->key));
            pthread_mutex_unlock(&pool->lock);
            if (skip)
                continue;
            st = acc_sim_plan_proto(sw->sims[thread], plan, protos[k], sw->sizes[i], sw->dtype,
                                    &res);
            if (st != ACC_OK)
                return acc_error_prefix(
                    st, "simulating %s %s (%s, %s) at %llu bytes: ", acc_coll_name(plan->coll),
                    plan->algo, plan->params, acc_proto_name(protos[k]),
                    (unsigned long long)sw->sizes[i]);
            lower = res.time_us;
            nsim[k]++;
            pthread_mutex_lock(&pool->lock);
            sw->simulations++;
            victim = record(sw, i, var, k, &res, measured);
            pthread_mutex_unlock(&pool->lock);
            drop(victim);
        }
    }
    ACC_DEBUG(COMPILER,
              "select %s: %s %s, %zu operations: %zu/%zu/%zu sizes simulated (%s/%s/%s), part %zu "
              "of %zu",
              acc_coll_name(plan->coll), plan->algo, plan->params, sw->slots[var].ops, nsim[0],
              nsim[1], nsim[2], acc_proto_name(protos[0]), acc_proto_name(protos[1]),
              acc_proto_name(protos[2]), part + 1, pool->nparts);
    return ACC_OK;
}

/* By class: the class plan proven and its quotient by one node, or the explicit plan where
 * the generator has no class form.  A class plan with no such quotient (a tree: its root and
 * heads break the symmetry) is proven and priced whole, within the explicit form's limits, and
 * kept in class form for the database. */
static acc_status_t build_by_class(const select_sweep_t *sw, const acc_algo_t *algo,
                                   const acc_algo_args_t *args, acc_plan_t **plan, acc_cplan_t **cp)
{
    acc_status_t st;

    if (!acc_algo_has_class(algo, sw->topo, args))
        return acc_algo_generate_within(algo, sw->topo, args, SELECT_CLASS_OPS,
                                        SELECT_CLASS_LOCATIONS, plan);
    if ((st = acc_algo_generate_class_within(algo, sw->topo, args, SELECT_CLASS_OPS,
                                             SELECT_CLASS_LOCATIONS, cp, NULL)) != ACC_OK)
        return st;
    st = acc_cplan_quotient(*cp, acc_topo_gpus_per_node(sw->topo), plan);
    if (st == ACC_ERR_UNSUPPORTED) {
        acc_error_clear();
        st = acc_cplan_op_count(*cp) > SELECT_CLASS_OPS
                 ? acc_error_set(ACC_ERR_RANGE,
                                 "%s %s: its plan has %.3g operations and no quotient to price "
                                 "it on, more than the %.3g allowed here",
                                 acc_coll_name(algo->coll), algo->name,
                                 (double)acc_cplan_op_count(*cp), (double)SELECT_CLASS_OPS)
                 : acc_cplan_expand(*cp, plan);
    }
    if (st != ACC_OK) {
        acc_cplan_destroy(*cp);
        *cp = NULL;
    }
    return st;
}

/* Under the lock: note a generator the sweep leaves out, and why (without the generator's name
 * the message may begin with); out of memory, the note is lost, not the sweep. */
static void leave_out(select_sweep_t *sw, const group_t *g, const acc_algo_args_t *variant,
                      const char *why)
{
    char name[64], var[48] = "", line[1024];
    void *p = sw->left_out;
    snprintf(name, sizeof(name), "%s %s", acc_coll_name(g->algo->coll), g->algo->name);
    if (strncmp(why, name, strlen(name)) == 0 && strncmp(why + strlen(name), ": ", 2) == 0)
        why += strlen(name) + 2;
    if (variant)
        snprintf(var, sizeof(var), " lanes=%d chunks=%d", variant->lanes, variant->chunks);
    if (g->base.inner || g->base.outer)
        snprintf(line, sizeof(line), "%s%s (inner=%s outer=%s): %s", name, var,
                 g->base.inner ? g->base.inner : "default",
                 g->base.outer ? g->base.outer : "default", why);
    else
        snprintf(line, sizeof(line), "%s%s: %s", name, var, why);
    if (acc_array_reserve(&p, &sw->left_out_cap, sw->nleft_out + 1, sizeof(char *)) != ACC_OK)
        return;
    sw->left_out = p;
    if ((sw->left_out[sw->nleft_out] = acc_mem_strdup(line)) != NULL)
        sw->nleft_out++;
}

/* Stage 0 of a pass: generate and verify task k's plan into its slot. */
static acc_status_t generate(pool_t *pool, size_t k)
{
    select_sweep_t *sw = pool->sw;
    const task_t *task = &pool->tasks[k];
    group_t *g = &pool->groups[task->group];
    select_slot_t *slot = &sw->slots[pool->slot0 + k];
    acc_plan_t *plan = NULL;
    acc_cplan_t *cp = NULL;
    int by_class = acc_select_by_class(acc_topo_ranks(sw->topo));
    acc_status_t st;

    st = by_class ? build_by_class(sw, g->algo, &task->args, &plan, &cp)
                  : acc_algo_generate(g->algo, sw->topo, &task->args, &plan);
    /* By class, a generator whose plan cannot be had is left out; at any size, so is a lanes
     * or chunks variant past the verifier's limits (the vector clocks of 72 ranks sharing
     * memory on 8 lanes), the default having been swept. */
    if (st != ACC_OK &&
        ((by_class && (st == ACC_ERR_RANGE || st == ACC_ERR_NOMEM || st == ACC_ERR_UNSUPPORTED)) ||
         (!task->is_default && st == ACC_ERR_RANGE))) {
        pthread_mutex_lock(&pool->lock);
        leave_out(sw, g, task->is_default ? NULL : &task->args, acc_error_message());
        slot->group = task->group;
        pthread_mutex_unlock(&pool->lock);
        acc_error_clear();
        return ACC_OK;
    }
    if (st != ACC_OK)
        return st;
    if (task->is_default) /* only this task writes its group's params */
        memcpy(g->def_params, plan->params, sizeof(g->def_params));
    pthread_mutex_lock(&pool->lock);
    slot->plan = plan;
    slot->cplan = cp;
    slot->ops = cp ? (size_t)acc_cplan_op_count(cp) : acc_plan_op_count(plan);
    slot->lanes = plan->nlanes;
    slot->group = task->group;
    slot->active = (int)pool->nparts; /* parts not yet swept: a slot holding no size is freed
                                         only when none is left */
    sw->variants++;
    pthread_mutex_unlock(&pool->lock);
    return ACC_OK;
}

/* Stage 1: sweep a part of a plan's sizes, then, after its last part, free it if it holds no
 * size. */
static acc_status_t sweep(pool_t *pool, int thread, int var, size_t part)
{
    select_sweep_t *sw = pool->sw;
    taken_t plans = {NULL, NULL};
    acc_status_t st = sweep_plan(pool, thread, var, part);

    pthread_mutex_lock(&pool->lock);
    if (sw->slots[var].active)
        sw->slots[var].active--;
    if (!sw->slots[var].active && !sw->slots[var].wins)
        plans = take(&sw->slots[var]);
    pthread_mutex_unlock(&pool->lock);
    drop(plans);
    return st;
}

typedef struct {
    pool_t *pool;
    int thread;
} worker_t;

static void *worker(void *arg)
{
    worker_t *w = arg;
    pool_t *pool = w->pool;

    for (;;) {
        size_t k;
        acc_status_t st;
        pthread_mutex_lock(&pool->lock);
        if (pool->st != ACC_OK ||
            pool->next == (pool->stage == 0 ? pool->ntasks : pool->ntasks * pool->nparts)) {
            pthread_mutex_unlock(&pool->lock);
            return NULL;
        }
        k = pool->next++;
        pthread_mutex_unlock(&pool->lock);
        st = pool->stage == 0
                 ? generate(pool, k)
                 : sweep(pool, w->thread, (int)(pool->slot0 + pool->order[k / pool->nparts]),
                         k % pool->nparts);
        if (st != ACC_OK) {
            pthread_mutex_lock(&pool->lock);
            if (pool->st == ACC_OK) {
                pool->st = st;
                snprintf(pool->msg, sizeof(pool->msg), "%s", acc_error_message());
            }
            pthread_mutex_unlock(&pool->lock);
            return NULL;
        }
    }
}

/* One stage of a pass on the sweep's threads (the calling one included). */
static acc_status_t run_stage(pool_t *pool, int stage)
{
    select_sweep_t *sw = pool->sw;
    pthread_t tid[SELECT_THREADS_MAX];
    worker_t w[SELECT_THREADS_MAX];
    int t, started = 0;

    pool->stage = stage;
    pool->next = 0;
    for (t = 0; t < sw->nthreads; t++) {
        w[t].pool = pool;
        w[t].thread = t;
    }
    /* No more threads than tasks; thread 0 is the caller. */
    for (t = 1; t < sw->nthreads && (size_t)t < pool->ntasks * (stage ? pool->nparts : 1); t++) {
        if (pthread_create(&tid[t], NULL, worker, &w[t]) != 0)
            break;
        started = t;
    }
    worker(&w[0]);
    for (t = 1; t <= started; t++)
        pthread_join(tid[t], NULL);
    if (pool->st != ACC_OK)
        return acc_error_set(pool->st, "%s", pool->msg);
    return ACC_OK;
}

typedef struct {
    size_t ops, k;
} by_ops_t;

static int by_ops(const void *a, const void *b)
{
    const by_ops_t *x = a, *y = b;
    if (x->ops != y->ops)
        return x->ops < y->ops ? -1 : 1;
    return x->k < y->k ? -1 : x->k > y->k;
}

/* A pass: generate and verify every task's plan, then sweep them smallest first.  Small plans
 * are mostly the fast ones at small sizes (trees, halving-doubling, one-shot), so sweeping them
 * first gives the big ones (rings over every rank) a best to be pruned against.  By class a
 * plan's size is its quotient's: the class plans, fast to play and the best at the largest
 * sizes, then prune the explicit ones there. */
static acc_status_t run_pass(pool_t *pool)
{
    select_sweep_t *sw = pool->sw;
    size_t need = pool->slot0 + pool->ntasks, k;
    void *p = sw->slots;
    acc_status_t st;

    if (acc_array_reserve(&p, &sw->cap, need, sizeof(*sw->slots)) != ACC_OK)
        return acc_error_set(ACC_ERR_NOMEM, "out of memory for %zu variants", need);
    sw->slots = p;
    memset(sw->slots + pool->slot0, 0, pool->ntasks * sizeof(*sw->slots));
    sw->nslots = need;
    if (!(pool->order = acc_mem_calloc(pool->ntasks, sizeof(size_t))))
        return acc_error_set(ACC_ERR_NOMEM, "out of memory ordering %zu variants", pool->ntasks);
    if ((st = run_stage(pool, 0)) == ACC_OK) {
        by_ops_t *sorted = acc_mem_calloc(pool->ntasks, sizeof(*sorted));
        if (!sorted) {
            acc_mem_free(pool->order);
            pool->order = NULL;
            return acc_error_set(ACC_ERR_NOMEM, "out of memory ordering variants");
        }
        /* By what the simulator plays: a class plan's quotient, a few nodes' operations,
         * goes before explicit plans of every rank. */
        for (k = 0; k < pool->ntasks; k++) {
            const select_slot_t *slot = &sw->slots[pool->slot0 + k];
            sorted[k].ops = !slot->plan   ? 0
                            : slot->cplan ? acc_plan_op_count(slot->plan)
                                          : slot->ops;
            sorted[k].k = k;
        }
        qsort(sorted, pool->ntasks, sizeof(*sorted), by_ops);
        for (k = 0; k < pool->ntasks; k++)
            pool->order[k] = sorted[k].k;
        acc_mem_free(sorted);
        st = run_stage(pool, 1);
    }
    acc_mem_free(pool->order);
    pool->order = NULL;
    return st;
}

static acc_status_t add_task(task_t **tasks, size_t *n, size_t *cap, int group, int is_default,
                             const acc_algo_args_t *args)
{
    void *p = *tasks;
    if (acc_array_reserve(&p, cap, *n + 1, sizeof(task_t)) != ACC_OK)
        return acc_error_set(ACC_ERR_NOMEM, "out of memory listing variants");
    *tasks = p;
    (*tasks)[*n].group = group;
    (*tasks)[*n].is_default = is_default;
    (*tasks)[*n].args = *args;
    (*n)++;
    return ACC_OK;
}

/* Append vars (taken) as tasks of group g. */
static acc_status_t add_tasks(task_t **tasks, size_t *n, size_t *cap, int g, acc_algo_args_t *vars,
                              size_t nvar)
{
    size_t j;
    acc_status_t st = ACC_OK;
    for (j = 0; j < nvar && st == ACC_OK; j++)
        st = add_task(tasks, n, cap, g, 0, &vars[j]);
    acc_mem_free(vars);
    return st;
}

static acc_status_t list_groups(pool_t *pool, acc_coll_t coll)
{
    const acc_topo_t *topo = pool->sw->topo;
    size_t count, i, k, npairs, cap = 0;
    const acc_algo_t *const *algos = acc_algo_list(&count);
    select_pair_t pairs[SELECT_PAIRS_MAX];
    void *p = NULL;

    for (i = 0; i < count; i++) {
        if (algos[i]->coll != coll)
            continue;
        npairs = select_pairs(topo, algos[i], pairs);
        for (k = 0; k < npairs; k++) {
            group_t *g;
            if (acc_array_reserve(&p, &cap, pool->ngroups + 1, sizeof(group_t)) != ACC_OK) {
                acc_mem_free(p);
                return acc_error_set(ACC_ERR_NOMEM, "out of memory listing generators");
            }
            g = (group_t *)p + pool->ngroups;
            memset(g, 0, sizeof(*g));
            g->algo = algos[i];
            g->base.inner = pairs[k].inner;
            g->base.outer = pairs[k].outer;
            if (algos[i]->supports(topo, &g->base) != ACC_OK) {
                acc_error_clear();
                continue;
            }
            pool->ngroups++;
        }
    }
    pool->groups = p;
    return ACC_OK;
}

/* The third pass's tasks: chunk counts at each lane count of a group that holds a size. */
static acc_status_t chunk_tasks(pool_t *pool, task_t **tasks, size_t *n, size_t *cap)
{
    select_sweep_t *sw = pool->sw;
    size_t g, i, k, nvar;
    acc_status_t st = ACC_OK;

    for (g = 0; g < pool->ngroups && st == ACC_OK; g++) {
        int tried[64], ntried = 0;
        for (i = 0; i < sw->nslots && st == ACC_OK; i++) {
            acc_algo_args_t *vars = NULL;
            int lanes = sw->slots[i].lanes;
            if (sw->slots[i].group != (int)g || !sw->slots[i].wins)
                continue;
            for (k = 0; k < (size_t)ntried && tried[k] != lanes; k++)
                ;
            if (k < (size_t)ntried || ntried == 64)
                continue;
            tried[ntried++] = lanes;
            st = select_chunk_variants(sw->topo, pool->groups[g].algo, &pool->groups[g].base,
                                       pool->groups[g].def_params, lanes, &vars, &nvar);
            if (st == ACC_OK)
                st = add_tasks(tasks, n, cap, (int)g, vars, nvar);
        }
    }
    return st;
}

acc_status_t select_sweep(select_sweep_t *sw, acc_coll_t coll)
{
    pool_t pool;
    task_t *tasks = NULL;
    size_t n = 0, cap = 0, g, i, nvar;
    int pass;
    acc_status_t st;

    memset(&pool, 0, sizeof(pool));
    pool.sw = sw;
    pool.nparts = acc_select_by_class(acc_topo_ranks(sw->topo)) ? (size_t)sw->nthreads : 1;
    for (i = 0; i < sw->nsizes; i++) {
        sw->best[i].var = -1;
        sw->best[i].measured_us = -1;
    }
    if (sw->nthreads < 1 || sw->nthreads > SELECT_THREADS_MAX)
        return acc_error_set(ACC_ERR_INVALID, "selection sweep: %d threads (1 to %d)", sw->nthreads,
                             SELECT_THREADS_MAX);
    if ((st = list_groups(&pool, coll)) != ACC_OK)
        return st;
    pthread_mutex_init(&pool.lock, NULL);
    for (pass = 0; pass < 3 && st == ACC_OK; pass++) {
        n = 0;
        for (g = 0; g < pool.ngroups && st == ACC_OK; g++) {
            acc_algo_args_t *vars = NULL;
            if (pass == 0)
                st = add_task(&tasks, &n, &cap, (int)g, 1, &pool.groups[g].base);
            else if (pass == 1 &&
                     (st = select_lane_variants(sw->topo, pool.groups[g].algo, &pool.groups[g].base,
                                                pool.groups[g].def_params, sw->max_lanes, &vars,
                                                &nvar)) == ACC_OK)
                st = add_tasks(&tasks, &n, &cap, (int)g, vars, nvar);
        }
        if (st == ACC_OK && pass == 2)
            st = chunk_tasks(&pool, &tasks, &n, &cap);
        if (st != ACC_OK || n == 0)
            continue;
        pool.tasks = tasks;
        pool.ntasks = n;
        pool.slot0 = sw->nslots;
        st = run_pass(&pool);
    }
    pthread_mutex_destroy(&pool.lock);
    acc_mem_free(tasks);
    acc_mem_free(pool.groups);
    if (st == ACC_OK)
        st = keep_steady(sw);
    return st;
}

/* The steadiness pass: walk the sizes upwards; where the best changes, simulate the smaller
 * size's candidate (alive: it holds that size) at this size and keep it when it is within
 * SELECT_KEEP of the best.  Measured times are left as they are. */
static acc_status_t keep_steady(select_sweep_t *sw)
{
    size_t i;
    acc_status_t st;

    for (i = 1; i < sw->nsizes; i++) {
        select_best_t *prev = &sw->best[i - 1], *cur = &sw->best[i];
        select_slot_t *old;
        acc_plan_t *plan;
        acc_sim_result_t res;

        if (prev->var < 0 || cur->var < 0 || prev->measured_us >= 0 || cur->measured_us >= 0 ||
            (prev->var == cur->var && prev->proto == cur->proto))
            continue;
        plan = sw->slots[prev->var].plan;
        if ((st = acc_sim_plan_proto(sw->sims[0], plan, prev->proto, sw->sizes[i], sw->dtype,
                                     &res)) != ACC_OK)
            return acc_error_prefix(st, "simulating %s %s at %llu bytes: ", plan->algo,
                                    plan->params, (unsigned long long)sw->sizes[i]);
        sw->simulations++;
        /* The largest size keeps its predecessor's plan whatever the gain: alone it would be
         * a range of one size, a kernel for calls of exactly that many bytes. */
        if (i + 1 < sw->nsizes && !(res.time_us <= cur->r.time_us * (1.0 + SELECT_KEEP)))
            continue;
        old = &sw->slots[cur->var];
        if (--old->wins == 0 && !old->active)
            drop(take(old));
        sw->slots[prev->var].wins++;
        cur->var = prev->var;
        cur->key = prev->key;
        cur->proto = prev->proto;
        cur->r = res;
    }
    return ACC_OK;
}

void select_sweep_free(select_sweep_t *sw)
{
    size_t i;
    for (i = 0; i < sw->nslots; i++)
        drop(take(&sw->slots[i]));
    acc_strv_free(sw->left_out, sw->nleft_out);
    sw->left_out = NULL;
    sw->nleft_out = sw->left_out_cap = 0;
    acc_mem_free(sw->slots);
    sw->slots = NULL;
    sw->nslots = sw->cap = 0;
}
