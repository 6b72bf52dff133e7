// libFuzzer's driver (clang_rt.fuzzer, linked by -sanitize=fuzzer). SwiftPM makes an executable
// target's entry point the program's main, so the harness's entry point starts the driver.
#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));
