# Requests before initialize are refused with ServerNotInitialized; notifications are dropped.
<-- {"id":1,"method":"test/echo","params":{}}
--> {"id":1,"error":{"code":-32002,"message":"<contains:not initialized>"}}
<-- {"id":"s","method":"shutdown"}
--> {"id":"s","error":{"code":-32002}}
%open file:///early.py
x = 1
%end
%no-output
%log "before initialize dropped"
<-- {"id":2,"method":"initialize","params":{"processId":null,"rootUri":null,"capabilities":{}}}
--> {"id":2,"result":{"capabilities":"<any>"}}
# initialize is accepted once
<-- {"id":3,"method":"initialize","params":{"processId":null,"rootUri":null,"capabilities":{}}}
--> {"id":3,"error":{"code":-32600,"message":"initialize may only be sent once"}}
<-- {"method":"initialized","params":{}}
<-- {"id":4,"method":"test/document","params":{"uri":"file:///early.py"}}
--> {"id":4,"error":{"code":-32602,"message":"not open: file:///early.py"}}
<-- {"id":5,"method":"shutdown"}
--> {"id":5,"result":null}
# after shutdown: requests are invalid, notifications dropped, exit ends with 0
<-- {"id":6,"method":"test/echo","params":1}
--> {"id":6,"error":{"code":-32600,"message":"<contains:shutting down>"}}
<-- {"method":"initialized","params":{}}
%no-output
<-- {"method":"exit"}
%exit-code 0
# input after exit is not read
<-- {"id":7,"method":"test/echo","params":1}
%no-output
