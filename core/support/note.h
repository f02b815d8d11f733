// Notes: what a run has to tell beside its results (a range it could not wrap, a fallback the
// probe took, a widening the loop made), as data. A consumer decides on `kind` (and `subject`),
// never on the wording: `text` is prose for people and is turned into a line only where a front
// end or a document shows it (renderNote: the loop's text and JSON reports, the editor's
// messages, the store's warnings).
#pragma once

#include <string>
#include <vector>

namespace kl {

enum class NoteKind {
  // A round's (the runner's).
  NotWrapped,             // a planned range the instrumenter (or the loop) could not place
  NoGpuWork,              // the profile holds no GPU op (no GPU, or the program launched none)
  EmulatorGuesses,        // the emulator emitted generic kernels for ops it does not model
  ProbeFallback,          // the probe fell back (a file run un-overlaid, ...)
  NvtxNoop,               // NVTX was a no-op in the program: nsys saw none of its ranges
  NoManagedRange,         // no kl: range was recorded: the instrumented code did not run
  DiscoveryWroteNothing,  // the discovery pass wrote no call file
  // The loop's.
  DiscoveryFailed,       // no call discovery (failed, empty or unreadable): static resolution only
  NoBackwardPass,        // the discovery run saw no backward pass: autograd ranges off
  Widened,               // callers, thread targets or the entry script wrapped
  Harness,               // how the generated harness was made, or why it could not be
  HarnessSwitched,       // the loop profiles a generated harness instead of the entry
  UnmappedRemain,        // launches stayed outside every range after full widening
  VerdictsNotStored,     // the atomic reasons could not be written to the store
  FocusLaunchedNothing,  // the focus (or region) ran but launched nothing, or never ran
};

/// "not_wrapped", "no_gpu_work", ... (stable; tests and logs name kinds by it).
const char* noteKindName(NoteKind k);

struct Note {
  NoteKind kind = NoteKind::ProbeFallback;
  /// What the note is about, for a consumer that needs it: a workspace file ("a.py"), a range
  /// ("a.py:3-9"), a function ("a.py::f"); "" when it is about the run.
  std::string subject;
  /// The sentence for people (no rounds prefix).
  std::string text;
  /// A runner note the loop kept: the 1-based instrumented rounds it was made in (rendered as
  /// "round 2: ", "rounds 1-3: "); empty for the loop's own notes and a round's notes.
  std::vector<int> rounds;

  bool operator==(const Note&) const = default;
};

/// The note as one line: "rounds 1-3: " + text. The only place a note becomes text.
std::string renderNote(const Note& n);
std::vector<std::string> renderNotes(const std::vector<Note>& notes);
/// "round 2", "rounds 1-3", "rounds 1, 3" (1-based, ascending).
std::string roundsLabel(const std::vector<int>& rounds);

/// TEST ONLY: every note, and every other message text a front end renders through
/// rewordForTest, comes out reworded (its words reversed, marked), so that a test can show
/// that no behaviour depends on the wording. Set by the front ends from the environment
/// variable KERNLENS_TEST_REWORD_NOTES=1 (core never reads the environment); never in use.
void setRewordForTest(bool on);
bool rewordingForTest();
/// `text` as it is rendered: itself, or reworded while setRewordForTest is on.
std::string rewordForTest(std::string text);

}  // namespace kl
