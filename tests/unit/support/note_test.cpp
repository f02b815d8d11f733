// Notes are data (core/support/note.h): rendered to one line only by renderNote, with the rounds
// a kept runner note was made in; the test-only rewording hook changes the words, nothing else.
#include "core/support/note.h"

#include <doctest/doctest.h>

using namespace kl;

TEST_CASE("notes: rounds label and rendering") {
  CHECK(roundsLabel({2}) == "round 2");
  CHECK(roundsLabel({1, 2, 3}) == "rounds 1-3");
  CHECK(roundsLabel({1, 2}) == "rounds 1, 2");
  CHECK(roundsLabel({1, 3, 4, 5, 7}) == "rounds 1, 3-5, 7");
  Note n{NoteKind::ProbeFallback, "", "probe: a.py ran un-overlaid", {1, 2, 3}};
  CHECK(renderNote(n) == "rounds 1-3: probe: a.py ran un-overlaid");
  n.rounds.clear();
  CHECK(renderNote(n) == "probe: a.py ran un-overlaid");
  CHECK(std::string(noteKindName(NoteKind::FocusLaunchedNothing)) == "focus_launched_nothing");
}

TEST_CASE("notes: the test-only rewording hook rewords the text, never the kind") {
  Note n{NoteKind::NotWrapped, "a.py", "not wrapped: a.py: a reason", {2}};
  setRewordForTest(true);
  std::string r = renderNote(n);
  setRewordForTest(false);
  CHECK(r == "~reworded~ reason a a.py: wrapped: not 2: round");
  CHECK(renderNote(n) == "round 2: not wrapped: a.py: a reason");
  CHECK(n.kind == NoteKind::NotWrapped);
  CHECK(rewordForTest("") == "");
}
