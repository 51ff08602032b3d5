/*
 * tvmrt: status messages. Everything else of the runtime is in tvmrt.h as
 * static inline functions so that kernels inline it.
 */
#include "tvmrt.h"

const char *tvmrt_status_message(int status)
{
#ifdef TVMRT_NO_MESSAGES
    (void)status;
    return "";
#else
    switch (status) {
    case TVMRT_OK:
        return "ok";
    case TVMRT_ERR_NULL_INPUT:
        return "an input pointer is NULL";
    case TVMRT_ERR_NULL_OUTPUT:
        return "an output pointer is NULL";
    case TVMRT_ERR_MISALIGNED:
        return "workspace is not aligned to TVMRT_WORKSPACE_ALIGN bytes";
    case TVMRT_ERR_INDEX:
        return "a data-dependent index is out of range";
    default:
        return "unknown status";
    }
#endif
}
