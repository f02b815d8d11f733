# kernlens.profileFunction / kernlens.cancel without a workspace folder or an entry setting:
# clear errors, nothing started; cancel with no run going answers false.
<-- {"id":1,"method":"initialize","params":{"processId":null,"rootUri":null,"capabilities":{}}}
--> {"id":1,"result":{"capabilities":{"executeCommandProvider":{"commands":"<any>"}}}}
<-- {"method":"initialized","params":{}}
<-- {"id":2,"method":"workspace/executeCommand","params":{"command":"kernlens.cancel","arguments":[]}}
--> {"id":2,"result":{"cancelled":false}}
<-- {"id":3,"method":"workspace/executeCommand","params":{"command":"kernlens.profileFunction","arguments":[{"uri":"file:///ws/m.py","function":"f"}]}}
--> {"id":3,"error":{"code":-32803,"message":"kernlens.profileFunction: open a workspace folder first"}}
<-- {"id":4,"method":"workspace/executeCommand","params":{"command":"kernlens.profileFunction","arguments":[{"function":"f"}]}}
--> {"id":4,"error":{"code":-32602,"message":"<contains:uri>"}}
%no-output
