/* Shipped platform descriptions: where they live and which there are. */
#include "internal.h"

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
