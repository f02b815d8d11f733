# The run view (kernlens.runSummary): each hottest line with the time of its results::LineView
# (split by pass, as its hover and hint say it) and its share of the run.
<-- {"id":1,"method":"initialize","params":{"processId":null,"rootUri":"file://${KL_SOURCE_DIR}/tests/data/editor/ws","capabilities":{}}}
--> {"id":1,"result":"<any>"}
<-- {"method":"initialized","params":{}}
%open-file file://${KL_SOURCE_DIR}/tests/data/editor/ws/mlp.py ${KL_SOURCE_DIR}/tests/data/editor/ws/mlp.py
<-- {"id":2,"method":"workspace/executeCommand","params":{"command":"kernlens.loadProfile","arguments":[{"path":"../mlp_emulated.sqlite"}]}}
--> {"method":"textDocument/publishDiagnostics","params":{"uri":"file://${KL_SOURCE_DIR}/tests/data/editor/ws/mlp.py"}}
--> {"method":"window/logMessage"}
--> {"id":2,"result":{"lines":9}}
<-- {"id":3,"method":"workspace/executeCommand","params":{"command":"kernlens.runSummary","arguments":[]}}
--> {"id":3,"result":{"emulated":true,"hottest":[{"path":"mlp.py","line":21,"time":"91.6 µs + bwd 115 µs","share":"43 %","kind":"line","kernels":5},{"line":20,"time":"50.3 µs + bwd 29.7 µs"},{},{},{},{},{},{},{}]}}
