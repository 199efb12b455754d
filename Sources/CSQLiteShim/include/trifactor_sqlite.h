#ifndef TRIFACTOR_SQLITE_H
#define TRIFACTOR_SQLITE_H
#include <sqlite3.h>

/* sqlite3_bind_text with SQLITE_TRANSIENT (a cast macro Swift cannot import):
   SQLite copies the bytes before returning, so Swift buffers may be freed afterwards. */
int trifactor_sqlite_bind_text(sqlite3_stmt *stmt, int index, const char *text, int length);
#endif
