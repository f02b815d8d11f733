# Settings: initializationOptions.kernlens, then workspace/didChangeConfiguration.
<-- {"id":1,"method":"initialize","params":{"processId":null,"rootUri":null,"capabilities":{},
     "initializationOptions":{"kernlens":{"entry":"python train.py","hints":{"minShare":0.05}}}}}
--> {"id":1,"result":"<any>"}
<-- {"method":"initialized","params":{}}
<-- {"id":2,"method":"test/setting","params":{"key":"entry"}}
--> {"id":2,"result":"python train.py"}
<-- {"id":3,"method":"test/setting","params":{"key":"hints.minShare"}}
--> {"id":3,"result":0.05}
<-- {"method":"workspace/didChangeConfiguration","params":{"settings":{"kernlens":{"entry":"python eval.py"}}}}
<-- {"id":4,"method":"test/setting","params":{"key":"entry"}}
--> {"id":4,"result":"python eval.py"}
<-- {"id":5,"method":"test/setting","params":{"key":"hints.minShare"}}
--> {"id":5,"result":null}
