# "Refine NVTX here" and "Remove kernlens NVTX ranges" on a file holding kernlens ranges; user
# ranges are never offered for refinement; a stale version is refused.
<-- {"id":1,"method":"initialize","params":{"processId":null,"rootUri":"file:///ws","capabilities":{}}}
--> {"id":1,"result":"<any>"}
<-- {"method":"initialized","params":{}}
%open file:///ws/kept.py
import torch
def step(model, x):
    with torch.cuda.nvtx.range("kl:kept.py:3-4:step"):
        y = model(x)
        return y
def user(x):
    with torch.cuda.nvtx.range("mine"):
        return x
%end
<-- {"id":2,"method":"textDocument/codeAction","params":{"textDocument":{"uri":"file:///ws/kept.py"},
     "range":{"start":{"line":3,"character":8},"end":{"line":3,"character":8}},"context":{"diagnostics":[],"only":["refactor.rewrite.nvtx.refine","source"]}}}
--> {"id":2,"result":[{"title":"Refine NVTX here","kind":"refactor.rewrite.nvtx.refine","data":{"action":"refine","line":3,"version":1}},
                      {"title":"Remove kernlens NVTX ranges","kind":"source.removeNvtx","data":{"action":"remove","version":1}}]}
<-- {"id":3,"method":"codeAction/resolve","params":{"title":"Refine NVTX here","kind":"refactor.rewrite.nvtx.refine",
     "data":{"uri":"file:///ws/kept.py","version":1,"action":"refine","line":3}}}
--> {"id":3,"result":{"edit":{"documentChanges":[{"textDocument":{"uri":"file:///ws/kept.py","version":1},
     "edits":[{"range":{"start":{"line":2,"character":45},"end":{"line":3,"character":20}},
               "newText":"3:y = model(x)\"):\n        y = model(x)\n    with torch.cuda.nvtx.range(\"kl:kept.py:4-4:return y\"):"}]}]}}}
<-- {"id":4,"method":"codeAction/resolve","params":{"title":"Remove kernlens NVTX ranges","kind":"source.removeNvtx",
     "data":{"uri":"file:///ws/kept.py","version":1,"action":"remove"}}}
--> {"id":4,"result":{"edit":{"documentChanges":[{"textDocument":{"version":1},
     "edits":[{"range":{"start":{"line":2,"character":4},"end":{"line":4,"character":4}},"newText":"y = model(x)\n"}]}]}}}
# Inside the user's own range: no refine (it is not managed), remove still offered for the file.
<-- {"id":5,"method":"textDocument/codeAction","params":{"textDocument":{"uri":"file:///ws/kept.py"},
     "range":{"start":{"line":7,"character":8},"end":{"line":7,"character":8}},"context":{"diagnostics":[],"only":["refactor.rewrite.nvtx.refine","source.removeNvtx"]}}}
--> {"id":5,"result":[{"title":"Remove kernlens NVTX ranges"}]}
# Refining a single simple statement is refused with a reason.
<-- {"method":"textDocument/didChange","params":{"textDocument":{"uri":"file:///ws/kept.py","version":2},
     "contentChanges":[{"text":"import torch\nwith torch.cuda.nvtx.range(\"kl:kept.py:2-2:f()\"):\n    f()\n"}]}}
<-- {"id":6,"method":"codeAction/resolve","params":{"title":"Refine NVTX here","data":{"uri":"file:///ws/kept.py","version":2,"action":"refine","line":2}}}
--> {"id":6,"error":{"code":-32602,"message":"<contains:nothing finer to wrap>"}}
<-- {"id":7,"method":"codeAction/resolve","params":{"title":"Remove kernlens NVTX ranges","data":{"uri":"file:///ws/kept.py","version":1,"action":"remove"}}}
--> {"id":7,"error":{"code":-32801}}
