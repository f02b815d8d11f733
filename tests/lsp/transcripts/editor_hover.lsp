# The hover of one line shows the figures of its results::LineView: the gelu line of MLP.forward
# (line 21) in the emulated MLP profile: 91.6 µs forward + 115 µs backward, 5 kernel names,
# 15 launches, 59 % of MLP.forward, 3 invocations, emulated (the same words as its hint, lens
# and run view: editor_inlay_hint.lsp, editor_code_lens.lsp, editor_run_view.lsp).
<-- {"id":1,"method":"initialize","params":{"processId":null,"rootUri":"file://${KL_SOURCE_DIR}/tests/data/editor/ws","capabilities":{}}}
--> {"id":1,"result":"<any>"}
<-- {"method":"initialized","params":{}}
%open-file file://${KL_SOURCE_DIR}/tests/data/editor/ws/mlp.py ${KL_SOURCE_DIR}/tests/data/editor/ws/mlp.py
<-- {"id":2,"method":"workspace/executeCommand","params":{"command":"kernlens.loadProfile","arguments":[{"path":"../mlp_emulated.sqlite"}]}}
--> {"method":"textDocument/publishDiagnostics","params":{"uri":"file://${KL_SOURCE_DIR}/tests/data/editor/ws/mlp.py"}}
--> {"method":"window/logMessage"}
--> {"id":2,"result":{"lines":9}}
<-- {"id":3,"method":"textDocument/hover","params":{"textDocument":{"uri":"file://${KL_SOURCE_DIR}/tests/data/editor/ws/mlp.py"},"position":{"line":20,"character":9}}}
--> {"id":3,"result":{"contents":{"kind":"plaintext","value":"<contains:GPU 91.6 µs + bwd 115 µs · 5 kernels · 15 launches · 59 % of MLP.forward\n3 invocations · emulated\n\nforward 91.6 µs · 6 launches\n>"},"range":{"start":{"line":20,"character":0}}}}
