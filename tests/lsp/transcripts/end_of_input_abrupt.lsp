# The client dies mid-message: the cut-off message is reported, the server exits with 1.
<-- {"id":1,"method":"initialize","params":{"processId":null,"rootUri":null,"capabilities":{}}}
--> {"id":1,"result":"<any>"}
<~~ "Content-Length: 100\r\n\r\n{\"jsonrpc\":"
%close-input
%exit-code 1
%log "input ended inside a message body"
