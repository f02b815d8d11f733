# The inlay hint of a line is built from the figures of its results::LineView (time by pass,
# kernel names) and its tooltip from the same description (kernels, launches, times, emulated).
<-- {"id":1,"method":"initialize","params":{"processId":null,"rootUri":"file://${KL_SOURCE_DIR}/tests/data/editor/ws","capabilities":{}}}
--> {"id":1,"result":"<any>"}
<-- {"method":"initialized","params":{}}
%open-file file://${KL_SOURCE_DIR}/tests/data/editor/ws/mlp.py ${KL_SOURCE_DIR}/tests/data/editor/ws/mlp.py
<-- {"id":2,"method":"workspace/executeCommand","params":{"command":"kernlens.loadProfile","arguments":[{"path":"../mlp_emulated.sqlite"}]}}
--> {"method":"textDocument/publishDiagnostics","params":{"uri":"file://${KL_SOURCE_DIR}/tests/data/editor/ws/mlp.py"}}
--> {"method":"window/logMessage"}
--> {"id":2,"result":{"lines":9}}
<-- {"id":3,"method":"textDocument/inlayHint","params":{"textDocument":{"uri":"file://${KL_SOURCE_DIR}/tests/data/editor/ws/mlp.py"},"range":{"start": {"line": 20, "character": 0}, "end": {"line": 20, "character": 80}}}}
--> {"id":3,"result":[{"position":{"line":20,"character":31},"label":"◷ 91.6 µs + bwd 115 µs · 5 kernels","paddingLeft":true,"data":{"line":20}}]}
<-- {"id":4,"method":"inlayHint/resolve","params":{"position":{"line":20,"character":31},"label":"◷ 91.6 µs + bwd 115 µs · 5 kernels","data":{"uri":"file://${KL_SOURCE_DIR}/tests/data/editor/ws/mlp.py","line":20,"gen":1}}}
--> {"id":4,"result":{"label":"◷ 91.6 µs + bwd 115 µs · 5 kernels","tooltip":{"kind":"markdown","value":"<contains:(backward) — >"}}}
<-- {"id":5,"method":"inlayHint/resolve","params":{"position":{"line":20,"character":31},"label":"◷ 91.6 µs + bwd 115 µs · 5 kernels","data":{"uri":"file://${KL_SOURCE_DIR}/tests/data/editor/ws/mlp.py","line":20,"gen":1}}}
--> {"id":5,"result":{"tooltip":{"value":"<contains:(emulated GPU: modelled durations)>"}}}
