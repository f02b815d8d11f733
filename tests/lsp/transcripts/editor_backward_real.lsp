# A real training trace (AMD MI300X ResNet DDP step with activation checkpointing, recorded by
# others: tests/data/real) loaded in the editor: backward kernels sit on the forward function of
# their autograd node, and the hint, the hover (kernels grouped forward / backward / recompute)
# and the function's lens show forward and backward time apart. The counts per line and pass are
# checked against the trace's own fwdbwd flows in tests/e2e/map_real_backward.sh.
<-- {"id":1,"method":"initialize","params":{"processId":null,"rootUri":"file://${KL_SOURCE_DIR}/tests/data/real/ws_train",
     "capabilities":{"workspace":{"inlayHint":{"refreshSupport":true},"codeLens":{"refreshSupport":true}},"textDocument":{"hover":{"contentFormat":["markdown","plaintext"]}}}}}
--> {"id":1,"result":"<any>"}
<-- {"method":"initialized","params":{}}
%open-file file://${KL_SOURCE_DIR}/tests/data/real/ws_train/torchvision/models/resnet.py ${KL_SOURCE_DIR}/tests/data/real/ws_train/torchvision/models/resnet.py
%no-output
<-- {"id":2,"method":"workspace/executeCommand","params":{"command":"kernlens.loadProfile","arguments":["${KL_SOURCE_DIR}/tests/data/real/tracelens_mi300x_resnet_actckpt_rank0.json.gz"]}}
--> {"method":"textDocument/publishDiagnostics","params":"<any>"}
--> {"method":"window/logMessage","params":{"type":3,"message":"<contains:tracelens_mi300x_resnet_actckpt_rank0.json.gz: 5 lines in 2 files>"}}
--> {"id":2,"result":{"source":"python-stacks","emulated":false}}
--> {"id":1,"method":"workspace/inlayHint/refresh"}
--> {"id":2,"method":"workspace/codeLens/refresh"}
<-- {"id":1,"result":null}
<-- {"id":2,"result":null}
# The hint of BasicBlock.forward's line: forward and backward time apart.
<-- {"id":3,"method":"textDocument/inlayHint","params":{"textDocument":{"uri":"file://${KL_SOURCE_DIR}/tests/data/real/ws_train/torchvision/models/resnet.py"},"range":{"start":{"line":88,"character":0},"end":{"line":89,"character":0}}}}
--> {"id":3,"result":[{"label":"◷ 4.80 ms + bwd 11.5 ms · 35 kernels"}]}
# The hover: one kernel table per pass; the launch counts are the trace's own (map_real_backward.sh).
<-- {"id":4,"method":"textDocument/hover","params":{"textDocument":{"uri":"file://${KL_SOURCE_DIR}/tests/data/real/ws_train/torchvision/models/resnet.py"},"position":{"line":88,"character":4}}}
--> {"id":4,"result":{"contents":{"value":"<contains:**GPU 4.80 ms + bwd 11.5 ms** · 35 kernels · 2016 launches>"}}}
<-- {"id":5,"method":"textDocument/hover","params":{"textDocument":{"uri":"file://${KL_SOURCE_DIR}/tests/data/real/ws_train/torchvision/models/resnet.py"},"position":{"line":88,"character":4}}}
--> {"id":5,"result":{"contents":{"value":"<contains:**forward 4.80 ms** · 615 launches\n\n| kernel | launches | total | share | avg |>"}}}
<-- {"id":6,"method":"textDocument/hover","params":{"textDocument":{"uri":"file://${KL_SOURCE_DIR}/tests/data/real/ws_train/torchvision/models/resnet.py"},"position":{"line":88,"character":4}}}
--> {"id":6,"result":{"contents":{"value":"<contains:**backward 7.32 ms** · 786 launches\n\n| kernel | launches | total | share | avg |\n|---|--:|--:|--:|--:|\n| `void at::native::batch_norm_backward_kerne…` | 57 |>"}}}
<-- {"id":7,"method":"textDocument/hover","params":{"textDocument":{"uri":"file://${KL_SOURCE_DIR}/tests/data/real/ws_train/torchvision/models/resnet.py"},"position":{"line":88,"character":4}}}
--> {"id":7,"result":{"contents":{"value":"<contains:**recompute (activation checkpointing) 4.21 ms** · 615 launches>"}}}
# The function's lens counts both passes.
<-- {"id":8,"method":"codeLens/resolve","params":{"range":{"start":{"line":88,"character":0},"end":{"line":88,"character":17}},"data":{"uri":"file://${KL_SOURCE_DIR}/tests/data/real/ws_train/torchvision/models/resnet.py","function":"block_forward","kind":"gpu","gen":1}}}
--> {"id":8,"result":{"command":{"title":"<contains:GPU 4.80 ms + bwd 11.5 ms · 35 kernels>"}}}
