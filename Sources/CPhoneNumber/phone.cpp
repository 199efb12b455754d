// phone.cpp - the C++ side of trifactor_phone.h: libphonenumber behind C.
//
// Every entry point catches every exception: nothing may unwind into Swift.

#include "trifactor_phone.h"

#include <cstring>
#include <string>

#include <phonenumbers/phonenumber.pb.h>
#include <phonenumbers/phonenumberutil.h>

namespace {

using i18n::phonenumbers::PhoneNumber;
using i18n::phonenumbers::PhoneNumberUtil;

// Maps libphonenumber's parse error to ours.
trifactor_phone_status status_for(PhoneNumberUtil::ErrorType error) {
    switch (error) {
    case PhoneNumberUtil::NO_PARSING_ERROR: return TRIFACTOR_PHONE_OK;
    case PhoneNumberUtil::INVALID_COUNTRY_CODE_ERROR: return TRIFACTOR_PHONE_INVALID_COUNTRY_CODE;
    case PhoneNumberUtil::NOT_A_NUMBER: return TRIFACTOR_PHONE_NOT_A_NUMBER;
    case PhoneNumberUtil::TOO_SHORT_AFTER_IDD: return TRIFACTOR_PHONE_TOO_SHORT;
    case PhoneNumberUtil::TOO_SHORT_NSN: return TRIFACTOR_PHONE_TOO_SHORT;
    case PhoneNumberUtil::TOO_LONG_NSN: return TRIFACTOR_PHONE_TOO_LONG;
    }
    return TRIFACTOR_PHONE_INTERNAL_ERROR;
}

// Maps libphonenumber's number type to ours.
trifactor_phone_type type_for(PhoneNumberUtil::PhoneNumberType type) {
    switch (type) {
    case PhoneNumberUtil::FIXED_LINE: return TRIFACTOR_PHONE_TYPE_FIXED_LINE;
    case PhoneNumberUtil::MOBILE: return TRIFACTOR_PHONE_TYPE_MOBILE;
    case PhoneNumberUtil::FIXED_LINE_OR_MOBILE: return TRIFACTOR_PHONE_TYPE_FIXED_LINE_OR_MOBILE;
    case PhoneNumberUtil::TOLL_FREE: return TRIFACTOR_PHONE_TYPE_TOLL_FREE;
    case PhoneNumberUtil::PREMIUM_RATE: return TRIFACTOR_PHONE_TYPE_PREMIUM_RATE;
    case PhoneNumberUtil::SHARED_COST: return TRIFACTOR_PHONE_TYPE_SHARED_COST;
    case PhoneNumberUtil::VOIP: return TRIFACTOR_PHONE_TYPE_VOIP;
    case PhoneNumberUtil::PERSONAL_NUMBER: return TRIFACTOR_PHONE_TYPE_PERSONAL_NUMBER;
    case PhoneNumberUtil::PAGER: return TRIFACTOR_PHONE_TYPE_PAGER;
    case PhoneNumberUtil::UAN: return TRIFACTOR_PHONE_TYPE_UAN;
    case PhoneNumberUtil::VOICEMAIL: return TRIFACTOR_PHONE_TYPE_VOICEMAIL;
    case PhoneNumberUtil::UNKNOWN: return TRIFACTOR_PHONE_TYPE_UNKNOWN;
    }
    return TRIFACTOR_PHONE_TYPE_UNKNOWN;
}

// Copies `value` with its NUL into `buffer`; false (and nothing written
// beyond an empty string) when it does not fit.
bool copy_string(const std::string &value, char *buffer, size_t capacity) {
    if (capacity == 0) return false;
    if (value.size() >= capacity) {
        buffer[0] = '\0';
        return false;
    }
    std::memcpy(buffer, value.c_str(), value.size() + 1);
    return true;
}

trifactor_phone_status parse(const char *number, const char *default_region,
                             trifactor_phone_result *out) {
    const PhoneNumberUtil *util = PhoneNumberUtil::GetInstance();
    if (util == nullptr) return TRIFACTOR_PHONE_INTERNAL_ERROR;

    // "ZZ" is libphonenumber's unknown region: only "+"-prefixed numbers parse.
    const std::string region = default_region != nullptr ? default_region : "ZZ";
    PhoneNumber parsed;
    const trifactor_phone_status status = status_for(util->Parse(number, region, &parsed));
    if (status != TRIFACTOR_PHONE_OK) return status;

    std::string e164;
    util->Format(parsed, PhoneNumberUtil::E164, &e164);
    if (!copy_string(e164, out->e164, sizeof out->e164)) return TRIFACTOR_PHONE_INTERNAL_ERROR;

    std::string region_code;
    util->GetRegionCodeForNumber(parsed, &region_code);
    if (!copy_string(region_code, out->region_code, sizeof out->region_code)) {
        return TRIFACTOR_PHONE_INTERNAL_ERROR;
    }

    out->country_calling_code = parsed.country_code();
    out->is_valid = util->IsValidNumber(parsed) ? 1 : 0;
    out->type = type_for(util->GetNumberType(parsed));
    return TRIFACTOR_PHONE_OK;
}

}  // namespace

extern "C" trifactor_phone_status trifactor_phone_parse(const char *number,
                                                        const char *default_region,
                                                        trifactor_phone_result *out) {
    if (number == nullptr || out == nullptr) return TRIFACTOR_PHONE_INTERNAL_ERROR;
    std::memset(out, 0, sizeof *out);
    trifactor_phone_status status;
    try {
        status = parse(number, default_region, out);
    } catch (...) {
        status = TRIFACTOR_PHONE_INTERNAL_ERROR;
    }
    if (status != TRIFACTOR_PHONE_OK) std::memset(out, 0, sizeof *out);
    return status;
}
