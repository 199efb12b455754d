#include "trifactor_mhd.h"
#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>

struct MHD_Daemon *trifactor_mhd_start(const struct trifactor_mhd_options *o, const char **error_out) {
    struct sockaddr_storage storage;
    memset(&storage, 0, sizeof storage);
    unsigned int ipv6 = 0;
    struct sockaddr_in *v4 = (struct sockaddr_in *)&storage;
    struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)&storage;
    if (inet_pton(AF_INET, o->bind_address, &v4->sin_addr) == 1) {
        v4->sin_family = AF_INET;
        v4->sin_port = htons(o->port);
    } else if (inet_pton(AF_INET6, o->bind_address, &v6->sin6_addr) == 1) {
        v6->sin6_family = AF_INET6;
        v6->sin6_port = htons(o->port);
        ipv6 = MHD_USE_IPv6;
    } else {
        *error_out = "the listen address is not an IPv4 or IPv6 literal";
        return NULL;
    }
    unsigned int flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME | ipv6;
    int tls = o->tls_cert_pem != NULL && o->tls_key_pem != NULL;
    if (tls) {
        if (MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES) {
            *error_out = "this libmicrohttpd was built without TLS support";
            return NULL;
        }
        flags |= MHD_USE_TLS;
    }
    struct MHD_OptionItem tls_options[] = {
        { tls ? MHD_OPTION_HTTPS_MEM_CERT : MHD_OPTION_END, 0, (void *)o->tls_cert_pem },
        { MHD_OPTION_HTTPS_MEM_KEY, 0, (void *)o->tls_key_pem },
        { MHD_OPTION_END, 0, NULL },
    };
    struct MHD_Daemon *daemon = MHD_start_daemon(
        flags, o->port, NULL, NULL,
        o->access_handler, o->access_handler_cls,
        MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&storage,
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
    if (daemon == NULL) {
        *error_out = tls ? "the HTTPS listener could not start (address in use, or the certificate or key is not valid PEM)"
                         : "the HTTP listener could not start (address in use or not available)";
    }
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

int trifactor_mhd_client_address(struct MHD_Connection *connection, char *buffer, size_t length) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    if (info == NULL || info->client_addr == NULL) return -1;
    const struct sockaddr *address = info->client_addr;
    if (address->sa_family == AF_INET) {
        const struct sockaddr_in *v4 = (const struct sockaddr_in *)address;
        return inet_ntop(AF_INET, &v4->sin_addr, buffer, (socklen_t)length) == NULL ? -1 : 0;
    }
    if (address->sa_family == AF_INET6) {
        const struct sockaddr_in6 *v6 = (const struct sockaddr_in6 *)address;
        return inet_ntop(AF_INET6, &v6->sin6_addr, buffer, (socklen_t)length) == NULL ? -1 : 0;
    }
    return -1;
}
