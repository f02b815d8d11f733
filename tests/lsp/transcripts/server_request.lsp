# Server→client requests: the client's response (result or error) is routed to the callback.
<-- {"id":1,"method":"initialize","params":{"processId":null,"rootUri":null,"capabilities":{}}}
--> {"id":1,"result":"<any>"}
<-- {"id":2,"method":"test/call"}
--> {"id":1,"method":"client/thing","params":{"q":1}}
<-- {"id":1,"result":{"a":"b"}}
--> {"id":2,"result":{"a":"b"}}
<-- {"id":3,"method":"test/call"}
--> {"id":2,"method":"client/thing"}
<-- {"id":2,"error":{"code":-32601,"message":"unhandled method client/thing"}}
--> {"id":3,"error":{"code":-32803,"message":"-32601: unhandled method client/thing"}}
