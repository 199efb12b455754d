#ifndef TRIFACTOR_CURL_H
#define TRIFACTOR_CURL_H
#include <curl/curl.h>

/* curl_easy_setopt is variadic, so Swift cannot call it: one typed entry
   point per kind of option value, and nothing else. */
CURLcode trifactor_curl_set_string(CURL *handle, CURLoption option, const char *value);
CURLcode trifactor_curl_set_long(CURL *handle, CURLoption option, long value);
CURLcode trifactor_curl_set_pointer(CURL *handle, CURLoption option, void *value);
CURLcode trifactor_curl_set_read_function(CURL *handle, size_t (*function)(char *, size_t, size_t, void *));
CURLcode trifactor_curl_set_write_function(CURL *handle, size_t (*function)(char *, size_t, size_t, void *));
CURLcode trifactor_curl_set_size(CURL *handle, CURLoption option, curl_off_t value);
/* curl_easy_getinfo is variadic too. */
CURLcode trifactor_curl_info_long(CURL *handle, CURLINFO info, long *value);
CURLcode trifactor_curl_info_pointer(CURL *handle, CURLINFO info, void **value);
#endif
