#ifndef TRIFACTOR_MHD_H
#define TRIFACTOR_MHD_H
#include <sys/types.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <stdint.h>
#include <stdarg.h>
#include <microhttpd.h>

/* Options for trifactor_mhd_start: the fixed-argument form of the variadic
   MHD_start_daemon that Swift cannot call. */
struct trifactor_mhd_options {
    const struct sockaddr *address; /* an AF_INET or AF_INET6 address and port (0 picks a free port) */
    unsigned int thread_pool_size; /* internal epoll threads */
    unsigned int connection_limit;
    unsigned int per_ip_connection_limit; /* 0: no limit per client address */
    unsigned int connection_timeout_seconds;
    size_t connection_memory_limit;
    MHD_AccessHandlerCallback access_handler;
    void *access_handler_cls;
    MHD_RequestCompletedCallback completed_handler;
    void *completed_handler_cls;
    /* Called with the raw request target once the request line is read; its
       result becomes the request's *con_cls. */
    void *(*uri_log_handler)(void *cls, const char *uri, struct MHD_Connection *connection);
    void *uri_log_handler_cls;
    /* Called when a connection opens and when it closes (before its socket is closed). */
    MHD_NotifyConnectionCallback notify_connection_handler;
    void *notify_connection_handler_cls;
    const char *tls_cert_pem;      /* PEM certificate chain, or NULL for plain HTTP */
    const char *tls_key_pem;       /* PEM private key, or NULL */
};

enum trifactor_mhd_start_result {
    TRIFACTOR_MHD_STARTED = 0,
    TRIFACTOR_MHD_NO_TLS = 1,      /* TLS asked for, libmicrohttpd built without it */
    TRIFACTOR_MHD_NOT_STARTED = 2, /* MHD_start_daemon returned NULL (bind failed, bad PEM) */
};

/* Starts a daemon with an internal epoll thread pool and suspend/resume,
   serving TLS (GnuTLS inside libmicrohttpd) when a certificate and key are given.
   Returns NULL on failure, and says why in *result. */
struct MHD_Daemon *trifactor_mhd_start(const struct trifactor_mhd_options *options, enum trifactor_mhd_start_result *result);

/* The port the daemon listens on (useful after asking for port 0); 0 if unknown. */
uint16_t trifactor_mhd_bound_port(struct MHD_Daemon *daemon);

/* The socket context set in the connection notification callback, or NULL. */
void *trifactor_mhd_socket_context(struct MHD_Connection *connection);

/* The connection's socket, or -1. */
int trifactor_mhd_connection_fd(struct MHD_Connection *connection);

/* The client's socket address (owned by libmicrohttpd), or NULL. */
const struct sockaddr *trifactor_mhd_client_address(struct MHD_Connection *connection);
#endif
