#ifndef TRIFACTOR_PHONE_H
#define TRIFACTOR_PHONE_H
#ifdef __cplusplus
extern "C" {
#endif
/* Placeholder: the phone-number shim is being written. */
int trifactor_phone_placeholder(void);
#ifdef __cplusplus
}
#endif
#endif
