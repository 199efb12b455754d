/*
 * trifactor_phone.h - a small C face for libphonenumber (which is C++).
 *
 * Swift cannot call C++ libraries without C++ interop, so this header exposes
 * the one operation Trifactor needs - parse, validate and classify a number -
 * as plain C. Nothing C++ crosses this boundary: every exception is caught in
 * phone.cpp and reported as TRIFACTOR_PHONE_INTERNAL_ERROR.
 *
 * Thread safety: libphonenumber's PhoneNumberUtil is a thread-safe singleton;
 * trifactor_phone_parse may be called from any number of threads at once.
 */
#ifndef TRIFACTOR_PHONE_H
#define TRIFACTOR_PHONE_H

#ifdef __cplusplus
extern "C" {
#endif

/* Why parsing failed; mirrors PhoneNumberUtil::ErrorType, with both "too
 * short" errors folded into one, plus an error for anything unexpected. */
enum trifactor_phone_status {
    TRIFACTOR_PHONE_OK = 0,
    TRIFACTOR_PHONE_INVALID_COUNTRY_CODE = 1,
    TRIFACTOR_PHONE_NOT_A_NUMBER = 2,
    TRIFACTOR_PHONE_TOO_SHORT = 3,
    TRIFACTOR_PHONE_TOO_LONG = 4,
    /* A NULL argument, an exception inside libphonenumber, or a result that
     * did not fit its buffer. Not the caller's input at fault. */
    TRIFACTOR_PHONE_INTERNAL_ERROR = 5
};

/* Mirrors PhoneNumberUtil::PhoneNumberType (mapped case by case in phone.cpp,
 * so the values need not match libphonenumber's). */
enum trifactor_phone_type {
    TRIFACTOR_PHONE_TYPE_FIXED_LINE = 0,
    TRIFACTOR_PHONE_TYPE_MOBILE = 1,
    TRIFACTOR_PHONE_TYPE_FIXED_LINE_OR_MOBILE = 2,
    TRIFACTOR_PHONE_TYPE_TOLL_FREE = 3,
    TRIFACTOR_PHONE_TYPE_PREMIUM_RATE = 4,
    TRIFACTOR_PHONE_TYPE_SHARED_COST = 5,
    TRIFACTOR_PHONE_TYPE_VOIP = 6,
    TRIFACTOR_PHONE_TYPE_PERSONAL_NUMBER = 7,
    TRIFACTOR_PHONE_TYPE_PAGER = 8,
    TRIFACTOR_PHONE_TYPE_UAN = 9,
    TRIFACTOR_PHONE_TYPE_VOICEMAIL = 10,
    TRIFACTOR_PHONE_TYPE_UNKNOWN = 11
};

/* E.164 is at most 15 digits after the "+". */
#define TRIFACTOR_PHONE_E164_CAPACITY 32
/* "US", "001" (non-geographic) or "ZZ" (unknown). */
#define TRIFACTOR_PHONE_REGION_CAPACITY 8

/* What trifactor_phone_parse learned about a number. Only meaningful when it
 * returned TRIFACTOR_PHONE_OK; zeroed otherwise. */
struct trifactor_phone_result {
    /* NUL-terminated, e.g. "+14155550100". */
    char e164[TRIFACTOR_PHONE_E164_CAPACITY];
    /* e.g. 1 or 44. */
    int country_calling_code;
    /* NUL-terminated: "US", "001" for non-geographic numbers, "ZZ" unknown. */
    char region_code[TRIFACTOR_PHONE_REGION_CAPACITY];
    /* TRIFACTOR_PHONE_TYPE_UNKNOWN for numbers that are not valid. */
    enum trifactor_phone_type type;
    /* 1 if PhoneNumberUtil::IsValidNumber holds, else 0. */
    int is_valid;
};

/*
 * Parses `number` (NUL-terminated UTF-8) and fills `*out`.
 *
 * `default_region` is a two-letter region ("US") used when the number has no
 * leading "+", or NULL for none (numbers must then start with "+").
 * A number that parses but is not valid still returns TRIFACTOR_PHONE_OK,
 * with `out->is_valid` set to 0.
 *
 * Returns TRIFACTOR_PHONE_OK, a parse error, or TRIFACTOR_PHONE_INTERNAL_ERROR
 * (also for NULL `number` or `out`). Never throws.
 */
enum trifactor_phone_status trifactor_phone_parse(const char *number,
                                                  const char *default_region,
                                                  struct trifactor_phone_result *out);

#ifdef __cplusplus
}
#endif

#endif /* TRIFACTOR_PHONE_H */
