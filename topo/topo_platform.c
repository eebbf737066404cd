/* Shipped platform descriptions: where they live and which there are. */
#include "internal.h"

#include <ctype.h>
#include <string.h>

/* ACC_PLATFORM_DIR wins; then the installed copy; then the source tree this build came from. */
const char *acc_topo_platform_dir(void)
{
    return acc_data_dir(ACC_SETTING_PLATFORM_DIR, "platforms", ACC_SOURCE_PLATFORM_DIR);
}

acc_status_t acc_topo_platform_list(char ***names, size_t *count)
{
    return acc_yaml_names(acc_topo_platform_dir(), "platform", ACC_SETTING_PLATFORM_DIR, names,
                          count);
}

/* Edits (insert, delete, replace, case ignored) that turn a into b, up to a cap: names of a
 * platform directory are short, so two rows suffice. */
static size_t edits(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b), i, j;
    size_t row[64], prev[64];

    if (la >= 63 || lb >= 63)
        return (size_t)-1;
    for (j = 0; j <= lb; j++)
        prev[j] = j;
    for (i = 1; i <= la; i++) {
        row[0] = i;
        for (j = 1; j <= lb; j++) {
            size_t cost = tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]);
            size_t best = prev[j - 1] + cost;
            if (prev[j] + 1 < best)
                best = prev[j] + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
        }
        memcpy(prev, row, (lb + 1) * sizeof(size_t));
    }
    return prev[lb];
}

acc_status_t topo_platform_suggest(const char *name, acc_buf_t *out)
{
    char **names;
    size_t n, i, d, found = 0;

    if (acc_topo_platform_list(&names, &n) != ACC_OK)
        return ACC_OK; /* no suggestion; the caller's message stands */
    /* Only the nearest: the same name in other case, else those one edit away, else two. */
    for (d = 0; d <= 2 && !found; d++)
        for (i = 0; i < n; i++)
            if (edits(name, names[i]) == d && found < 3)
                acc_buf_printf(out, "%s%s", found++ ? " or " : "", names[i]);
    acc_strv_free(names, n);
    return acc_buf_status(out);
}
