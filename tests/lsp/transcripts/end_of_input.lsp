# The client closes the stream after shutdown but without exit: treated as exit, code 0.
<-- {"id":1,"method":"initialize","params":{"processId":null,"rootUri":null,"capabilities":{}}}
--> {"id":1,"result":"<any>"}
<-- {"id":2,"method":"shutdown"}
--> {"id":2,"result":null}
%close-input
%exit-code 0
%log "closed the input without `exit`"
