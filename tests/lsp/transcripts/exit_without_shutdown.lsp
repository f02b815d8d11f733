# exit without shutdown: exit code 1 (LSP spec).
<-- {"id":1,"method":"initialize","params":{"processId":null,"rootUri":null,"capabilities":{}}}
--> {"id":1,"result":"<any>"}
<-- {"method":"initialized","params":{}}
<-- {"method":"exit"}
%exit-code 1
