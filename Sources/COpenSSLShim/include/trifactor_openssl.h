#ifndef TRIFACTOR_OPENSSL_H
#define TRIFACTOR_OPENSSL_H
#include <stddef.h>
#include <openssl/evp.h>

/* EVP_PKEY_fromdata takes OSSL_PARAM arrays that point at their key names and
   values until the call returns; Swift's bridged strings do not live that
   long, so the arrays are built here. Each returns a new key or NULL (the
   reason is on OpenSSL's error queue). */

/* An EC public key on the named `group` from its encoded `point`. */
EVP_PKEY *trifactor_pkey_ec_public(const char *group, const unsigned char *point, size_t length);

/* An RSA public key from its big-endian modulus and exponent. */
EVP_PKEY *trifactor_pkey_rsa_public(const unsigned char *modulus, size_t modulus_length,
                                    const unsigned char *exponent, size_t exponent_length);
#endif
