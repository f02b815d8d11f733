# initialize: the capabilities declare only what is implemented; UTF-16 unless the client
# offers UTF-8; serverInfo names the server.
<-- {"id":1,"method":"initialize","params":{"processId":null,"rootUri":"file:///ws","capabilities":{}}}
--> {"id":1,"result":{
       "capabilities":{"positionEncoding":"utf-16",
                       "textDocumentSync":{"openClose":true,"change":2},
                       "completionProvider":"<absent>","definitionProvider":"<absent>",
                       "semanticTokensProvider":"<absent>","documentSymbolProvider":"<absent>"},
       "serverInfo":{"name":"kernlens","version":"<any>"}}}
<-- {"method":"initialized","params":{}}
%no-output
<-- {"id":2,"method":"shutdown"}
--> {"id":2,"result":null}
<-- {"method":"exit"}
%exit-code 0
