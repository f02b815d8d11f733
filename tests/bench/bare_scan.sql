/* The columns attribution reads from an nsys SQLite export, aggregated so that every value is
   decoded and nothing is printed per row (total(): a float sum, which cannot overflow on packed
   ids). Strings: kernlens interns every StringIds value once. The baseline of
   attribution_bench.sh and lsp_bench.py (kernlens.loadProfile). */
SELECT count(*), total(start), total("end"), total(deviceId), total(streamId), total(correlationId),
       total(globalPid), total(demangledName), total(shortName) FROM CUPTI_ACTIVITY_KIND_KERNEL;
SELECT count(*), total(start), total("end"), total(eventClass), total(globalTid), total(correlationId),
       total(nameId) FROM CUPTI_ACTIVITY_KIND_RUNTIME;
SELECT count(*), total(start), total("end"), total(eventType), total(globalTid), total(endGlobalTid),
       total(length(text)), total(textId), total(domainId), total(category)
  FROM NVTX_EVENTS WHERE eventType IN (34, 59, 60, 70, 71);
SELECT count(*), total(length(value)) FROM StringIds;
