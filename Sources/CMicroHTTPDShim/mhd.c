#include "trifactor_mhd.h"
#include <netinet/in.h>

struct MHD_Daemon *trifactor_mhd_start(const struct trifactor_mhd_options *o, enum trifactor_mhd_start_result *result) {
    unsigned int flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME;
    if (o->address->sa_family == AF_INET6) flags |= MHD_USE_IPv6;
    int tls = o->tls_cert_pem != NULL && o->tls_key_pem != NULL;
    if (tls) {
        if (MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES) {
            *result = TRIFACTOR_MHD_NO_TLS;
            return NULL;
        }
        flags |= MHD_USE_TLS;
    }
    struct MHD_OptionItem tls_options[] = {
        { tls ? MHD_OPTION_HTTPS_MEM_CERT : MHD_OPTION_END, 0, (void *)o->tls_cert_pem },
        { MHD_OPTION_HTTPS_MEM_KEY, 0, (void *)o->tls_key_pem },
        { MHD_OPTION_END, 0, NULL },
    };
    /* The port argument is ignored when MHD_OPTION_SOCK_ADDR is given. */
    struct MHD_Daemon *daemon = MHD_start_daemon(
        flags, 0, NULL, NULL,
        o->access_handler, o->access_handler_cls,
        MHD_OPTION_SOCK_ADDR, o->address,
        MHD_OPTION_THREAD_POOL_SIZE, o->thread_pool_size,
        MHD_OPTION_CONNECTION_LIMIT, o->connection_limit,
        MHD_OPTION_PER_IP_CONNECTION_LIMIT, o->per_ip_connection_limit,
        MHD_OPTION_CONNECTION_TIMEOUT, o->connection_timeout_seconds,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, o->connection_memory_limit,
        MHD_OPTION_NOTIFY_COMPLETED, o->completed_handler, o->completed_handler_cls,
        MHD_OPTION_URI_LOG_CALLBACK, o->uri_log_handler, o->uri_log_handler_cls,
        MHD_OPTION_NOTIFY_CONNECTION, o->notify_connection_handler, o->notify_connection_handler_cls,
        MHD_OPTION_ARRAY, tls_options,
        MHD_OPTION_END);
    *result = daemon == NULL ? TRIFACTOR_MHD_NOT_STARTED : TRIFACTOR_MHD_STARTED;
    return daemon;
}

uint16_t trifactor_mhd_bound_port(struct MHD_Daemon *daemon) {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
    return info == NULL ? 0 : info->port;
}

void *trifactor_mhd_socket_context(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return info == NULL ? NULL : info->socket_context;
}

int trifactor_mhd_connection_fd(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    return info == NULL ? -1 : info->connect_fd;
}

const struct sockaddr *trifactor_mhd_client_address(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    return info == NULL ? NULL : info->client_addr;
}

