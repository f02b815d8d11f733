# UTF-16 positions (the default): CJK, an emoji outside the BMP (two UTF-16 units), a
# combining mark, a position past the end of its line (clamped), several changes in one
# didChange (each relative to the previous), a full replacement.
<-- {"id":1,"method":"initialize","params":{"processId":null,"rootUri":null,
     "capabilities":{"general":{"positionEncodings":["utf-32","utf-16"]}}}}
--> {"id":1,"result":{"capabilities":{"positionEncoding":"utf-16"}}}
<-- {"method":"initialized","params":{}}
%open file:///enc.py
s = "日本🔥"  # 火
t = "é"
%end
<-- {"method":"textDocument/didChange","params":{"textDocument":{"uri":"file:///enc.py","version":2},
     "contentChanges":[
       {"range":{"start":{"line":0,"character":7},"end":{"line":0,"character":9}},"text":"!"},
       {"range":{"start":{"line":1,"character":7},"end":{"line":1,"character":7}},"text":"x"},
       {"range":{"start":{"line":0,"character":100},"end":{"line":0,"character":100}},"text":" # end"}]}}
<-- {"id":2,"method":"test/document","params":{"uri":"file:///enc.py"}}
--> {"id":2,"result":{"text":"s = \"日本!\"  # 火 # end\nt = \"e\u0301x\"\n","version":2,"lineCount":3,
     "parsed":true,"sexpEqualsFresh":true}}
<-- {"method":"textDocument/didChange","params":{"textDocument":{"uri":"file:///enc.py","version":3},
     "contentChanges":[{"text":"print('🔥')\r\n"},
       {"range":{"start":{"line":0,"character":7},"end":{"line":0,"character":9}},"text":"ok"}]}}
<-- {"id":3,"method":"test/document","params":{"uri":"file:///enc.py"}}
--> {"id":3,"result":{"text":"print('ok')\r\n","version":3,"sexpEqualsFresh":true}}
