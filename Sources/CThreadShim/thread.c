#define _GNU_SOURCE
#include "trifactor_thread.h"
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <errno.h>

int trifactor_nice_current_thread(int increment) {
    pid_t tid = (pid_t)syscall(SYS_gettid);
    errno = 0;
    int current = getpriority(PRIO_PROCESS, (id_t)tid);
    if (current == -1 && errno != 0) return -1;
    return setpriority(PRIO_PROCESS, (id_t)tid, current + increment);
}

static _Thread_local int on_http_thread;

int trifactor_set_http_thread(int on) {
    int previous = on_http_thread;
    on_http_thread = on;
    return previous;
}

int trifactor_is_http_thread(void) { return on_http_thread; }
