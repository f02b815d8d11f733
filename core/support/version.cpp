#include "core/support/version.h"

namespace kl {
const char* versionString() { return KL_VERSION; }
}  // namespace kl
