// Only the header matters: LLVMFuzzerRunDriver comes from libFuzzer's runtime.
#include "CFuzzerDriver.h"
