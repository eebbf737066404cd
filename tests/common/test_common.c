/* Status strings, errors, settings, sizes, buffers, hashing and YAML helpers. */
#include "acc_test.h"
#include "acc_yaml.h"

#include <stdlib.h>

ACC_TEST(status_names_match_enum)
{
    CHECK_STR(acc_status_name(ACC_OK), "ACC_OK");
    CHECK_STR(acc_status_name(ACC_ERR_PARSE), "ACC_ERR_PARSE");
    CHECK_STR(acc_status_string(ACC_ERR_NOMEM), "out of memory");
    CHECK_STR(acc_status_name((acc_status_t)-1234), "ACC_UNKNOWN");
}

ACC_TEST(error_message_prefix)
{
    acc_status_t st = acc_error_set(ACC_ERR_PARSE, "line %d: bad", 7);
    CHECK_INT(st, ACC_ERR_PARSE);
    CHECK_STR(acc_error_message(), "line 7: bad");
    acc_error_prefix(st, "%s: ", "topo.xml");
    CHECK_STR(acc_error_message(), "topo.xml: line 7: bad");
}

/* A message reworded from the one before it (an argument that is acc_error_message() itself)
 * reads whole, not garbled by being written over while it is read. */
ACC_TEST(error_message_reworded_from_itself)
{
    acc_error_set(ACC_ERR_NO_DEVICE, "opening the CUDA driver failed (libcuda.so.1: not found)");
    acc_error_set(ACC_ERR_NO_DEVICE, "rank 0 has no usable GPU (%s); check the driver",
                  acc_error_message());
    CHECK_STR(acc_error_message(), "rank 0 has no usable GPU (opening the CUDA driver failed "
                                   "(libcuda.so.1: not found)); check the driver");
}

ACC_TEST(sizes_parse_and_reject)
{
    uint64_t v;
    CHECK_OK(acc_parse_size("4096", &v));
    CHECK_INT(v, 4096);
    CHECK_OK(acc_parse_size("25M", &v));
    CHECK_INT(v, 25ull << 20);
    CHECK_OK(acc_parse_size("1GiB", &v));
    CHECK_INT(v, 1ull << 30);
    CHECK(acc_parse_size("12Q", &v) != ACC_OK);
    CHECK(acc_parse_size("", &v) != ACC_OK);
    CHECK(acc_parse_size("-1", &v) != ACC_OK);
}

ACC_TEST(invalid_setting_names_variable)
{
    acc_log_level_t l;
    setenv("ACC_LOG_LEVEL", "loud", 1);
    CHECK_ERR(acc_setting_level(ACC_SETTING_LOG_LEVEL, &l), ACC_ERR_INVALID);
    CHECK_MSG_HAS("ACC_LOG_LEVEL='loud'");
    CHECK(acc_settings_validate() != ACC_OK);
    setenv("ACC_LOG_LEVEL", "debug", 1);
    CHECK_OK(acc_setting_level(ACC_SETTING_LOG_LEVEL, &l));
    CHECK_INT(l, ACC_LOG_DEBUG);
    unsetenv("ACC_LOG_LEVEL");
    CHECK_OK(acc_settings_validate());
}

ACC_TEST(log_subsystem_filter)
{
    FILE *f = tmpfile();
    char line[256] = "";
    setenv("ACC_LOG_LEVEL", "info", 1);
    setenv("ACC_LOG_SUBSYS", "^db", 1);
    acc_log_set_stream(f);
    ACC_INFO(DB, "hidden");
    ACC_INFO(TOPO, "shown %d", 1);
    ACC_ERROR(DB, "errors always shown");
    acc_log_set_stream(NULL);
    rewind(f);
    CHECK(fgets(line, sizeof(line), f) != NULL);
    CHECK_STR(line, "acc INFO topo: shown 1\n");
    CHECK(fgets(line, sizeof(line), f) != NULL);
    CHECK_STR(line, "acc ERROR db: errors always shown\n");
    CHECK(fgets(line, sizeof(line), f) == NULL);
    fclose(f);
}

ACC_TEST(sha256_known_vector)
{
    char hex[ACC_SHA256_HEX_LEN + 1];
    acc_sha256_t *h;
    uint8_t d[ACC_SHA256_LEN];
    char hex2[ACC_SHA256_HEX_LEN + 1];

    CHECK_OK(acc_sha256_hex("abc", 3, hex));
    CHECK_STR(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    CHECK_OK(acc_sha256_create(&h));
    acc_sha256_update(h, "a", 1);
    acc_sha256_update(h, "bc", 2);
    CHECK_OK(acc_sha256_final(h, d));
    acc_hex_encode(d, sizeof(d), hex2);
    CHECK_STR(hex2, hex);
    acc_sha256_destroy(h);
    acc_sha256_destroy(NULL);
}

ACC_TEST(buffer_grows_and_takes)
{
    acc_buf_t b;
    char *s;
    int i;
    acc_buf_init(&b);
    for (i = 0; i < 1000; i++)
        acc_buf_printf(&b, "%d,", i);
    CHECK_OK(acc_buf_status(&b));
    CHECK(b.len > 3000);
    s = acc_buf_take(&b);
    CHECK(strncmp(s, "0,1,2,", 6) == 0);
    acc_mem_free(s);
    CHECK(b.data == NULL);
}

ACC_TEST(file_write_is_atomic_and_read_back)
{
    const char *p = acc_test_tmp("common_file.txt");
    char *text;
    size_t n;
    CHECK_OK(acc_write_file(p, "hello\n", 6));
    CHECK_OK(acc_read_file(p, &text, &n));
    CHECK_INT(n, 6);
    CHECK_STR(text, "hello\n");
    acc_mem_free(text);
    CHECK_ERR(acc_read_file(acc_test_tmp("does/not/exist"), &text, &n), ACC_ERR_NOT_FOUND);
    CHECK_MSG_HAS("does/not/exist");
}

ACC_TEST(yaml_typed_lookups_name_line)
{
    const char *text = "version: 1\nname: dgx\nnodes: two\nlist: [1, 2.5]\nflag: yes\n";
    acc_yaml_doc_t *doc;
    acc_yaml_node_t *root;
    int64_t v;
    double d;
    const char *s;
    int flag;
    static const char *const keys[] = {"version", "name", "nodes", "list", "flag", NULL};
    static const char *const fewer[] = {"version", NULL};

    CHECK_OK(acc_yaml_parse(text, strlen(text), "t.yaml", &doc));
    root = acc_yaml_root(doc);
    CHECK_OK(acc_yaml_get_int(doc, root, "version", 1, &v));
    CHECK_INT(v, 1);
    CHECK_OK(acc_yaml_get_str(doc, root, "name", 1, &s));
    CHECK_STR(s, "dgx");
    CHECK_ERR(acc_yaml_get_int(doc, root, "nodes", 1, &v), ACC_ERR_PARSE);
    CHECK_MSG_HAS("t.yaml:3:");
    CHECK_MSG_HAS("'nodes'");
    CHECK_ERR(acc_yaml_get_int(doc, root, "missing", 1, &v), ACC_ERR_PARSE);
    CHECK_MSG_HAS("missing required key 'missing'");
    CHECK_OK(acc_yaml_get_int(doc, root, "missing", 0, &v));
    CHECK_INT(acc_yaml_seq_len(acc_yaml_get(doc, root, "list")), 2);
    CHECK_OK(acc_yaml_node_double(doc, acc_yaml_seq_at(doc, acc_yaml_get(doc, root, "list"), 1),
                                  "list", &d));
    CHECK_NEAR(d, 2.5, 0);
    CHECK_OK(acc_yaml_get_bool(doc, root, "flag", 1, &flag));
    CHECK_INT(flag, 1);
    CHECK_OK(acc_yaml_check_keys(doc, root, keys, "the test"));
    CHECK_ERR(acc_yaml_check_keys(doc, root, fewer, "the test"), ACC_ERR_PARSE);
    CHECK_MSG_HAS("unknown key 'name'");
    acc_yaml_destroy(doc);
}

ACC_TEST(yaml_syntax_error_has_position)
{
    const char *text = "a: [1, 2\nb: 3\n";
    acc_yaml_doc_t *doc = NULL;
    CHECK_ERR(acc_yaml_parse(text, strlen(text), "bad.yaml", &doc), ACC_ERR_PARSE);
    CHECK_MSG_HAS("bad.yaml:");
    CHECK(doc == NULL);
    CHECK_ERR(acc_yaml_parse("", 0, "empty.yaml", &doc), ACC_ERR_PARSE);
}

ACC_TEST(yaml_scalar_quoting_round_trips)
{
    static const char *const samples[] = {"plain", "yes", "12", "a: b", "#x", "", "tab\there",
                                          "quote\"d", "-dash", "1e5", "ok-name_1"};
    size_t i;
    for (i = 0; i < sizeof(samples) / sizeof(samples[0]); i++) {
        acc_buf_t b;
        acc_yaml_doc_t *doc;
        const char *back;
        acc_buf_init(&b);
        acc_buf_puts(&b, "k: ");
        acc_yaml_put_scalar(&b, samples[i]);
        acc_buf_puts(&b, "\n");
        CHECK_OK(acc_yaml_parse(b.data, b.len, "q.yaml", &doc));
        CHECK_OK(acc_yaml_get_str(doc, acc_yaml_root(doc), "k", 1, &back));
        CHECK_STR(back, samples[i]);
        acc_yaml_destroy(doc);
        acc_buf_free(&b);
    }
}

ACC_TEST(yaml_double_shortest_round_trip)
{
    static const double values[] = {0.1, 20.6, 1.0 / 3.0, 370.8, 1e-9, 123456789.0};
    size_t i;
    for (i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
        acc_buf_t b;
        double back;
        acc_buf_init(&b);
        acc_yaml_put_double(&b, values[i]);
        CHECK_OK(acc_parse_double(b.data, &back));
        CHECK(back == values[i]);
        acc_buf_free(&b);
    }
}

/* Names from a topology file reach the XML and JSON acc writes: they must not break either. */
ACC_TEST(strings_escape_for_xml_and_json)
{
    acc_buf_t b;
    acc_buf_init(&b);
    acc_buf_put_xml(&b, "a<b & \"c\">\td\x01\x1f\ne");
    CHECK_STR(b.data, "a&lt;b &amp; &quot;c&quot;&gt;\td\ne");
    acc_buf_reset(&b);
    acc_buf_put_json(&b, "say \"hi\"\\\n\x01");
    CHECK_STR(b.data, "\"say \\\"hi\\\"\\\\\\u000a\\u0001\"");
    acc_buf_reset(&b);
    acc_buf_put_json(&b, "");
    CHECK_STR(b.data, "\"\"");
    CHECK_OK(acc_buf_status(&b));
    acc_buf_free(&b);
}
