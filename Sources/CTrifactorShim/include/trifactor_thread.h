#ifndef TRIFACTOR_THREAD_H
#define TRIFACTOR_THREAD_H
/* Adds `increment` to the nice value of the calling thread only (Linux keeps
   a nice value per thread); returns 0 on success, -1 with errno set. */
int trifactor_nice_current_thread(int increment);
#endif
