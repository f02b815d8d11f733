# Server-initiated work-done progress: create the token, then begin / end. Reports sent before
# the client accepted the token are folded into begin.
<-- {"id":1,"method":"initialize","params":{"processId":null,"rootUri":null,
     "capabilities":{"window":{"workDoneProgress":true}}}}
--> {"id":1,"result":"<any>"}
<-- {"method":"initialized","params":{}}
<-- {"id":2,"method":"test/progress"}
--> {"id":1,"method":"window/workDoneProgress/create","params":{"token":"<any>"}}
--> {"id":2,"result":null}
<-- {"id":1,"result":null}
--> {"method":"$/progress","params":{"token":"<any>","value":{"kind":"begin","title":"Testing",
     "cancellable":true,"message":"half","percentage":50}}}
--> {"method":"$/progress","params":{"token":"<any>","value":{"kind":"end","message":"done"}}}
# A response to a request the server never sent is logged.
<-- {"id":77,"result":null}
%no-output
%log "response to an unknown request id 77"
