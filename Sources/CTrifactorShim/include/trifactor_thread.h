#ifndef TRIFACTOR_THREAD_H
#define TRIFACTOR_THREAD_H
/* Adds `increment` to the nice value of the calling thread only (Linux keeps
   a nice value per thread); returns 0 on success, -1 with errno set. */
int trifactor_nice_current_thread(int increment);

/* Marks the calling thread as one of libmicrohttpd's (a thread-local flag,
   never cleared: those threads run nothing else). */
void trifactor_mark_http_thread(void);

/* 1 on a thread marked by trifactor_mark_http_thread, else 0. */
int trifactor_is_http_thread(void);
#endif
