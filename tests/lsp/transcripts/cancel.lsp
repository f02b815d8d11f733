# $/cancelRequest answers a still-running request with RequestCancelled (-32800).
<-- {"id":1,"method":"initialize","params":{"processId":null,"rootUri":null,"capabilities":{}}}
--> {"id":1,"result":"<any>"}
<-- {"method":"initialized","params":{}}
<-- {"id":7,"method":"test/block"}
<-- {"method":"$/cancelRequest","params":{"id":7}}
--> {"id":7,"error":{"code":-32800}}
# Cancelling an answered or unknown request does nothing; a bad cancel is only logged.
<-- {"method":"$/cancelRequest","params":{"id":7}}
<-- {"method":"$/cancelRequest","params":{"id":"never-sent"}}
<-- {"method":"$/cancelRequest","params":{}}
%no-output
%log "$/cancelRequest ignored: invalid params: params.id: required field is missing"
# String ids work the same.
<-- {"id":"req-8","method":"test/block"}
<-- {"method":"$/cancelRequest","params":{"id":"req-8"}}
--> {"id":"req-8","error":{"code":-32800}}
<-- {"id":9,"method":"kernlens/sync"}
--> {"id":9,"result":null}
