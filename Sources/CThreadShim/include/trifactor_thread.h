#ifndef TRIFACTOR_THREAD_H
#define TRIFACTOR_THREAD_H
/* Adds `increment` to the nice value of the calling thread only (Linux keeps
   a nice value per thread); returns 0 on success, -1 with errno set. */
int trifactor_nice_current_thread(int increment);

/* Sets the calling thread's thread-local "HTTP thread" flag (set on
   libmicrohttpd's threads, and around in-process requests); returns the
   previous value. */
int trifactor_set_http_thread(int on);

/* The flag set by trifactor_set_http_thread (0 when never set). */
int trifactor_is_http_thread(void);
#endif
