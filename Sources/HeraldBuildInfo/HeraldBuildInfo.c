#include "HeraldBuildInfo.h"

#if __has_include("generated/commit.h")
#include "generated/commit.h"
#endif

#ifndef HERALD_BUILD_COMMIT
#define HERALD_BUILD_COMMIT ""
#endif

const char *herald_build_commit(void) { return HERALD_BUILD_COMMIT; }
