/*
 * Selection tables built from the cost models (acc_select_build): what a user of the table and
 * of the report relies on -- the table covers the sweep without gaps or overlaps, each size's
 * choice is the fastest candidate (checked against direct simulation), NCCL keeps the sizes
 * where acc is slower, and the plans the table names are verified and hashed as stored.
 */
#include "acc_test.h"
#include "select_internal.h"

#include <math.h>

static acc_topo_t *load(const char *src)
{
    acc_topo_t *t = NULL;
    CHECK_OK(acc_topo_load(src, &t));
    return t;
}

static acc_select_result_t *build(const acc_topo_t *t, acc_coll_t coll,
                                  const acc_select_build_opts_t *opts)
{
    acc_select_builder_t *b = NULL;
    acc_select_result_t *r = NULL;
    CHECK_OK(acc_select_builder_create(t, opts, &b));
    CHECK_OK(acc_select_build(b, coll, &r));
    acc_select_builder_destroy(b);
    return r;
}

/* Sorted, non-overlapping, touching ranges from lo to hi; no two neighbours with one choice. */
static void check_cover(const acc_select_table_t *t, uint64_t lo, uint64_t hi)
{
    size_t i;
    CHECK(t->n >= 1);
    CHECK_INT(t->entries[0].min_bytes, lo);
    CHECK_INT(t->entries[t->n - 1].max_bytes, hi);
    for (i = 0; i < t->n; i++) {
        CHECK(t->entries[i].min_bytes <= t->entries[i].max_bytes);
        CHECK(t->entries[i].source == ACC_SELECT_MODEL);
        CHECK(t->entries[i].predicted_us > 0);
        if (i == 0)
            continue;
        CHECK_MSG(t->entries[i].min_bytes == t->entries[i - 1].max_bytes + 1,
                  "gap or overlap between entry %zu (..%llu) and %zu (%llu..)", i - 1,
                  (unsigned long long)t->entries[i - 1].max_bytes, i,
                  (unsigned long long)t->entries[i].min_bytes);
        CHECK_MSG(!acc_select_same_choice(&t->entries[i - 1], &t->entries[i]),
                  "entries %zu and %zu name the same choice and were not merged", i - 1, i);
    }
}

/* Every row agrees with the table, NCCL keeps the sizes acc does not win, and the figures
 * derived from the times are consistent. */
static void check_rows(const acc_select_result_t *r)
{
    size_t i;
    for (i = 0; i < r->nrows; i++) {
        const acc_select_row_t *row = &r->rows[i];
        const acc_select_entry_t *e = acc_select_lookup(r->table, row->nbytes);
        double chosen;

        CHECK(e != NULL);
        CHECK(row->plan >= 0 || row->nccl_ok);
        if (i)
            CHECK(row->nbytes > r->rows[i - 1].nbytes);
        if (row->plan >= 0 && row->nccl_ok) {
            CHECK_INT(row->use_nccl, row->nccl.time_us <= row->acc_us);
            CHECK_NEAR(row->speedup, row->nccl.time_us / row->acc_us, 1e-9 * row->speedup);
        }
        CHECK_INT(e->use_nccl, row->use_nccl);
        chosen = row->use_nccl ? row->nccl.time_us : row->acc_us;
        if (e->min_bytes == row->nbytes)
            CHECK_NEAR(e->predicted_us, chosen, 1e-9 * chosen);
        if (row->use_nccl) {
            CHECK_STR(e->algo, acc_nccl_algo_name(row->nccl.algo));
            CHECK_STR(e->plan_hash, "");
        } else {
            CHECK_STR(e->algo, r->plans[row->plan].plan->algo);
            CHECK_STR(e->plan_hash, r->plans[row->plan].hash);
        }
        if (row->plan >= 0) {
            CHECK_NEAR(row->acc_algbw, row->nbytes / row->acc_us / 1e3, 1e-6 * row->acc_algbw);
            /* No acc plan can beat the topology's lower bound. */
            if (row->bound_ok)
                CHECK_MSG(row->bound.us <= row->acc_us * (1 + 1e-9),
                          "%s at %llu bytes: acc's %g us beats the bound %g us",
                          acc_coll_name(r->coll), (unsigned long long)row->nbytes, row->acc_us,
                          row->bound.us);
        }
        if (row->bound_ok)
            CHECK_NEAR(row->bound_fraction, row->bound.us / chosen, 1e-9);
    }
}

ACC_TEST(dgx_h100_allreduce_covers_1k_to_4g)
{
    acc_topo_t *t = load("dgx-h100");
    acc_select_result_t *r = build(t, ACC_COLL_ALLREDUCE, NULL);
    size_t i;

    CHECK_INT(r->nrows, 23); /* every power of two from 2^10 to 2^32 */
    for (i = 0; i < r->nrows; i++)
        CHECK_INT(r->rows[i].nbytes, 1ull << (10 + i));
    CHECK_INT(r->nranks, 8);
    CHECK(r->variants > 10);
    check_cover(r->table, 1024, 1ull << 32);
    check_rows(r);
    /* NCCL has a model for allreduce: every size is compared. */
    for (i = 0; i < r->nrows; i++)
        CHECK(r->rows[i].nccl_ok && r->rows[i].bound_ok);
    acc_select_result_destroy(r);
    acc_topo_destroy(t);
}

/* NCCL's own choice covers every size of the sweep, the sizes the table gives acc included, and
 * is the choice of NCCL's model at each size (what the tuner plugin serves). */
ACC_TEST(nccl_choice_at_every_size)
{
    acc_topo_t *t = load("dgx-h100");
    acc_select_result_t *r = build(t, ACC_COLL_ALLGATHER, NULL);
    char fp[ACC_SHA256_HEX_LEN + 1];
    size_t i, acc_sizes = 0;

    CHECK(r->nccl != NULL);
    CHECK_OK(acc_topo_fingerprint(t, fp));
    CHECK_STR(r->nccl->topo_fingerprint, fp);
    CHECK_INT(r->nccl->coll, ACC_COLL_ALLGATHER);
    CHECK_INT(r->nccl->entries[0].min_bytes, 1024);
    CHECK_INT(r->nccl->entries[r->nccl->n - 1].max_bytes, 1ull << 32);
    for (i = 0; i < r->nrows; i++) {
        const acc_select_row_t *row = &r->rows[i];
        const acc_select_nccl_entry_t *e = acc_select_nccl_lookup(r->nccl, row->nbytes);
        CHECK(e != NULL);
        CHECK_INT(e->algo, row->nccl.algo);
        CHECK_INT(e->proto, row->nccl.proto);
        CHECK_INT(e->channels, row->nccl.nchannels);
        CHECK(e->channels > 0);
        CHECK(e->source == ACC_SELECT_MODEL && e->measured_us < 0);
        acc_sizes += !row->use_nccl;
    }
    CHECK_MSG(acc_sizes > 0, "the table gives acc no size: the case would not show NCCL's choice "
                             "where acc runs");
    for (i = 1; i < r->nccl->n; i++) {
        const acc_select_nccl_entry_t *a = &r->nccl->entries[i - 1], *b = &r->nccl->entries[i];
        CHECK_INT(b->min_bytes, a->max_bytes + 1);
        CHECK(a->algo != b->algo || a->proto != b->proto || a->channels != b->channels);
    }
    acc_select_result_destroy(r);
    acc_topo_destroy(t);
}

/* The chosen plans are the ones the table names: verified, with the protocol their params
 * say, named by their hash (acc_plan_hash). */
ACC_TEST(plans_are_verified_and_hashed)
{
    acc_topo_t *t = load("dgx-h100");
    acc_select_result_t *r = build(t, ACC_COLL_REDUCE_SCATTER, NULL);
    char hash[ACC_SHA256_HEX_LEN + 1], proto[32];
    size_t i;

    for (i = 0; i < r->table->n; i++)
        CHECK(r->table->entries[i].use_nccl || strlen(r->table->entries[i].plan_hash) == 64);
    for (i = 0; i < r->nplans; i++) {
        const acc_select_plan_t *sp = &r->plans[i];
        CHECK_OK(acc_plan_verify(sp->plan));
        CHECK_INT(sp->plan->coll, ACC_COLL_REDUCE_SCATTER);
        snprintf(proto, sizeof(proto), "proto=%s", acc_proto_name(sp->plan->proto));
        CHECK_MSG(strstr(sp->params, proto) != NULL, "params '%s' lack '%s'", sp->params, proto);
        if (!sp->hash[0])
            continue; /* acc's best only where NCCL keeps the size: not hashed */
        CHECK_OK(acc_plan_hash(sp->plan, hash));
        CHECK_STR(sp->hash, hash);
    }
    acc_select_result_destroy(r);
    acc_topo_destroy(t);
}

/* The fastest of each generator's default and lanes line at a size, with every protocol acc
 * has a kernel for, by generating and simulating them directly: the builder's choice may only
 * be faster (it also tries chunk counts at the lanes that win). */
static double direct_best(const acc_topo_t *t, acc_coll_t coll, uint64_t nbytes)
{
    size_t count, i, k, j, npairs, nvar;
    const acc_algo_t *const *algos = acc_algo_list(&count);
    select_pair_t pairs[SELECT_PAIRS_MAX];
    acc_sim_t *sim = NULL;
    double best = INFINITY;

    CHECK_OK(acc_sim_create(t, &sim));
    for (i = 0; i < count; i++) {
        if (algos[i]->coll != coll)
            continue;
        npairs = select_pairs(t, algos[i], pairs);
        for (k = 0; k < npairs; k++) {
            acc_algo_args_t base, *vars = NULL;
            acc_plan_t *p = NULL;
            memset(&base, 0, sizeof(base));
            base.inner = pairs[k].inner;
            base.outer = pairs[k].outer;
            if (algos[i]->supports(t, &base) != ACC_OK)
                continue;
            CHECK_OK(acc_algo_generate(algos[i], t, &base, &p));
            CHECK_OK(select_lane_variants(t, algos[i], &base, p->params, select_lanes_cap(t), &vars,
                                          &nvar));
            CHECK(nvar >= 1);
            for (j = 0; j <= nvar; j++) {
                acc_proto_t proto;
                if (j > 0) {
                    acc_plan_destroy(p);
                    CHECK_OK(acc_algo_generate(algos[i], t, &vars[j - 1], &p));
                }
                for (proto = 0; proto < ACC_PROTO_COUNT; proto++) {
                    acc_sim_result_t res;
                    /* Only what acc has a kernel for is a candidate. */
                    if (acc_kernel_supports(p, proto) != ACC_OK)
                        continue;
                    p->proto = proto;
                    CHECK_OK(acc_sim_plan(sim, p, nbytes, ACC_DT_F32, &res));
                    if (res.time_us < best)
                        best = res.time_us;
                }
            }
            acc_plan_destroy(p);
            acc_mem_free(vars);
        }
    }
    acc_sim_destroy(sim);
    return best;
}

ACC_TEST(choice_is_the_fastest_candidate)
{
    static const uint64_t sizes[] = {8192, 4u << 20, 256u << 20};
    acc_topo_t *t = load("dgx-h100");
    acc_select_result_t *r = build(t, ACC_COLL_ALLREDUCE, NULL);
    acc_sim_t *sim = NULL;
    size_t i, k;

    CHECK_OK(acc_sim_create(t, &sim));
    for (k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
        double direct = direct_best(t, ACC_COLL_ALLREDUCE, sizes[k]);
        acc_sim_result_t res;
        for (i = 0; i < r->nrows && r->rows[i].nbytes != sizes[k]; i++)
            ;
        CHECK(i < r->nrows && r->rows[i].plan >= 0);
        /* The fastest, or the smaller size's plan within SELECT_KEEP of it. */
        CHECK(r->rows[i].acc_us <= direct * (1 + SELECT_KEEP) * (1 + 1e-12));
        /* The time reported is the chosen plan's, simulated again. */
        CHECK_OK(acc_sim_plan(sim, r->plans[r->rows[i].plan].plan, sizes[k], ACC_DT_F32, &res));
        CHECK_NEAR(r->rows[i].acc_us, res.time_us, 1e-9 * res.time_us);
    }
    acc_sim_destroy(sim);
    acc_select_result_destroy(r);
    acc_topo_destroy(t);
}

/* However many threads sweep, the table is the same: ties go to the earlier candidate. */
ACC_TEST(threads_change_nothing)
{
    acc_topo_t *t = load("dgx-h100");
    acc_select_build_opts_t opts;
    acc_select_result_t *a, *b;
    size_t i;

    acc_select_build_opts_init(&opts);
    opts.threads = 1;
    a = build(t, ACC_COLL_REDUCE, &opts);
    opts.threads = 4;
    b = build(t, ACC_COLL_REDUCE, &opts);
    for (i = 0; i < a->nrows; i++) {
        CHECK(a->rows[i].acc_us == b->rows[i].acc_us);
        CHECK_STR(a->plans[a->rows[i].plan].hash, b->plans[b->rows[i].plan].hash);
    }
    CHECK_INT(a->table->n, b->table->n);
    for (i = 0; i < a->table->n; i++)
        CHECK(acc_select_same_choice(&a->table->entries[i], &b->table->entries[i]));
    CHECK_INT(a->variants, b->variants);
    acc_select_result_destroy(a);
    acc_select_result_destroy(b);
    opts.threads = 17;
    CHECK_ERR(acc_select_builder_create(t, &opts, (acc_select_builder_t **)&a), ACC_ERR_INVALID);
    CHECK_MSG_HAS("threads 17");
    acc_topo_destroy(t);
}

/* Skipping a variant at sizes where its time at a smaller size already loses must not change
 * any choice: the same rows as simulating everything everywhere. */
ACC_TEST(pruning_changes_nothing)
{
    acc_topo_t *t = load("dgx-h100-2node");
    acc_select_build_opts_t opts;
    acc_select_result_t *a, *b;
    size_t i;

    acc_select_build_opts_init(&opts);
    opts.max_bytes = 1ull << 28; /* to 256 MiB: the exhaustive sweep is slow on two nodes */
    a = build(t, ACC_COLL_ALLGATHER, &opts);
    opts.exhaustive = 1;
    b = build(t, ACC_COLL_ALLGATHER, &opts);
    CHECK(b->simulations >= a->simulations);
    CHECK_INT(a->nrows, b->nrows);
    for (i = 0; i < a->nrows; i++) {
        CHECK_NEAR(a->rows[i].acc_us, b->rows[i].acc_us, 1e-9 * b->rows[i].acc_us);
        CHECK_INT(a->rows[i].use_nccl, b->rows[i].use_nccl);
    }
    CHECK_INT(a->table->n, b->table->n);
    for (i = 0; i < a->table->n; i++)
        CHECK(acc_select_same_choice(&a->table->entries[i], &b->table->entries[i]));
    check_cover(a->table, 1024, 1ull << 28);
    check_rows(a);
    acc_select_result_destroy(a);
    acc_select_result_destroy(b);
    acc_topo_destroy(t);
}

/* A cluster: hierarchical plans and NCCL's network algorithms meet; the table still covers
 * the sweep and every choice is consistent. */
ACC_TEST(cluster_tables_are_consistent)
{
    acc_topo_t *t = load("p4d-4node");
    acc_select_build_opts_t opts;
    acc_select_result_t *r;

    acc_select_build_opts_init(&opts);
    opts.max_bytes = 1ull << 28;
    r = build(t, ACC_COLL_REDUCE_SCATTER, &opts);
    CHECK_INT(r->nranks, 32);
    check_cover(r->table, 1024, 1ull << 28);
    check_rows(r);
    acc_select_result_destroy(r);
    acc_topo_destroy(t);
}

/* NCCL's model does not cover broadcast: acc's plans are the only candidates. */
ACC_TEST(broadcast_is_acc_only)
{
    acc_topo_t *t = load("dgx-h100");
    acc_select_result_t *r = build(t, ACC_COLL_BROADCAST, NULL);
    size_t i;

    CHECK(r->nccl == NULL); /* no NCCL choice to serve */
    for (i = 0; i < r->nrows; i++) {
        CHECK(!r->rows[i].nccl_ok && !r->rows[i].use_nccl);
        CHECK(r->rows[i].plan >= 0);
        CHECK(r->rows[i].speedup == 0);
    }
    check_cover(r->table, 1024, 1ull << 32);
    acc_select_result_destroy(r);
    acc_topo_destroy(t);
}

ACC_TEST(custom_sweep_and_bad_options)
{
    acc_topo_t *t = load("dgx-h100");
    acc_select_build_opts_t opts;
    acc_select_builder_t *b = NULL;
    acc_select_result_t *r = NULL;

    acc_select_build_opts_init(&opts);
    opts.min_bytes = 3000; /* not a power of two: the sweep starts there, then 4K, 8K, ... */
    opts.max_bytes = 1u << 20;
    CHECK_OK(acc_select_builder_create(t, &opts, &b));
    CHECK_OK(acc_select_build(b, ACC_COLL_ALLGATHER, &r));
    CHECK_INT(r->nrows, 10);
    CHECK_INT(r->rows[0].nbytes, 3000);
    CHECK_INT(r->rows[1].nbytes, 4096);
    check_cover(r->table, 3000, 1u << 20);
    acc_select_result_destroy(r);
    CHECK_ERR(acc_select_build(b, ACC_COLL_ALLTOALL, &r), ACC_ERR_UNSUPPORTED);
    CHECK_MSG_HAS("alltoall");
    CHECK(r == NULL);
    CHECK_ERR(acc_select_build(b, (acc_coll_t)42, &r), ACC_ERR_INVALID);
    acc_select_builder_destroy(b);

    opts.min_bytes = 1u << 20;
    opts.max_bytes = 1024;
    CHECK_ERR(acc_select_builder_create(t, &opts, &b), ACC_ERR_INVALID);
    CHECK_MSG_HAS("empty");
    CHECK(b == NULL);
    acc_topo_destroy(t);
}

/* acc_select_colls lists exactly the collectives that get a table: each of them builds on a
 * small machine, with a short sweep; every other one is refused. */
ACC_TEST(listed_collectives_are_the_ones_with_tables)
{
    acc_topo_t *t = load("gpus=4 nvlink=18");
    acc_select_build_opts_t opts;
    acc_select_builder_t *b = NULL;
    acc_select_result_t *r = NULL;
    size_t n, i;
    const acc_coll_t *colls = acc_select_colls(&n);
    int listed[ACC_COLL_COUNT] = {0}, c;

    acc_select_build_opts_init(&opts);
    opts.max_bytes = 1u << 16;
    CHECK_OK(acc_select_builder_create(t, &opts, &b));
    for (i = 0; i < n; i++) {
        CHECK(i == 0 || colls[i - 1] < colls[i]);
        listed[colls[i]] = 1;
    }
    for (c = 0; c < ACC_COLL_COUNT; c++) {
        if (listed[c]) {
            CHECK_OK(acc_select_build(b, (acc_coll_t)c, &r));
            CHECK(r->table->n >= 1);
        } else {
            CHECK_ERR(acc_select_build(b, (acc_coll_t)c, &r), ACC_ERR_UNSUPPORTED);
        }
        acc_select_result_destroy(r);
        r = NULL;
    }
    acc_select_builder_destroy(b);
    acc_topo_destroy(t);
}

/* More lanes are offered where there are links to spread them over. */
ACC_TEST(lane_cap_follows_the_links)
{
    acc_topo_t *h100 = load("dgx-h100"), *pcie = load("pcie-8gpu");
    CHECK_INT(select_lanes_cap(h100), 32);
    CHECK_INT(select_lanes_cap(pcie), 4);
    acc_topo_destroy(h100);
    acc_topo_destroy(pcie);
}

static const acc_select_row_t *row_at(const acc_select_result_t *r, uint64_t nbytes)
{
    size_t i;
    for (i = 0; i < r->nrows && r->rows[i].nbytes != nbytes; i++)
        ;
    CHECK(i < r->nrows);
    return &r->rows[i];
}

/* Measured times win over predictions: a plan measured far faster at 64 KiB than any
 * prediction takes that size, and the table records the measurement beside its model's time;
 * the plan the model chose there, measured far slower, gives way; sizes without measurements
 * stay as they were.  Measurements that cannot be used are refused. */
ACC_TEST(measured_times_are_preferred)
{
    acc_topo_t *t = load("dgx-h100");
    acc_select_build_opts_t opts;
    acc_select_result_t *model = build(t, ACC_COLL_ALLREDUCE, NULL), *r;
    const acc_select_row_t *at64 = row_at(model, 65536), *at1g = row_at(model, 1u << 30), *row;
    const acc_select_entry_t *e;
    acc_select_measured_t m[2];
    acc_select_builder_t *b = NULL;

    CHECK(at64->plan >= 0 && at1g->plan >= 0 && at64->plan != at1g->plan);
    CHECK(!at64->acc_measured);
    memset(m, 0, sizeof(m));
    m[0].coll = m[1].coll = ACC_COLL_ALLREDUCE;
    m[0].nbytes = m[1].nbytes = 65536;
    /* The large sizes' ring, a thousand times faster than its model says at 64 KiB; the small
     * sizes' choice, a thousand times slower. */
    CHECK_OK(acc_plan_hash(model->plans[at1g->plan].plan, m[0].plan_hash));
    CHECK_OK(acc_plan_hash(model->plans[at64->plan].plan, m[1].plan_hash));
    acc_select_build_opts_init(&opts);
    opts.measured = m;
    opts.nmeasured = 2;
    m[1].us = at64->acc_us * 1000;
    {
        acc_sim_t *sim = NULL;
        acc_sim_result_t res;
        CHECK_OK(acc_sim_create(t, &sim));
        CHECK_OK(acc_sim_plan(sim, model->plans[at1g->plan].plan, 65536, ACC_DT_F32, &res));
        m[0].us = res.time_us / 1000;
        acc_sim_destroy(sim);
    }
    r = build(t, ACC_COLL_ALLREDUCE, &opts);
    row = row_at(r, 65536);
    CHECK(row->acc_measured && !row->use_nccl);
    CHECK_NEAR(row->acc_us, m[0].us, 1e-9);
    CHECK(row->acc_predicted_us > row->acc_us);
    CHECK_STR(r->plans[row->plan].hash, m[0].plan_hash);
    e = acc_select_lookup(r->table, 65536);
    CHECK(e != NULL && e->source == ACC_SELECT_MEASURED);
    CHECK_NEAR(e->measured_us, m[0].us, 1e-9);
    CHECK_NEAR(e->predicted_us, row->acc_predicted_us, 1e-9 * row->acc_predicted_us);
    /* Elsewhere the model's choices stand. */
    CHECK(!row_at(r, 4096)->acc_measured);
    CHECK_STR(r->plans[row_at(r, 4096)->plan].hash, model->plans[row_at(model, 4096)->plan].hash);
    acc_select_result_destroy(r);

    /* A time of zero, or a hash that is none, is refused. */
    m[1].us = 0;
    CHECK_ERR(acc_select_builder_create(t, &opts, &b), ACC_ERR_INVALID);
    CHECK_MSG_HAS("measured[1]");
    m[1].us = 1;
    m[1].plan_hash[10] = '\0';
    CHECK_ERR(acc_select_builder_create(t, &opts, &b), ACC_ERR_INVALID);
    CHECK(b == NULL);
    acc_select_result_destroy(model);
    acc_topo_destroy(t);
}

/* Tied plans do not alternate: on a p4d, reduce_scatter's direct plans with 16 and 24 lanes are
 * within 0.1 % of each other from 2 MiB up, and the table flipped between them at every power
 * of two (ten ranges, the last one [4G, 4G]).  A size keeps the smaller size's plan within
 * 0.5 %; no range holds a single size. */
ACC_TEST(tied_plans_do_not_alternate)
{
    acc_topo_t *t = load("aws-p4d");
    acc_select_result_t *r = build(t, ACC_COLL_REDUCE_SCATTER, NULL);
    size_t i, n = r->table->n;

    CHECK_MSG(n <= 3, "%zu ranges", n);
    for (i = 0; i < n; i++) {
        const acc_select_entry_t *e = &r->table->entries[i];
        CHECK_MSG(e->min_bytes < e->max_bytes, "range [%llu, %llu] holds one size",
                  (unsigned long long)e->min_bytes, (unsigned long long)e->max_bytes);
    }
    acc_select_result_destroy(r);
    acc_topo_destroy(t);
}

/* The largest size does not make a range of its own.  On 8 nodes of 8 H100 allgather at 2 GiB
 * is acc's ring (1.02x NCCL) and at 4 GiB NCCL's by a tie; the last range used to be [4G, 4G],
 * a kernel for calls of exactly 4 GiB.  Now 4 GiB keeps the choice of 2 GiB. */
ACC_TEST(largest_size_is_not_a_range_of_its_own)
{
    acc_topo_t *t = load("nodes=8 gpus=8 nvlink=18 nic=8x400");
    acc_select_build_opts_t opts;
    acc_select_result_t *r;
    const acc_select_entry_t *last;

    acc_select_build_opts_init(&opts);
    opts.min_bytes = 512ull << 20;
    r = build(t, ACC_COLL_ALLGATHER, &opts);
    last = &r->table->entries[r->table->n - 1];
    CHECK_MSG(last->min_bytes < last->max_bytes, "the last range [%llu, %llu] holds one size",
              (unsigned long long)last->min_bytes, (unsigned long long)last->max_bytes);
    CHECK_INT((long long)last->max_bytes, 4LL << 30);
    /* The row at 4 GiB says what the table runs there. */
    CHECK_INT(r->rows[r->nrows - 1].use_nccl, last->use_nccl);
    acc_select_result_destroy(r);
    acc_topo_destroy(t);
}
