#include "core/support/log.h"

#include <cstdio>
#include <mutex>

namespace kl::log {
namespace {
std::mutex mu;
Sink sink;
Level minLevel = Level::Info;
}  // namespace

const char* levelName(Level level) {
  switch (level) {
    case Level::Debug: return "debug";
    case Level::Info: return "info";
    case Level::Warn: return "warning";
    case Level::Error: return "error";
  }
  return "?";
}

void setSink(Sink s) {
  std::lock_guard<std::mutex> l(mu);
  sink = std::move(s);
}
void setMinLevel(Level level) {
  std::lock_guard<std::mutex> l(mu);
  minLevel = level;
}

void write(Level level, std::string_view message) {
  std::lock_guard<std::mutex> l(mu);
  if (level < minLevel) return;
  if (sink) {
    sink(level, message);
    return;
  }
  std::fprintf(stderr, "kernlens: %s: %.*s\n", levelName(level), static_cast<int>(message.size()), message.data());
}

}  // namespace kl::log
