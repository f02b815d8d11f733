#include "core/support/note.h"

#include <atomic>
#include <sstream>

namespace kl {

namespace {
std::atomic<bool> gReword{false};
}  // namespace

const char* noteKindName(NoteKind k) {
  switch (k) {
    case NoteKind::NotWrapped: return "not_wrapped";
    case NoteKind::NoGpuWork: return "no_gpu_work";
    case NoteKind::EmulatorGuesses: return "emulator_guesses";
    case NoteKind::ProbeFallback: return "probe_fallback";
    case NoteKind::NvtxNoop: return "nvtx_noop";
    case NoteKind::NoManagedRange: return "no_managed_range";
    case NoteKind::DiscoveryWroteNothing: return "discovery_wrote_nothing";
    case NoteKind::DiscoveryFailed: return "discovery_failed";
    case NoteKind::NoBackwardPass: return "no_backward_pass";
    case NoteKind::Widened: return "widened";
    case NoteKind::Harness: return "harness";
    case NoteKind::HarnessSwitched: return "harness_switched";
    case NoteKind::UnmappedRemain: return "unmapped_remain";
    case NoteKind::VerdictsNotStored: return "verdicts_not_stored";
    case NoteKind::FocusLaunchedNothing: return "focus_launched_nothing";
  }
  return "?";
}

std::string roundsLabel(const std::vector<int>& rounds) {
  std::string out = rounds.size() == 1 ? "round " : "rounds ";
  for (size_t i = 0; i < rounds.size();) {
    size_t j = i;
    while (j + 1 < rounds.size() && rounds[j + 1] == rounds[j] + 1) ++j;
    if (i) out += ", ";
    out += std::to_string(rounds[i]);
    if (j > i) out += (j == i + 1 ? ", " : "-") + std::to_string(rounds[j]);
    i = j + 1;
  }
  return out;
}

std::string renderNote(const Note& n) {
  std::string text = n.rounds.empty() ? n.text : roundsLabel(n.rounds) + ": " + n.text;
  return rewordForTest(std::move(text));
}

std::vector<std::string> renderNotes(const std::vector<Note>& notes) {
  std::vector<std::string> out;
  out.reserve(notes.size());
  for (const auto& n : notes) out.push_back(renderNote(n));
  return out;
}

void setRewordForTest(bool on) { gReword.store(on, std::memory_order_relaxed); }
bool rewordingForTest() { return gReword.load(std::memory_order_relaxed); }

std::string rewordForTest(std::string text) {
  if (!rewordingForTest() || text.empty()) return text;
  std::istringstream in(text);
  std::vector<std::string> words;
  for (std::string w; in >> w;) words.push_back(w);
  std::string out = "~reworded~";
  for (auto it = words.rbegin(); it != words.rend(); ++it) out += " " + *it;
  return out;
}

}  // namespace kl
