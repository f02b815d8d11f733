# Every feature reads typed params: a value of the wrong type answers InvalidParams (-32602) with
# one line naming its JSON path, never InternalError; the server keeps answering afterwards.
<-- {"id":1,"method":"initialize","params":{"processId":null,"rootUri":"file:///ws","capabilities":{}}}
--> {"id":1,"result":"<any>"}
<-- {"method":"initialized","params":{}}
%open file:///ws/m.py
def f(x):
    return x
%end
<-- {"id":2,"method":"textDocument/inlayHint","params":{"textDocument":{"uri":"file:///ws/m.py"},"range":{"start":{"line":"0","character":0},"end":{"line":9,"character":0}}}}
--> {"id":2,"error":{"code":-32602,"message":"params.range.start.line: expected an unsigned 32-bit integer"}}
<-- {"id":3,"method":"inlayHint/resolve","params":{"label":"x"}}
--> {"id":3,"error":{"code":-32602,"message":"params.position: required field is missing"}}
<-- {"id":4,"method":"inlayHint/resolve","params":{"position":{"line":0,"character":0},"label":"x","data":{"uri":"file:///ws/m.py","line":-1,"gen":0}}}
--> {"id":4,"result":{"label":"x","data":"<any>","tooltip":"<absent>"}}
<-- {"id":5,"method":"textDocument/codeLens","params":{"textDocument":{"uri":7}}}
--> {"id":5,"error":{"code":-32602,"message":"params.textDocument.uri: expected a string"}}
<-- {"id":6,"method":"codeLens/resolve","params":{"range":{"start":{"line":0,"character":0},"end":{"line":0,"character":5}},"data":{"uri":"file:///ws/m.py","function":"f","kind":"gpu-time"}}}
--> {"id":6,"error":{"code":-32602,"message":"params.data.kind: expected \"gpu\", \"profile\" or \"refine\""}}
<-- {"id":7,"method":"textDocument/hover","params":{"textDocument":{"uri":"file:///ws/m.py"},"position":{"line":0,"character":true}}}
--> {"id":7,"error":{"code":-32602,"message":"params.position.character: expected an unsigned 32-bit integer"}}
<-- {"id":8,"method":"textDocument/codeAction","params":{"textDocument":{"uri":"file:///ws/m.py"},"range":{"start":{"line":1,"character":4},"end":{"line":1,"character":4}},"context":{"only":"refactor"}}}
--> {"id":8,"error":{"code":-32602,"message":"params.context.only: expected an array"}}
<-- {"id":9,"method":"codeAction/resolve","params":{"title":"Wrap in NVTX range","data":{"uri":"file:///ws/m.py","version":1,"action":"wrap","firstLine":"1","lastLine":1}}}
--> {"id":9,"error":{"code":-32602,"message":"params.data.firstLine: expected an unsigned 32-bit integer"}}
<-- {"id":10,"method":"workspace/executeCommand","params":{"command":"kernlens.refineHere","arguments":[{"uri":"file:///ws/m.py","range":{"start":{"line":0,"character":0},"end":[1,0]}}]}}
--> {"id":10,"error":{"code":-32602,"message":"arguments[0].range.end: expected an object"}}
<-- {"id":11,"method":"workspace/executeCommand","params":{"command":"kernlens.profileFunction","arguments":[{"uri":"file:///ws/m.py","function":1}]}}
--> {"id":11,"error":{"code":-32602,"message":"arguments[0].function: expected a string"}}
<-- {"id":12,"method":"workspace/executeCommand","params":{"command":"kernlens.loadProfile","arguments":[{"path":5}]}}
--> {"id":12,"error":{"code":-32602,"message":"arguments[0].path: expected a string"}}
<-- {"id":13,"method":"workspace/executeCommand","params":{"command":"kernlens.profileFunction","arguments":[{"uri":"file:///ws/m.py"}]}}
--> {"id":13,"error":{"code":-32602,"message":"arguments[0]: expected {uri, position} or {uri, function}"}}
# Still serving: a well-typed request answers.
<-- {"id":14,"method":"textDocument/codeAction","params":{"textDocument":{"uri":"file:///ws/m.py"},"range":{"start":{"line":1,"character":4},"end":{"line":1,"character":4}},"context":{"diagnostics":[],"only":["refactor.rewrite.nvtx.wrap"]}}}
--> {"id":14,"result":[{"title":"Wrap in NVTX range"},{"title":"Wrap body of f() in NVTX range"}]}
%no-output
