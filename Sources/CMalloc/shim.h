// glibc's allocator statistics (mallinfo2): the heap a process has in use, which a leak grows,
// apart from its resident memory, which also keeps freed pages the allocator holds on to.
#if defined(__linux__)
#include <malloc.h>
#endif
