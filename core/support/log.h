// Logging: core code logs through here; the front end (CLI or server) installs the sink.
// Default sink: stderr. Thread-safe.
#pragma once

#include <functional>
#include <string>
#include <string_view>

namespace kl::log {

enum class Level { Debug, Info, Warn, Error };
using Sink = std::function<void(Level, std::string_view)>;

void setSink(Sink sink);
void setMinLevel(Level level);
void write(Level level, std::string_view message);

inline void debug(std::string_view m) { write(Level::Debug, m); }
inline void info(std::string_view m) { write(Level::Info, m); }
inline void warn(std::string_view m) { write(Level::Warn, m); }
inline void error(std::string_view m) { write(Level::Error, m); }

const char* levelName(Level level);

}  // namespace kl::log
