# Results follow edits keystroke by keystroke; diagnostics wait until edits settle (one publish
# for a burst of changes, for the last version); when edits settle, results dropped on the way
# come back if their lines are back to the profiled text (exact remap), with refresh requests.
<-- {"id":1,"method":"initialize","params":{"processId":null,"rootUri":"file://${KL_SOURCE_DIR}/tests/data/editor/ws",
     "capabilities":{"workspace":{"inlayHint":{"refreshSupport":true},"codeLens":{"refreshSupport":true}}}}}
--> {"id":1,"result":{"capabilities":{"inlayHintProvider":{"resolveProvider":true}}}}
<-- {"method":"initialized","params":{}}
%open-file file://${KL_SOURCE_DIR}/tests/data/editor/ws/mlp.py ${KL_SOURCE_DIR}/tests/data/editor/ws/mlp.py
<-- {"id":2,"method":"workspace/executeCommand","params":{"command":"kernlens.loadProfile","arguments":["${KL_SOURCE_DIR}/tests/data/editor/mlp_emulated.sqlite"]}}
--> {"method":"textDocument/publishDiagnostics","params":{"uri":"file://${KL_SOURCE_DIR}/tests/data/editor/ws/mlp.py","version":1,"diagnostics":[{"code":"unmapped"}]}}
--> {"method":"window/logMessage"}
--> {"id":2,"result":{"lines":9}}
--> {"id":1,"method":"workspace/inlayHint/refresh"}
--> {"id":2,"method":"workspace/codeLens/refresh"}
<-- {"id":1,"result":null}
<-- {"id":2,"result":null}
# A burst: a comment line above everything (v2), then `gelu` -> `silu` on the fc2 line (v3).
<-- {"method":"textDocument/didChange","params":{"textDocument":{"uri":"file://${KL_SOURCE_DIR}/tests/data/editor/ws/mlp.py","version":2},"contentChanges":[{"range":{"start":{"line":0,"character":0},"end":{"line":0,"character":0}},"text":"# x\n"}]}}
<-- {"method":"textDocument/didChange","params":{"textDocument":{"uri":"file://${KL_SOURCE_DIR}/tests/data/editor/ws/mlp.py","version":3},"contentChanges":[{"range":{"start":{"line":21,"character":14},"end":{"line":21,"character":18}},"text":"silu"}]}}
# One publication, for v3 only. The burst moved the results in one step (lines 0-21 changed:
# two dropped); settling remaps from the snapshot, which keeps the relu line: refresh requests.
--> {"id":3,"method":"workspace/inlayHint/refresh"}
--> {"id":4,"method":"workspace/codeLens/refresh"}
--> {"method":"textDocument/publishDiagnostics","params":{"uri":"file://${KL_SOURCE_DIR}/tests/data/editor/ws/mlp.py","version":3,"diagnostics":[{"code":"unmapped"},{"code":"stale","message":"results are from an older version of this file (1 dropped on changed lines) — profile again to update"}]}}
<-- {"id":3,"result":null}
<-- {"id":4,"result":null}
%no-output
<-- {"id":3,"method":"textDocument/inlayHint","params":{"textDocument":{"uri":"file://${KL_SOURCE_DIR}/tests/data/editor/ws/mlp.py"},"range":{"start":{"line":19,"character":0},"end":{"line":23,"character":0}}}}
--> {"id":3,"result":[{"position":{"line":20,"character":31},"label":"◷ 50.3 µs + bwd 29.7 µs · 4 kernels"},{"position":{"line":22,"character":27},"label":"◷ 44.3 µs + bwd 19.3 µs · 3 kernels"}]}
# Typing `gelu` back: the line is the profiled text again. Moved edit by edit it stays dropped;
# when edits settle the exact remap brings it back: refresh requests, then the diagnostics.
<-- {"method":"textDocument/didChange","params":{"textDocument":{"uri":"file://${KL_SOURCE_DIR}/tests/data/editor/ws/mlp.py","version":4},"contentChanges":[{"range":{"start":{"line":21,"character":14},"end":{"line":21,"character":18}},"text":"gelu"}]}}
--> {"id":5,"method":"workspace/inlayHint/refresh"}
--> {"id":6,"method":"workspace/codeLens/refresh"}
--> {"method":"textDocument/publishDiagnostics","params":{"uri":"file://${KL_SOURCE_DIR}/tests/data/editor/ws/mlp.py","version":4,"diagnostics":[{"code":"unmapped"},{"code":"stale","message":"results are from an older version of this file — profile again to update"}]}}
<-- {"id":5,"result":null}
<-- {"id":6,"result":null}
<-- {"id":4,"method":"textDocument/inlayHint","params":{"textDocument":{"uri":"file://${KL_SOURCE_DIR}/tests/data/editor/ws/mlp.py"},"range":{"start":{"line":19,"character":0},"end":{"line":23,"character":0}}}}
--> {"id":4,"result":[{"position":{"line":20,"character":31},"label":"◷ 50.3 µs + bwd 29.7 µs · 4 kernels"},{"position":{"line":21,"character":31},"label":"◷ 91.6 µs + bwd 115 µs · 5 kernels","data":{"line":21,"gen":1}},{"position":{"line":22,"character":27},"label":"◷ 44.3 µs + bwd 19.3 µs · 3 kernels"}]}
# Removing the comment line: the text is the profiled snapshot again: not stale, nothing
# dropped, and nothing to refresh (the hints moved with an edit the client made).
<-- {"method":"textDocument/didChange","params":{"textDocument":{"uri":"file://${KL_SOURCE_DIR}/tests/data/editor/ws/mlp.py","version":5},"contentChanges":[{"range":{"start":{"line":0,"character":0},"end":{"line":1,"character":0}},"text":""}]}}
--> {"method":"textDocument/publishDiagnostics","params":{"uri":"file://${KL_SOURCE_DIR}/tests/data/editor/ws/mlp.py","version":5,"diagnostics":[{"code":"unmapped"}]}}
<-- {"id":5,"method":"textDocument/inlayHint","params":{"textDocument":{"uri":"file://${KL_SOURCE_DIR}/tests/data/editor/ws/mlp.py"},"range":{"start":{"line":19,"character":0},"end":{"line":21,"character":0}}}}
--> {"id":5,"result":[{"position":{"line":19,"character":31}},{"position":{"line":20,"character":31}},{"position":{"line":21,"character":27}}]}
# The tooltip comes from inlayHint/resolve.
<-- {"id":6,"method":"inlayHint/resolve","params":{"position":{"line":20,"character":31},"label":"◷ 91.6 µs + bwd 115 µs · 5 kernels","data":{"uri":"file://${KL_SOURCE_DIR}/tests/data/editor/ws/mlp.py","line":20,"gen":1}}}
--> {"id":6,"result":{"label":"◷ 91.6 µs + bwd 115 µs · 5 kernels","tooltip":{"kind":"markdown","value":"<contains:× >"}}}
%no-output
