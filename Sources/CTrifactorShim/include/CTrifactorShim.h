#ifndef CTRIFACTORSHIM_H
#define CTRIFACTORSHIM_H
/* Umbrella header of our small C target: one header per C library we wrap. */
#include "trifactor_mhd.h"
#include "trifactor_openssl.h"
#include "trifactor_sqlite.h"
#include "trifactor_thread.h"
#endif
