// The in-process LSP test client (owned by the lsp area) compiled into this test binary too:
// tests/unit/<area> links only its own sources, and the editor tests drive the real server
// through the same client as the lsp tests.
#include "tests/unit/lsp/lsp_test_client.cpp"  // NOLINT(bugprone-suspicious-include)
