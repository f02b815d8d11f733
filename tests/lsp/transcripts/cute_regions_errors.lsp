# kernlens.loadRegions errors (intra-kernel CUTE regions): a missing buffer and bad arguments are
# clear errors (RequestFailed + window/showMessage; InvalidParams naming the JSON path), nothing
# gets loaded, and the server keeps answering. Successful loads and hints: tests/unit/lsp/cute_regions_test.cpp.
<-- {"id":1,"method":"initialize","params":{"processId":null,"rootUri":null,
     "capabilities":{"workspace":{"inlayHint":{"refreshSupport":true}}}}}
--> {"id":1,"result":{"capabilities":{"inlayHintProvider":"<any>"}}}
<-- {"method":"initialized","params":{}}
%open file:///ws/kernel.py
import cutlass.cute as cute
from cutlass import Int32

TAG_LOAD = 0


@cute.kernel
def k(prof_buf: cute.Tensor, max_events: Int32):
    bidx, _, _ = cute.arch.block_idx()
    with profile_region(prof_buf, max_events, Int32(TAG_LOAD), bidx):
        x = 1
%end
<-- {"id":2,"method":"textDocument/inlayHint","params":{"textDocument":{"uri":"file:///ws/kernel.py"},
     "range":{"start":{"line":0,"character":0},"end":{"line":20,"character":0}}}}
--> {"id":2,"result":[]}

# A buffer that does not exist.
<-- {"id":3,"method":"workspace/executeCommand","params":{"command":"kernlens.loadRegions",
     "arguments":[{"path":"no/such/regions.bin","uri":"file:///ws/kernel.py"}]}}
--> {"method":"window/showMessage","params":{"type":1,"message":"<contains:no/such/regions.bin>"}}
--> {"id":3,"error":{"code":-32803,"message":"<contains:no/such/regions.bin>"}}

# Bad arguments.
<-- {"id":4,"method":"workspace/executeCommand","params":{"command":"kernlens.loadRegions","arguments":[]}}
--> {"id":4,"error":{"code":-32602,"message":"arguments[0]: expected an object"}}
<-- {"id":5,"method":"workspace/executeCommand","params":{"command":"kernlens.loadRegions",
     "arguments":[{"path":"r.bin","capacity":"12"}]}}
--> {"id":5,"error":{"code":-32602,"message":"<contains:arguments[0].capacity>"}}
<-- {"id":6,"method":"workspace/executeCommand","params":{"command":"kernlens.loadRegions",
     "arguments":[{"path":"r.bin","capacity":0}]}}
--> {"method":"window/showMessage","params":{"type":1,"message":"<contains:capacity must be a positive number>"}}
--> {"id":6,"error":{"code":-32803}}
<-- {"id":7,"method":"workspace/executeCommand","params":{"command":"kernlens.loadRegions",
     "arguments":[{"path":"r.bin","uri":"untitled:Untitled-1"}]}}
--> {"method":"window/showMessage","params":{"type":1,"message":"<contains:not an open document and not a file:// URI>"}}
--> {"id":7,"error":{"code":-32803}}

# Nothing was loaded: no hints; clearRegions with nothing loaded asks for no refresh.
<-- {"id":8,"method":"workspace/executeCommand","params":{"command":"kernlens.clearRegions","arguments":[]}}
--> {"id":8,"result":null}
<-- {"id":9,"method":"textDocument/inlayHint","params":{"textDocument":{"uri":"file:///ws/kernel.py"},
     "range":{"start":{"line":0,"character":0},"end":{"line":20,"character":0}}}}
--> {"id":9,"result":[]}
%no-output
