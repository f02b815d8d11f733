"""Write an Nsight Systems SQLite export (schema 3.25.0 column set, as in nsys-schema.sql).

Column names, order, declared types and NOT NULL flags of every table below are exactly those of
the reference DDL (docs/probe.md; tests/probe compare them against tests/data/fixtures/nsys-schema.sql).
Rows are always inserted with explicit column lists. The file is written to a temporary name in the
same directory and renamed into place, so OUT_PATH is either absent or a complete database.
"""

import os
import sqlite3
import tempfile

SCHEMA_VERSION = "3.25.0"

# (table, column definitions) - copied from the reference DDL, comments stripped.
TABLES = [
    ("StringIds", """id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL"""),
    ("META_DATA_EXPORT", """name TEXT NOT NULL, value TEXT"""),
    ("META_DATA_CAPTURE", """name TEXT NOT NULL, value TEXT"""),
    ("TARGET_INFO_SESSION_START_TIME", """utcEpochNs INTEGER, utcTime TEXT, localTime TEXT, systemClockNs INTEGER"""),
    ("ANALYSIS_DETAILS", """globalVid INTEGER NOT NULL, duration INTEGER NOT NULL, startTime INTEGER NOT NULL, stopTime INTEGER NOT NULL"""),
    ("PROCESSES", """globalPid INTEGER, pid INTEGER, name TEXT"""),
    ("ThreadNames", """nameId INTEGER NOT NULL, priority INTEGER, globalTid INTEGER"""),
    ("TARGET_INFO_GPU", """vmId INTEGER NOT NULL, id INTEGER NOT NULL, name TEXT, busLocation TEXT, isDiscrete INTEGER, l2CacheSize INTEGER, totalMemory INTEGER, memoryBandwidth INTEGER, clockRate INTEGER, smCount INTEGER, pwGpuId INTEGER, uuid TEXT, luid INTEGER, chipName TEXT, cuDevice INTEGER, ctxswDevPath TEXT, ctrlDevPath TEXT, revision INTEGER, nodeMask INTEGER, constantMemory INTEGER, maxIPC INTEGER, maxRegistersPerBlock INTEGER, maxShmemPerBlock INTEGER, maxShmemPerBlockOptin INTEGER, maxShmemPerSm INTEGER, maxRegistersPerSm INTEGER, threadsPerWarp INTEGER, asyncEngines INTEGER, maxWarpsPerSm INTEGER, maxBlocksPerSm INTEGER, maxThreadsPerBlock INTEGER, maxBlockDimX INTEGER, maxBlockDimY INTEGER, maxBlockDimZ INTEGER, maxGridDimX INTEGER, maxGridDimY INTEGER, maxGridDimZ INTEGER, computeMajor INTEGER, computeMinor INTEGER, smMajor INTEGER, smMinor INTEGER"""),
    ("TARGET_INFO_CUDA_DEVICE", """gpuId INTEGER, cudaId INTEGER NOT NULL, pid INTEGER NOT NULL, uuid TEXT, numMultiprocessors INTEGER"""),
    ("TARGET_INFO_CUDA_STREAM", """streamId INTEGER NOT NULL, hwId INTEGER NOT NULL, vmId INTEGER NOT NULL, processId INTEGER NOT NULL, contextId INTEGER NOT NULL, priority INTEGER NOT NULL, flag INTEGER NOT NULL"""),
    ("ENUM_NSYS_EVENT_TYPE", """id INTEGER NOT NULL PRIMARY KEY, name TEXT, label TEXT"""),
    ("ENUM_NSYS_EVENT_CLASS", """id INTEGER NOT NULL PRIMARY KEY, name TEXT, label TEXT"""),
    ("ENUM_CUDA_MEMCPY_OPER", """id INTEGER NOT NULL PRIMARY KEY, name TEXT, label TEXT"""),
    ("ENUM_CUDA_MEM_KIND", """id INTEGER NOT NULL PRIMARY KEY, name TEXT, label TEXT"""),
    ("ENUM_CUPTI_SYNC_TYPE", """id INTEGER NOT NULL PRIMARY KEY, name TEXT, label TEXT"""),
    ("ENUM_CUDA_KERNEL_LAUNCH_TYPE", """id INTEGER NOT NULL PRIMARY KEY, name TEXT, label TEXT"""),
    ("CUPTI_ACTIVITY_KIND_RUNTIME", """start INTEGER NOT NULL, end INTEGER NOT NULL, eventClass INTEGER NOT NULL, globalTid INTEGER, correlationId INTEGER, nameId INTEGER NOT NULL, returnValue INTEGER NOT NULL, callchainId INTEGER"""),
    ("CUPTI_ACTIVITY_KIND_KERNEL", """start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, greenContextId INTEGER, streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER, demangledName INTEGER NOT NULL, shortName INTEGER NOT NULL, mangledName INTEGER, launchType INTEGER, cacheConfig INTEGER, registersPerThread INTEGER NOT NULL, gridX INTEGER NOT NULL, gridY INTEGER NOT NULL, gridZ INTEGER NOT NULL, blockX INTEGER NOT NULL, blockY INTEGER NOT NULL, blockZ INTEGER NOT NULL, staticSharedMemory INTEGER NOT NULL, dynamicSharedMemory INTEGER NOT NULL, localMemoryPerThread INTEGER NOT NULL, localMemoryTotal INTEGER NOT NULL, gridId INTEGER NOT NULL, sharedMemoryExecuted INTEGER, graphNodeId INTEGER, sharedMemoryLimitConfig INTEGER, qmdBulkReleaseDone INTEGER, qmdPreexitDone INTEGER, qmdLastCtaDone INTEGER, graphId INTEGER, clusterX INTEGER, clusterY INTEGER, clusterZ INTEGER, clusterSchedulingPolicy INTEGER, maxPotentialClusterSize INTEGER, maxActiveClusters INTEGER, sharedMemoryRequestedPercentage INTEGER, tensorSizeMinusOneElements TEXT NOT NULL"""),
    ("CUPTI_ACTIVITY_KIND_MEMCPY", """start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, greenContextId INTEGER, streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER, bytes INTEGER NOT NULL, copyKind INTEGER NOT NULL, deprecatedSrcId INTEGER, srcKind INTEGER, dstKind INTEGER, srcDeviceId INTEGER, srcContextId INTEGER, dstDeviceId INTEGER, dstContextId INTEGER, migrationCause INTEGER, graphNodeId INTEGER, virtualAddress INTEGER, copyCount INTEGER"""),
    ("NVTX_EVENTS", """start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL, rangeId INTEGER, category INTEGER, color INTEGER, text TEXT, globalTid INTEGER, endGlobalTid INTEGER, textId INTEGER, domainId INTEGER, uint64Value INTEGER, int64Value INTEGER, doubleValue REAL, uint32Value INTEGER, int32Value INTEGER, floatValue REAL, jsonTextId INTEGER, jsonText TEXT, binaryData TEXT"""),
]

ENUM_ROWS = {
    "ENUM_NSYS_EVENT_TYPE": [
        (33, "NvtxCategory", "NvtxCategory"), (34, "NvtxMark", "NvtxMark"),
        (35, "NvtxPushRange", "NvtxPushRange"), (36, "NvtxPopRange", "NvtxPopRange"),
        (37, "NvtxStartRange", "NvtxStartRange"), (38, "NvtxEndRange", "NvtxEndRange"),
        (39, "NvtxThread", "NvtxThread"), (59, "NvtxPushPopRange", "NvtxPushPopRange"),
        (60, "NvtxStartEndRange", "NvtxStartEndRange"), (70, "NvtxtPushPopRange", "NvtxtPushPopRange"),
        (71, "NvtxtStartEndRange", "NvtxtStartEndRange"), (75, "NvtxDomainCreate", "NvtxDomainCreate"),
        (76, "NvtxDomainDestroy", "NvtxDomainDestroy")],
    "ENUM_NSYS_EVENT_CLASS": [
        (0, "TRACE_PROCESS_EVENT_CUDA_RUNTIME", "CUDA runtime"),
        (1, "TRACE_PROCESS_EVENT_CUDA_DRIVER", "CUDA driver"),
        (27, "TRACE_PROCESS_EVENT_OS_RUNTIME", "OSRT runtime"),
        (67, "TRACE_PROCESS_EVENT_CUDABACKTRACE", "CUDA backtrace"),
        (77, "TRACE_PROCESS_EVENT_CUDA_GRAPH_NODE_CREATION", "CUDA graph node creation"),
        (94, "TRACE_PROCESS_EVENT_CUDA_GRAPHEXEC_CREATION", "CUDA graph exec creation"),
        (95, "TRACE_PROCESS_EVENT_CUDA_GRAPH_CREATION", "CUDA graph creation"),
        (96, "TRACE_PROCESS_EVENT_CUDA_GRAPH_CLONE", "CUDA graph clone")],
    "ENUM_CUDA_MEMCPY_OPER": [
        (0, "CUDA_MEMCPY_KIND_UNKNOWN", "Unknown"), (1, "CUDA_MEMCPY_KIND_HTOD", "Host-to-Device"),
        (2, "CUDA_MEMCPY_KIND_DTOH", "Device-to-Host"), (3, "CUDA_MEMCPY_KIND_HTOA", "Host-to-Array"),
        (4, "CUDA_MEMCPY_KIND_ATOH", "Array-to-Host"), (5, "CUDA_MEMCPY_KIND_ATOA", "Array-to-Array"),
        (6, "CUDA_MEMCPY_KIND_ATOD", "Array-to-Device"), (7, "CUDA_MEMCPY_KIND_DTOA", "Device-to-Array"),
        (8, "CUDA_MEMCPY_KIND_DTOD", "Device-to-Device"), (9, "CUDA_MEMCPY_KIND_HTOH", "Host-to-Host"),
        (10, "CUDA_MEMCPY_KIND_PTOP", "Peer-to-Peer"), (11, "CUDA_MEMCPY_KIND_UVM_HTOD", "Unified Host-to-Device"),
        (12, "CUDA_MEMCPY_KIND_UVM_DTOH", "Unified Device-to-Host"),
        (13, "CUDA_MEMCPY_KIND_UVM_DTOD", "Unified Device-to-Device")],
    "ENUM_CUDA_MEM_KIND": [
        (0, "CUDA_MEMOPR_MEMORY_KIND_PAGEABLE", "Pageable"), (1, "CUDA_MEMOPR_MEMORY_KIND_PINNED", "Pinned"),
        (2, "CUDA_MEMOPR_MEMORY_KIND_DEVICE", "Device"), (3, "CUDA_MEMOPR_MEMORY_KIND_ARRAY", "Array"),
        (4, "CUDA_MEMOPR_MEMORY_KIND_MANAGED", "Managed"),
        (5, "CUDA_MEMOPR_MEMORY_KIND_DEVICE_STATIC", "Device Static"),
        (6, "CUDA_MEMOPR_MEMORY_KIND_MANAGED_STATIC", "Managed Static"),
        (7, "CUDA_MEMOPR_MEMORY_KIND_UNKNOWN", "Unknown")],
    "ENUM_CUPTI_SYNC_TYPE": [
        (0, "CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_UNKNOWN", "Unknown"),
        (1, "CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE", "Event sync"),
        (2, "CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT", "Stream wait sync"),
        (3, "CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE", "Stream sync"),
        (4, "CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE", "Context sync")],
    "ENUM_CUDA_KERNEL_LAUNCH_TYPE": [
        (0, "CUDA_KERNEL_LAUNCH_TYPE_UNKNOWN", "Unknown"), (1, "CUDA_KERNEL_LAUNCH_TYPE_REGULAR", "Regular"),
        (2, "CUDA_KERNEL_LAUNCH_TYPE_COOPERATIVE_SINGLE_DEVICE", "Coop Single Device"),
        (3, "CUDA_KERNEL_LAUNCH_TYPE_COOPERATIVE_MULTI_DEVICE", "Coop Multi Device")],
}

VM_ID = 1 << 48


def global_tid(pid, tid):
    """Serialized nsys thread id: VM id 1 in bits 48..55, PID in 24..47, TID in 0..23."""
    return VM_ID | ((pid & 0xFFFFFF) << 24) | (tid & 0xFFFFFF)


def global_pid(pid):
    return VM_ID | ((pid & 0xFFFFFF) << 24)


def columns(table):
    for name, ddl in TABLES:
        if name == table:
            return [c.strip().split()[0] for c in ddl.split(",")]
    raise KeyError(table)


def write(path, rows):
    """Creates every table of TABLES, seeds the ENUM tables and inserts rows.

    rows: {table: list of dicts (column -> value)}. Unknown tables/columns raise KeyError, so a
    typo can never produce a file that silently lacks data.
    """
    directory = os.path.dirname(os.path.abspath(path)) or "."
    fd, tmp = tempfile.mkstemp(prefix=".kernlens-export-", suffix=".sqlite", dir=directory)
    os.close(fd)
    try:
        conn = sqlite3.connect(tmp)
        try:
            for name, ddl in TABLES:
                conn.execute("CREATE TABLE %s (%s)" % (name, ddl))
            for name, enum_rows in ENUM_ROWS.items():
                conn.executemany("INSERT INTO %s (id, name, label) VALUES (?, ?, ?)" % name, enum_rows)
            for table, dict_rows in rows.items():
                if not dict_rows:
                    continue
                cols = columns(table)
                keys = {k for r in dict_rows for k in r}
                for k in keys:
                    if k not in cols:
                        raise KeyError("%s.%s" % (table, k))
                used = sorted(keys, key=cols.index)
                sql = 'INSERT INTO %s (%s) VALUES (%s)' % (
                    table, ", ".join('"%s"' % c for c in used), ", ".join("?" * len(used)))
                conn.executemany(sql, [tuple(r.get(c) for c in used) for r in dict_rows])
            conn.commit()
        finally:
            conn.close()
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
