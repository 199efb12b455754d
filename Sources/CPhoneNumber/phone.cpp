#include "trifactor_phone.h"
extern "C" int trifactor_phone_placeholder(void) { return 0; }
