// Shared helpers for doctest unit tests.
#pragma once

#include <filesystem>
#include <string>

namespace kl::test {

/// tests/data/<rel>
inline std::filesystem::path dataPath(const std::string& rel) { return std::filesystem::path(KL_TEST_DATA) / rel; }
/// The repository root.
inline std::filesystem::path sourcePath(const std::string& rel) { return std::filesystem::path(KL_SOURCE_DIR) / rel; }

std::string readFile(const std::filesystem::path& p);
void writeFile(const std::filesystem::path& p, const std::string& content);

/// A fresh temporary directory, removed with the object.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& rel) const { return path_ / rel; }

 private:
  std::filesystem::path path_;
};

}  // namespace kl::test
