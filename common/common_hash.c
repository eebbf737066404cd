/* SHA-256 through libcrypto's EVP interface, and FNV-1a for in-memory hash tables. */
#include "acc_common.h"

#include <openssl/err.h>
#include <openssl/evp.h>

struct acc_sha256 {
    EVP_MD_CTX *ctx;
    int failed;
};

static acc_status_t crypto_error(const char *what)
{
    unsigned long e = ERR_get_error();
    char text[256];
    ERR_error_string_n(e, text, sizeof(text));
    return acc_error_set(ACC_ERR_CRYPTO, "%s failed: %s (libcrypto error %lu)", what, text, e);
}

acc_status_t acc_sha256_create(acc_sha256_t **out)
{
    acc_sha256_t *h = acc_mem_calloc(1, sizeof(*h));
    if (!h)
        return acc_error_set(ACC_ERR_NOMEM, "out of memory creating a SHA-256 hasher");
    h->ctx = EVP_MD_CTX_new();
    if (!h->ctx || EVP_DigestInit_ex(h->ctx, EVP_sha256(), NULL) != 1) {
        acc_status_t st = crypto_error("SHA-256 initialisation");
        acc_sha256_destroy(h);
        return st;
    }
    *out = h;
    return ACC_OK;
}

void acc_sha256_update(acc_sha256_t *h, const void *data, size_t len)
{
    if (!h->failed && len && EVP_DigestUpdate(h->ctx, data, len) != 1)
        h->failed = 1;
}

acc_status_t acc_sha256_final(acc_sha256_t *h, uint8_t out[ACC_SHA256_LEN])
{
    unsigned int n = 0;
    if (h->failed || EVP_DigestFinal_ex(h->ctx, out, &n) != 1 || n != ACC_SHA256_LEN)
        return crypto_error("SHA-256 digest");
    return ACC_OK;
}

void acc_sha256_reset(acc_sha256_t *h)
{
    h->failed = EVP_DigestInit_ex(h->ctx, EVP_sha256(), NULL) != 1;
}

void acc_sha256_destroy(acc_sha256_t *h)
{
    if (!h)
        return;
    EVP_MD_CTX_free(h->ctx);
    acc_mem_free(h);
}

void acc_hex_encode(const uint8_t *bytes, size_t n, char *out)
{
    static const char digits[] = "0123456789abcdef";
    size_t i;
    for (i = 0; i < n; i++) {
        out[2 * i] = digits[bytes[i] >> 4];
        out[2 * i + 1] = digits[bytes[i] & 15];
    }
    out[2 * n] = '\0';
}

acc_status_t acc_sha256_hex(const void *data, size_t len, char out[ACC_SHA256_HEX_LEN + 1])
{
    uint8_t digest[ACC_SHA256_LEN];
    unsigned int n = 0;

    if (EVP_Digest(data, len, digest, &n, EVP_sha256(), NULL) != 1 || n != ACC_SHA256_LEN)
        return crypto_error("SHA-256 digest");
    acc_hex_encode(digest, ACC_SHA256_LEN, out);
    return ACC_OK;
}

uint64_t acc_fnv1a64(const void *data, size_t len)
{
    const unsigned char *p = data;
    uint64_t h = 1469598103934665603ull;
    size_t i;
    for (i = 0; i < len; i++) {
        h ^= p[i];
        h *= 1099511628211ull;
    }
    return h;
}
