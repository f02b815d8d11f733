#include "core/runner/command.h"

namespace kl::runner {

Result<std::vector<std::string>> splitCommandLine(std::string_view line) {
  std::vector<std::string> words;
  std::string cur;
  bool inWord = false;
  for (size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (c == ' ' || c == '\t' || c == '\n') {
      if (inWord) words.push_back(std::move(cur)), cur.clear(), inWord = false;
      continue;
    }
    inWord = true;
    if (c == '\\') {
      if (i + 1 >= line.size()) return Error::invalid("command ends with a backslash");
      if (line[i + 1] != '\n') cur += line[i + 1];
      ++i;
    } else if (c == '\'') {
      size_t end = line.find('\'', i + 1);
      if (end == std::string_view::npos) return Error::invalid("unterminated ' in the command");
      cur.append(line.substr(i + 1, end - i - 1));
      i = end;
    } else if (c == '"') {
      size_t j = i + 1;
      for (; j < line.size() && line[j] != '"'; ++j) {
        if (line[j] == '\\' && j + 1 < line.size() &&
            (line[j + 1] == '"' || line[j + 1] == '\\' || line[j + 1] == '$' || line[j + 1] == '`')) {
          cur += line[++j];
        } else {
          cur += line[j];
        }
      }
      if (j >= line.size()) return Error::invalid("unterminated \" in the command");
      i = j;
    } else {
      cur += c;
    }
  }
  if (inWord) words.push_back(std::move(cur));
  if (words.empty()) return Error::invalid("empty command");
  return words;
}

std::string shellQuote(std::string_view w) {
  auto safe = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           std::string_view("_@%+=:,./-").find(c) != std::string_view::npos;
  };
  bool allSafe = !w.empty();
  for (char c : w) allSafe = allSafe && safe(c);
  if (allSafe) return std::string(w);
  std::string out = "'";
  for (char c : w) {
    if (c == '\'')
      out += "'\\''";
    else
      out += c;
  }
  out += '\'';
  return out;
}

std::string shellJoin(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& a : argv) {
    if (!out.empty()) out += ' ';
    out += shellQuote(a);
  }
  return out;
}

Result<std::string> expandTemplate(std::string_view t, const std::map<std::string, std::string>& values) {
  enum class Q { None, Single, Double } q = Q::None;
  std::string out;
  bool sawCmd = false;
  for (size_t i = 0; i < t.size(); ++i) {
    char c = t[i];
    if (c == '{' && i + 1 < t.size() && t[i + 1] == '{') {
      out += '{';
      ++i;
      continue;
    }
    if (c == '}' && i + 1 < t.size() && t[i + 1] == '}') {
      out += '}';
      ++i;
      continue;
    }
    if (c == '{') {
      size_t end = t.find('}', i);
      if (end == std::string_view::npos) return Error::invalid("launch template: unclosed '{'");
      std::string key(t.substr(i + 1, end - i - 1));
      auto it = values.find(key);
      if (it == values.end())
        return Error::invalid("launch template: unknown placeholder {" + key + "} (use {cmd}, {cwd}, {out})");
      if (key == "cmd") sawCmd = true;
      const std::string& v = it->second;
      if (q == Q::Single) {
        for (char ch : v) out += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
      } else if (q == Q::Double) {
        for (char ch : v) {
          if (ch == '"' || ch == '$' || ch == '`' || ch == '\\') out += '\\';
          out += ch;
        }
      } else {
        out += v;
      }
      i = end;
      continue;
    }
    // Track the template's own quoting context.
    if (q == Q::None) {
      if (c == '\\' && i + 1 < t.size()) {
        out += c;
        out += t[++i];
        continue;
      }
      if (c == '\'')
        q = Q::Single;
      else if (c == '"')
        q = Q::Double;
    } else if (q == Q::Single) {
      if (c == '\'') q = Q::None;
    } else {
      if (c == '\\' && i + 1 < t.size()) {
        out += c;
        out += t[++i];
        continue;
      }
      if (c == '"') q = Q::None;
    }
    out += c;
  }
  if (q != Q::None) return Error::invalid("launch template: unterminated quote");
  if (!sawCmd) return Error::invalid("launch template has no {cmd} placeholder");
  return out;
}

}  // namespace kl::runner
