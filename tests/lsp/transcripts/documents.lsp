# didOpen / didChange / didClose: versions tracked, incremental multi-line edits re-parsed,
# changes to documents that are not open are logged and ignored.
<-- {"id":1,"method":"initialize","params":{"processId":null,"rootUri":null,"capabilities":{}}}
--> {"id":1,"result":"<any>"}
<-- {"method":"initialized","params":{}}
%open file:///train.py
def step(model, batch):
    loss = model(batch)
    return loss
%end
<-- {"id":2,"method":"test/document","params":{"uri":"file:///train.py"}}
--> {"id":2,"result":{"version":1,"lineCount":4,"parsed":true,"sexpEqualsFresh":true}}
# Insert a line, then break the syntax while typing: still parsed, still equal to a fresh parse.
<-- {"method":"textDocument/didChange","params":{"textDocument":{"uri":"file:///train.py","version":5},
     "contentChanges":[{"range":{"start":{"line":1,"character":0},"end":{"line":1,"character":0}},
                        "text":"    with torch.cuda.nvtx.range(\"fwd\"):\n    "},
                       {"range":{"start":{"line":3,"character":15},"end":{"line":3,"character":15}},
                        "text":".backward(("}]}}
<-- {"id":3,"method":"test/document","params":{"uri":"file:///train.py"}}
--> {"id":3,"result":{"text":"def step(model, batch):\n    with torch.cuda.nvtx.range(\"fwd\"):\n        loss = model(batch)\n    return loss.backward((\n",
     "version":5,"lineCount":5,"parsed":true,"sexpEqualsFresh":true}}
<-- {"method":"textDocument/didChange","params":{"textDocument":{"uri":"file:///other.py","version":2},
     "contentChanges":[{"text":"x"}]}}
%log "didChange for a document that is not open: file:///other.py"
<-- {"method":"textDocument/didClose","params":{"textDocument":{"uri":"file:///train.py"}}}
<-- {"id":4,"method":"test/document","params":{"uri":"file:///train.py"}}
--> {"id":4,"error":{"code":-32602}}
<-- {"method":"textDocument/didClose","params":{"textDocument":{"uri":"file:///train.py"}}}
%log "didClose of a document that is not open"
# Bad didOpen params are logged, not answered (it is a notification).
<-- {"method":"textDocument/didOpen","params":{"textDocument":{"uri":"file:///x.py","version":1,"text":""}}}
%no-output
%log "params.textDocument.languageId: required field is missing"
