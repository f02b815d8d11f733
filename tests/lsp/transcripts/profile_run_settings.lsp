# kernlens.profileFunction with a workspace but no `entry` setting, a position outside any
# function, a document that is not open, a file outside the workspace, a bad backend setting.
<-- {"id":1,"method":"initialize","params":{"processId":null,"rootUri":"file:///tmp","capabilities":{},"initializationOptions":{"kernlens":{}}}}
--> {"id":1,"result":"<any>"}
<-- {"method":"initialized","params":{}}
%open file:///tmp/kl_profile_run_m.py
import torch

def f(x):
    return x * 2
%end
<-- {"id":2,"method":"workspace/executeCommand","params":{"command":"kernlens.profileFunction","arguments":[{"uri":"file:///tmp/kl_profile_run_m.py","function":"f"}]}}
--> {"id":2,"error":{"code":-32803,"message":"<contains:set the `kernlens.entry` setting>"}}
<-- {"id":3,"method":"workspace/executeCommand","params":{"command":"kernlens.profileFunction","arguments":[{"uri":"file:///tmp/kl_profile_run_m.py","position":{"line":0,"character":3}}]}}
--> {"id":3,"error":{"code":-32803,"message":"kernlens.profileFunction: no function at that position"}}
<-- {"id":4,"method":"workspace/executeCommand","params":{"command":"kernlens.profileFunction","arguments":[{"uri":"file:///tmp/kl_not_open.py","position":{"line":0,"character":0}}]}}
--> {"id":4,"error":{"code":-32602,"message":"kernlens.profileFunction: file:///tmp/kl_not_open.py is not open"}}
<-- {"id":5,"method":"workspace/executeCommand","params":{"command":"kernlens.profileFunction","arguments":[{"uri":"file:///etc/x.py","function":"f"}]}}
--> {"id":5,"error":{"code":-32602,"message":"<contains:is not a file of the workspace>"}}
<-- {"method":"workspace/didChangeConfiguration","params":{"settings":{"kernlens":{"entry":"python m.py","backend":"cuda"}}}}
<-- {"id":6,"method":"workspace/executeCommand","params":{"command":"kernlens.profileFunction","arguments":[{"uri":"file:///tmp/kl_profile_run_m.py","function":"f"}]}}
--> {"id":6,"error":{"code":-32803,"message":"kernlens.backend: unknown backend 'cuda' (use nsys, torch or emulate)"}}
%no-output
