# A client that offers UTF-8 gets UTF-8: characters count bytes.
<-- {"id":1,"method":"initialize","params":{"processId":null,"rootUri":null,
     "capabilities":{"general":{"positionEncodings":["utf-8","utf-16"]}}}}
--> {"id":1,"result":{"capabilities":{"positionEncoding":"utf-8"}}}
<-- {"method":"initialized","params":{}}
%open file:///enc8.py
s = "日本🔥"
%end
# the emoji is bytes 11..15 of line 0
<-- {"method":"textDocument/didChange","params":{"textDocument":{"uri":"file:///enc8.py","version":2},
     "contentChanges":[{"range":{"start":{"line":0,"character":11},"end":{"line":0,"character":15}},"text":"!"}]}}
<-- {"id":2,"method":"test/document","params":{"uri":"file:///enc8.py"}}
--> {"id":2,"result":{"text":"s = \"日本!\"\n","version":2,"sexpEqualsFresh":true}}
