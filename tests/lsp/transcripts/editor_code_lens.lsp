# The GPU lens of a function: its time by pass, kernel names and share of the run, in the words
# of the line figures (core/support/format.h), marked emulated. Expected title from the
# independent oracle tests/e2e/editor/expected_hints.py on the same profile.
<-- {"id":1,"method":"initialize","params":{"processId":null,"rootUri":"file://${KL_SOURCE_DIR}/tests/data/editor/ws","capabilities":{}}}
--> {"id":1,"result":"<any>"}
<-- {"method":"initialized","params":{}}
%open-file file://${KL_SOURCE_DIR}/tests/data/editor/ws/mlp.py ${KL_SOURCE_DIR}/tests/data/editor/ws/mlp.py
<-- {"id":2,"method":"workspace/executeCommand","params":{"command":"kernlens.loadProfile","arguments":[{"path":"../mlp_emulated.sqlite"}]}}
--> {"method":"textDocument/publishDiagnostics","params":{"uri":"file://${KL_SOURCE_DIR}/tests/data/editor/ws/mlp.py"}}
--> {"method":"window/logMessage"}
--> {"id":2,"result":{"lines":9}}
<-- {"id":3,"method":"codeLens/resolve","params":{"range":{"start":{"line":18,"character":4},"end":{"line":18,"character":15}},"data":{"uri":"file://${KL_SOURCE_DIR}/tests/data/editor/ws/mlp.py","function":"MLP.forward","kind":"gpu","gen":1}}}
--> {"id":3,"result":{"command":{"title":"GPU 186 µs + bwd 164 µs · 9 kernels · 72 % · emulated"}}}
