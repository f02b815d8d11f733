# JSON-RPC errors; the server survives every one of them.
<-- {"id":1,"method":"initialize","params":{"processId":null,"rootUri":null,"capabilities":{}}}
--> {"id":1,"result":"<any>"}
<-- {"method":"initialized","params":{}}

# Unknown method (also "$/" requests), unknown notifications are ignored.
<-- {"id":2,"method":"kernlens/noSuchThing","params":{}}
--> {"id":2,"error":{"code":-32601,"message":"method not found: kernlens/noSuchThing"}}
<-- {"id":3,"method":"$/unknownRequest"}
--> {"id":3,"error":{"code":-32601}}
<-- {"method":"kernlens/noSuchNotification","params":{}}
<-- {"method":"$/setTrace","params":{"value":"off"}}
%no-output

# Bad params name the JSON path.
<-- {"id":4,"method":"test/position","params":{"textDocument":{"uri":"file:///a.py"},"position":{"line":"0","character":1}}}
--> {"id":4,"error":{"code":-32602,"message":"params.position.line: expected an unsigned 32-bit integer"}}
<-- {"id":5,"method":"test/position","params":{"textDocument":{"uri":"file:///a.py"},"position":{"line":3,"character":1}}}
--> {"id":5,"result":{"line":3,"character":1}}
<-- {"id":6,"method":"test/position"}
--> {"id":6,"error":{"code":-32602,"message":"params: expected an object"}}

# A throwing handler, a dropped reply, a double reply: exactly one reply each.
<-- {"id":7,"method":"test/throw"}
--> {"id":7,"error":{"code":-32603,"message":"test/throw failed: boom"}}
<-- {"id":8,"method":"test/drop"}
--> {"id":8,"error":{"code":-32603,"message":"server failed to reply to test/drop"}}
<-- {"id":9,"method":"test/twice"}
--> {"id":9,"result":"first"}
%no-output
%log "second reply to test/twice"

# Malformed JSON-RPC envelopes.
<-- {"id":10,"method":"test/echo","jsonrpc":"1.0"}
--> {"id":10,"error":{"code":-32600}}
<-- {"id":{"bad":"id"},"method":"test/echo"}
--> {"id":null,"error":{"code":-32600,"message":"request id must be an integer or a string"}}
<-- {"id":11,"method":42}
--> {"id":11,"error":{"code":-32600}}
<-- {"id":12}
--> {"id":12,"error":{"code":-32600}}
<-- {"id":"string-id","method":"test/echo","params":[1,2]}
--> {"id":"string-id","result":[1,2]}

# workspace/executeCommand routes by command name.
<-- {"id":13,"method":"workspace/executeCommand","params":{"command":"test.command","arguments":[{"n":41}]}}
--> {"id":13,"result":42}
<-- {"id":14,"method":"workspace/executeCommand","params":{"command":"test.command","arguments":[{"n":"x"}]}}
--> {"id":14,"error":{"code":-32602,"message":"arguments[0].n: expected an integer"}}
<-- {"id":15,"method":"workspace/executeCommand","params":{"command":"no.such.command"}}
--> {"id":15,"error":{"code":-32602,"message":"unknown command: no.such.command"}}
<-- {"id":16,"method":"test/echo","params":"still serving"}
--> {"id":16,"result":"still serving"}
