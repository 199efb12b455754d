#ifndef CCRACK_SHIM_H
#define CCRACK_SHIM_H
// libcrack2 (Debian's libcrack2-dev): the dictionary and its lookups. crack.h uses size_t without defining it.
#include <stddef.h>
#include <crack.h>
#include <packer.h>
#endif
