#pragma once
namespace kl {
/// The kernlens version, from the top-level CMake project().
const char* versionString();
}  // namespace kl
