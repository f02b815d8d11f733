# Malformed input never stops the server: each problem is logged and it keeps serving.
# A body that is not JSON is answered with a parse error (-32700; id null unless one can still
# be read from the text); nothing is answered for a message that cannot be framed.
<~~ "Content-Length: abc\r\n\r\n{}"
%log "invalid Content-Length"
<~~ "Content-Length: 9\r\n\r\n{not json"
--> {"id":null,"error":{"code":-32700,"message":"<any>"}}
%log "not valid JSON"
<~~ "Content-Type: text/plain\r\n\r\n{\"id\":99}"
%log "without Content-Length"
<~~ "Content-Length: 5\r\n\r\n[1,2]"
%log "not a JSON object"
<~~ "Content-Length: 15\r\n\r\n\"just a string\""
%log "not a JSON object"
<~~ "garbage line\r\n\r\n"
%log "malformed header line"
%no-output
# A message split across two writes is put back together.
<~~ "Content-Length: 107\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initiali"
%no-output
<~~ "ze\",\"params\":{\"processId\":null,\"rootUri\":null,\"capabilities\":{}}}"
--> {"id":1,"result":{"capabilities":"<any>"}}
# Two messages in one write, with junk glued in front of the second header: the junk is
# reported and the frame right after it is still served (resynchronised inside the junk).
<~~ "Content-Length: 60\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"test/echo\",\"params\":\"two\"}junk!Content-Length: 62\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"test/echo\",\"params\":\"three\"}"
--> {"id":2,"result":"two"}
--> {"id":3,"result":"three"}
%log "message header"
# Body bytes that are not UTF-8 make invalid JSON, not a crash.
<~~ "Content-Length: 59\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"test/echo\",\"params\":\"\xff\xfe\"}"
--> {"id":4,"error":{"code":-32700,"message":"<any>"}}
%log "not valid JSON"
<-- {"id":5,"method":"test/echo","params":"still serving"}
--> {"id":5,"result":"still serving"}
