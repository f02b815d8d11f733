#include <cstdlib>
#include <iostream>
#include <string_view>

#include "cli/cli.h"
#include "core/support/note.h"

int main(int argc, char** argv) {
  // TEST ONLY (tests/e2e/reword_notes.sh): every note and message core renders comes out
  // reworded, to show that no behaviour depends on a message's wording.
  if (const char* r = std::getenv("KERNLENS_TEST_REWORD_NOTES"); r && std::string_view(r) == "1")
    kl::setRewordForTest(true);
  return kl::cli::runMain(argc, argv, std::cout, std::cerr);
}
