# NVTX code actions: which actions are offered, lazy resolve to a versioned WorkspaceEdit, the
# `only` filter, and a resolve for a stale document version refused with ContentModified.
<-- {"id":1,"method":"initialize","params":{"processId":null,"rootUri":"file:///ws","capabilities":{}}}
--> {"id":1,"result":{"capabilities":{"codeActionProvider":{"codeActionKinds":["refactor.rewrite.nvtx.wrap","refactor.rewrite.nvtx.refine","source.removeNvtx","refactor.rewrite.cute.region"],"resolveProvider":true}}}}
<-- {"method":"initialized","params":{}}
%open file:///ws/pkg/train.py
import torch
def step(model, x):
    y = model(x)
    return y
%end
# Cursor on `y = model(x)`: wrap the statement, or the body of `step`; no refine/remove (no ranges).
<-- {"id":2,"method":"textDocument/codeAction","params":{"textDocument":{"uri":"file:///ws/pkg/train.py"},
     "range":{"start":{"line":2,"character":4},"end":{"line":2,"character":4}},"context":{"diagnostics":[]}}}
--> {"id":2,"result":[{"title":"Wrap in NVTX range","kind":"refactor.rewrite.nvtx.wrap","edit":"<absent>",
                       "data":{"uri":"file:///ws/pkg/train.py","version":1,"action":"wrap","firstLine":2,"lastLine":2}},
                      {"title":"Wrap body of step() in NVTX range","kind":"refactor.rewrite.nvtx.wrap","edit":"<absent>",
                       "data":{"action":"wrapFunction","function":"step","defLine":1,"version":1}}]}
<-- {"id":3,"method":"codeAction/resolve","params":{"title":"Wrap in NVTX range","kind":"refactor.rewrite.nvtx.wrap",
     "data":{"uri":"file:///ws/pkg/train.py","version":1,"action":"wrap","firstLine":2,"lastLine":2}}}
--> {"id":3,"result":{"title":"Wrap in NVTX range","edit":{"documentChanges":[{"textDocument":{"uri":"file:///ws/pkg/train.py","version":1},
     "edits":[{"range":{"start":{"line":2,"character":4},"end":{"line":2,"character":4}},
               "newText":"with torch.cuda.nvtx.range(\"kl:pkg/train.py:3-3:y = model(x)\"):\n        "}]}]}}}
<-- {"id":4,"method":"codeAction/resolve","params":{"title":"Wrap body of step() in NVTX range","kind":"refactor.rewrite.nvtx.wrap",
     "data":{"uri":"file:///ws/pkg/train.py","version":1,"action":"wrapFunction","function":"step","defLine":1}}}
--> {"id":4,"result":{"edit":{"documentChanges":[{"textDocument":{"version":1},
     "edits":[{"range":{"start":{"line":2,"character":4},"end":{"line":3,"character":0}},
               "newText":"with torch.cuda.nvtx.range(\"kl:pkg/train.py:3-4:step\"):\n        y = model(x)\n    "}]}]}}}
# A selection over both lines, filtered to source actions only: nothing (no ranges to remove).
<-- {"id":5,"method":"textDocument/codeAction","params":{"textDocument":{"uri":"file:///ws/pkg/train.py"},
     "range":{"start":{"line":2,"character":0},"end":{"line":4,"character":0}},"context":{"diagnostics":[],"only":["source"]}}}
--> {"id":5,"result":[]}
# The document changes: resolving the action offered for version 1 is refused.
<-- {"method":"textDocument/didChange","params":{"textDocument":{"uri":"file:///ws/pkg/train.py","version":2},
     "contentChanges":[{"range":{"start":{"line":3,"character":12},"end":{"line":3,"character":12}},"text":" * 2"}]}}
<-- {"id":6,"method":"codeAction/resolve","params":{"title":"Wrap in NVTX range","kind":"refactor.rewrite.nvtx.wrap",
     "data":{"uri":"file:///ws/pkg/train.py","version":1,"action":"wrap","firstLine":2,"lastLine":2}}}
--> {"id":6,"error":{"code":-32801,"message":"<contains:changed since this code action was offered (version 1, now 2)>"}}
# Asking again gives actions for version 2.
<-- {"id":7,"method":"textDocument/codeAction","params":{"textDocument":{"uri":"file:///ws/pkg/train.py"},
     "range":{"start":{"line":3,"character":4},"end":{"line":3,"character":4}},"context":{"diagnostics":[],"only":["refactor.rewrite.nvtx.wrap"]}}}
--> {"id":7,"result":[{"data":{"version":2,"firstLine":3,"lastLine":3}},{"data":{"version":2}}]}
# Broken code: no actions.
<-- {"method":"textDocument/didChange","params":{"textDocument":{"uri":"file:///ws/pkg/train.py","version":3},
     "contentChanges":[{"text":"def f(:\n    pass\n"}]}}
<-- {"id":8,"method":"textDocument/codeAction","params":{"textDocument":{"uri":"file:///ws/pkg/train.py"},
     "range":{"start":{"line":1,"character":4},"end":{"line":1,"character":4}},"context":{"diagnostics":[]}}}
--> {"id":8,"result":[]}
<-- {"id":9,"method":"codeAction/resolve","params":{"title":"x","data":{"uri":"file:///ws/nope.py","version":1,"action":"remove"}}}
--> {"id":9,"error":{"code":-32602}}
