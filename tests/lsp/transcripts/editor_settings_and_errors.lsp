# Settings (initializationOptions, didChangeConfiguration) and bad input.
# The client has no refreshSupport: no refresh requests are sent.
<-- {"id":1,"method":"initialize","params":{"processId":null,"rootUri":"file://${KL_SOURCE_DIR}/tests/data/editor/ws","capabilities":{},
     "initializationOptions":{"kernlens":{"hints":{"minShare":0.3},"lenses":{"profileUnprofiled":false}}}}}
--> {"id":1,"result":"<any>"}
<-- {"method":"initialized","params":{}}
%open-file file://${KL_SOURCE_DIR}/tests/data/editor/ws/mlp.py ${KL_SOURCE_DIR}/tests/data/editor/ws/mlp.py
# Bad input: one-line errors, nothing installed.
<-- {"id":2,"method":"workspace/executeCommand","params":{"command":"kernlens.loadProfile","arguments":[]}}
--> {"id":2,"error":{"code":-32602,"message":"<contains:expected arguments [path]>"}}
<-- {"id":3,"method":"workspace/executeCommand","params":{"command":"kernlens.loadProfile","arguments":["${KL_SOURCE_DIR}/tests/data/editor/no-such-file.sqlite"]}}
--> {"id":3,"error":{"code":-32803,"message":"<contains:no-such-file.sqlite>"}}
<-- {"id":4,"method":"workspace/executeCommand","params":{"command":"kernlens.loadProfile","arguments":["${KL_SOURCE_DIR}/tests/data/editor/README.md"]}}
--> {"id":4,"error":{"code":-32803,"message":"<contains:README.md>"}}
<-- {"id":5,"method":"workspace/executeCommand","params":{"command":"kernlens.loadProfile","arguments":[{"path":"../mlp_emulated.sqlite"}]}}
--> {"method":"textDocument/publishDiagnostics","params":{"uri":"file://${KL_SOURCE_DIR}/tests/data/editor/ws/mlp.py"}}
--> {"method":"window/logMessage"}
--> {"id":5,"result":{"lines":9}}
# minShare 0.3: only lines with >= 30 % of their function: gelu (59 % of forward),
# cross_entropy (33 % of train_step), opt.step() (40 %), .to(device) (90 % of main).
<-- {"id":6,"method":"textDocument/inlayHint","params":{"textDocument":{"uri":"file://${KL_SOURCE_DIR}/tests/data/editor/ws/mlp.py"},"range":{"start": {"line": 0, "character": 0}, "end": {"line": 60, "character": 0}}}}
--> {"id":6,"result":[{"position":{"line":20,"character":31},"label":"◷ 91.6 µs + bwd 115 µs · 5 kernels"},{"position":{"line":27,"character":37},"label":"◷ 12.0 µs + bwd 18.0 µs · 5 kernels"},{"position":{"line":29,"character":14},"label":"◷ 36.5 µs · 1 kernel"},{"position":{"line":42,"character":40},"label":"◷ 38.0 µs · 1 kernel"}]}
# Lenses without the "▶ Profile" on unprofiled functions (MLP.__init__ has none).
<-- {"id":7,"method":"textDocument/codeLens","params":{"textDocument":{"uri":"file://${KL_SOURCE_DIR}/tests/data/editor/ws/mlp.py"}}}
--> {"id":7,"result":[{"data":{"function":"MLP.forward"}},{},{},{"data":{"function":"train_step"}},{},{},{"data":{"function":"main"}},{},{}]}
# Units in ms and an absolute threshold of 0.04 ms; then hints off.
<-- {"method":"workspace/didChangeConfiguration","params":{"settings":{"kernlens":{"hints":{"minShare":0,"thresholdMs":0.04,"units":"ms"}}}}}
<-- {"id":8,"method":"textDocument/inlayHint","params":{"textDocument":{"uri":"file://${KL_SOURCE_DIR}/tests/data/editor/ws/mlp.py"},"range":{"start": {"line": 0, "character": 0}, "end": {"line": 60, "character": 0}}}}
--> {"id":8,"result":[{"label":"◷ 0.05 ms + bwd 0.03 ms · 4 kernels"},{"label":"◷ 0.09 ms + bwd 0.12 ms · 5 kernels"},{"label":"◷ 0.04 ms + bwd 0.02 ms · 3 kernels"}]}
<-- {"method":"workspace/didChangeConfiguration","params":{"settings":{"kernlens":{"hints":{"enabled":false}}}}}
<-- {"id":9,"method":"textDocument/inlayHint","params":{"textDocument":{"uri":"file://${KL_SOURCE_DIR}/tests/data/editor/ws/mlp.py"},"range":{"start": {"line": 0, "character": 0}, "end": {"line": 60, "character": 0}}}}
--> {"id":9,"result":[]}
# Hovers stay. This client declares no Markdown hovers: plain text, aligned columns.
<-- {"id":10,"method":"textDocument/hover","params":{"textDocument":{"uri":"file://${KL_SOURCE_DIR}/tests/data/editor/ws/mlp.py"},"position":{"line":20,"character":9}}}
--> {"id":10,"result":{"contents":{"kind":"plaintext","value":"<contains:GPU 91.6 µs + bwd 115 µs · 5 kernels · 15 launches · 59 % of MLP.forward\n3 invocations · emulated\n\nforward 91.6 µs · 6 launches\n\nkernel                                       launches    total  share      avg\nsm90_xmma_gemm_f32f32_f32f32_f32_tn_n_tile…         3  85.6 µs   24 %  28.5 µs\n>"}}}
# hover.format forces Markdown; hints.prefix replaces the glyph.
<-- {"method":"workspace/didChangeConfiguration","params":{"settings":{"kernlens":{"hints":{"enabled":true,"prefix":"GPU"},"hover":{"format":"markdown"}}}}}
<-- {"id":11,"method":"textDocument/hover","params":{"textDocument":{"uri":"file://${KL_SOURCE_DIR}/tests/data/editor/ws/mlp.py"},"position":{"line":20,"character":9}}}
--> {"id":11,"result":{"contents":{"kind":"markdown","value":"<contains:**GPU 91.6 µs + bwd 115 µs** · 5 kernels · 15 launches>"}}}
<-- {"id":12,"method":"textDocument/inlayHint","params":{"textDocument":{"uri":"file://${KL_SOURCE_DIR}/tests/data/editor/ws/mlp.py"},"range":{"start": {"line": 20, "character": 0}, "end": {"line": 20, "character": 80}}}}
--> {"id":12,"result":[{"label":"GPU 91.6 µs + bwd 115 µs · 5 kernels"}]}
# The run view's data for a loaded profile: the hottest line first (the gelu line 21, its
# backward GEMMs included; its time split by pass as the hint and hover say it).
<-- {"id":13,"method":"workspace/executeCommand","params":{"command":"kernlens.runSummary","arguments":[]}}
--> {"id":13,"result":{"runId":"profile:mlp_emulated.sqlite","backend":"emulate","emulated":true,"provisional":false,"hottest":[{"path":"mlp.py","line":21,"text":"h = F.gelu(self.fc2(h))","time":"91.6 µs + bwd 115 µs","share":"43 %","kind":"line"},{"line":20,"text":"h = F.relu(self.fc1(x))"},{},{},{},{},{},{},{}],"unmapped":[{"name":"[CUDA memcpy DtoH]"}],"headline":"<contains:profile:mlp_emulated.sqlite · emulate (emulated)>"}}
# Keeping annotations needs a profiling run (a loaded profile has no plan to keep); bad export format.
<-- {"id":14,"method":"workspace/executeCommand","params":{"command":"kernlens.keepAnnotations","arguments":[]}}
--> {"id":14,"error":{"code":-32803,"message":"<contains:loaded profile>"}}
<-- {"id":15,"method":"workspace/executeCommand","params":{"command":"kernlens.exportRun","arguments":[{"format":"pdf"}]}}
--> {"id":15,"error":{"code":-32602,"message":"<contains:html>"}}
