#include "core/analysis/report.h"

#include <algorithm>
#include <map>
#include <sstream>
#include <unordered_map>
#include <vector>

#include "core/analysis/critical_path.h"
#include "core/analysis/diagnose.h"
#include "core/analysis/gaps.h"
#include "core/analysis/info.h"
#include "core/analysis/iters.h"
#include "core/analysis/launch.h"
#include "core/analysis/memcpy.h"
#include "core/analysis/mfu.h"
#include "core/analysis/nccl.h"
#include "core/analysis/overlap.h"
#include "core/analysis/streams.h"
#include "core/analysis/summary.h"
#include "core/analysis/sync.h"
#include "core/analysis/threads.h"
#include "core/analysis/tree.h"
#include "core/support/json_writer.h"
#include "core/support/saturating.h"

namespace kl::analysis {
namespace {

struct Item {
  int64_t start, end;
  StrId name;
};

struct Lane {
  std::string label, kind;  // kind: "gpu" | "range"
  std::vector<Item> items;
  int64_t busy = 0;
};

/// Merges items (sorted by start) closer than `res` ns; emits [start, end, nameIndex, count].
void writeRects(json::Writer& w, std::vector<Item>& items, int64_t origin, int64_t res, size_t maxRects,
                std::unordered_map<StrId, uint32_t>& nameIndex, std::vector<StrId>& names) {
  std::sort(items.begin(), items.end(), [](const Item& a, const Item& b) { return a.start < b.start; });
  for (int attempt = 0;; ++attempt) {
    struct Rect {
      int64_t s, e;
      StrId name;
      int64_t longest;
      uint64_t n;
    };
    std::vector<Rect> rects;
    for (const auto& it : items) {
      if (!rects.empty() && it.start - rects.back().e < res) {
        auto& r = rects.back();
        r.e = std::max(r.e, it.end);
        ++r.n;
        if (it.end - it.start > r.longest) {
          r.longest = it.end - it.start;
          r.name = it.name;
        }
      } else {
        rects.push_back({it.start, it.end, it.name, it.end - it.start, 1});
      }
    }
    if (rects.size() > maxRects && attempt < 20) {
      res = res * 2 + 1;
      continue;
    }
    w.beginArray();
    for (const auto& r : rects) {
      auto [pos, added] = nameIndex.emplace(r.name, static_cast<uint32_t>(names.size()));
      if (added) names.push_back(r.name);
      w.beginArray().value(r.s - origin).value(r.e - origin).value(pos->second).value(r.n).endArray();
    }
    w.endArray();
    return;
  }
}

void writeTimeline(json::Writer& w, const View& v, const ReportOptions& o) {
  const auto& m = v.m;
  std::map<StreamKey, Lane> gpu;
  for (uint32_t i : v.ops) {
    const auto& op = m.gpuOps[i];
    auto& l = gpu[streamOf(op)];
    l.items.push_back({op.start, op.end, op.name});
    addTo(l.busy, op.duration());
  }
  // Range lanes: per thread, depth by strict nesting (greedy, like the Perfetto export).
  std::map<std::pair<uint32_t, uint32_t>, Lane> ranges;
  std::vector<std::vector<uint32_t>> perThread(m.threads.size());
  for (uint32_t i = 0; i < m.ranges.size(); ++i) {
    const auto& r = m.ranges[i];
    if (!v.inWindow(r.start) || r.thread >= m.threads.size() || r.end <= r.start) continue;
    if (r.kind == profile::RangeKind::NvtxPushPop || r.kind == profile::RangeKind::NvtxStartEnd ||
        r.kind == profile::RangeKind::UserAnnotation)
      perThread[r.thread].push_back(i);
  }
  for (uint32_t t = 0; t < perThread.size(); ++t) {
    std::vector<int64_t> stack;        // open ends
    for (uint32_t i : perThread[t]) {  // model order = (start, end desc)
      const auto& r = m.ranges[i];
      while (!stack.empty() && stack.back() <= r.start) stack.pop_back();
      auto depth = static_cast<uint32_t>(stack.size());
      stack.push_back(r.end);
      if (depth >= 6) continue;
      auto& l = ranges[{t, depth}];
      l.items.push_back({r.start, r.end, r.text});
      addTo(l.busy, r.end - r.start);
    }
  }
  std::vector<Lane> lanes;
  std::vector<Lane> gl, rl;
  for (auto& [k, l] : gpu) {
    l.kind = "gpu";
    l.label = (m.meta.numRanks > 1 ? "r" + std::to_string(k.rank) + " " : std::string()) + "GPU " +
              std::to_string(k.device) + " stream " + std::to_string(k.stream);
    gl.push_back(std::move(l));
  }
  for (auto& [k, l] : ranges) {
    const auto& th = m.threads[k.first];
    l.kind = "range";
    l.label = (m.meta.numRanks > 1 ? "r" + std::to_string(m.processes[th.process].rank) + " " : std::string()) +
              "tid " + std::to_string(th.tid) + " d" + std::to_string(k.second);
    rl.push_back(std::move(l));
  }
  auto keepBusiest = [](std::vector<Lane>& ls, size_t n) {
    if (ls.size() <= n) return;
    std::vector<size_t> idx(ls.size());
    for (size_t i = 0; i < idx.size(); ++i) idx[i] = i;
    std::stable_sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return ls[a].busy > ls[b].busy; });
    idx.resize(n);
    std::sort(idx.begin(), idx.end());
    std::vector<Lane> out;
    for (size_t i : idx) out.push_back(std::move(ls[i]));
    ls = std::move(out);
  };
  keepBusiest(gl, 96);
  keepBusiest(rl, 96);
  int64_t t0 = v.winStart, t1 = std::min(v.winEnd, m.meta.spanEnd);
  for (uint32_t i : v.ops) t1 = std::max(t1, m.gpuOps[i].end);
  int64_t res = std::max<int64_t>(1, (t1 - t0) / 4000);
  std::unordered_map<StrId, uint32_t> nameIndex;
  std::vector<StrId> names;
  w.beginObject().field("start_ns", v.rel(t0)).field("end_ns", v.rel(t1)).field("merge_ns", res);
  w.key("lanes").beginArray();
  for (auto* group : {&gl, &rl}) {
    for (auto& l : *group) {
      w.beginObject().field("label", l.label).field("kind", l.kind).field("items", l.items.size()).key("rects");
      writeRects(w, l.items, v.origin, res, o.maxRectsPerLane, nameIndex, names);
      w.endObject();
    }
  }
  w.endArray();
  w.key("names").beginArray();
  for (StrId n : names) w.value(m.str(n));
  w.endArray().endObject();
}

const char* kHead = R"HTML(<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:">
<title>kernlens report</title>
<style>
body{font:13px/1.4 system-ui,-apple-system,Segoe UI,sans-serif;margin:0;color:#1d2330;background:#f6f7f9}
header{background:#1d2330;color:#fff;padding:12px 20px}header h1{font-size:18px;margin:0}
header .sub{opacity:.75;font-size:12px}.emu{background:#b3261e;color:#fff;padding:6px 20px;font-weight:600}
main{padding:12px 20px}section{background:#fff;border:1px solid #dde1e7;border-radius:6px;margin:0 0 14px;padding:10px 14px}
h2{font-size:15px;margin:4px 0 8px}table{border-collapse:collapse;width:100%;font-size:12px}
th,td{border-bottom:1px solid #eceff3;padding:3px 6px;text-align:left;vertical-align:top}
th{background:#f0f2f5;position:sticky;top:0}td.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
td.name{max-width:560px;overflow:hidden;text-overflow:ellipsis;white-space:nowrap}
#tl-wrap{overflow:hidden;border:1px solid #dde1e7}#tl-ctl{margin:0 0 6px}#tl-ctl button{margin-right:4px}
.lane-label{font-size:10px;fill:#333}.finding{border-left:4px solid #888;padding:4px 10px;margin:8px 0}
.finding.high{border-color:#b3261e}.finding.medium{border-color:#e08a00}.finding.low{border-color:#3a7bd5}
.facts li{margin:2px 0}.hyp{font-style:italic;color:#444}.muted{color:#777}
.tree td:first-child{white-space:pre;font-family:ui-monospace,monospace}
</style></head><body>
)HTML";

// The page formats its numbers in the browser: dur() and pct() follow the rules of
// core/support/format.h (formatDuration: 3 significant digits; formatShare with ShareDigits::Table).
const char* kScript = R"HTML(<script>
(function(){
'use strict';
var D = JSON.parse(document.getElementById('kl-data').textContent);
function el(tag, attrs, text){var e=document.createElement(tag);if(attrs)for(var k in attrs)e.setAttribute(k,attrs[k]);if(text!==undefined)e.textContent=text;return e;}
function svg(tag, attrs){var e=document.createElementNS('http://www.w3.org/2000/svg',tag);for(var k in attrs)e.setAttribute(k,attrs[k]);return e;}
function s3(v,u){var b=Math.abs(v);return v.toFixed(b>=100||b==0?0:b>=10?1:2)+' '+u;}
function dur(ns){var a=Math.abs(ns);if(a<1e3)return ns.toFixed(0)+' ns';if(a<1e6)return s3(ns/1e3,'\u00b5s');if(a<1e9)return s3(ns/1e6,'ms');return s3(ns/1e9,'s');}
function pct(f){return (100*f).toFixed(1)+' %';}
function bytes(b){var u=['B','KiB','MiB','GiB','TiB'],i=0;while(Math.abs(b)>=1024&&i<4){b/=1024;i++;}return b.toFixed(i?2:0)+' '+u[i];}
function table(id, cols, rows){
  var host=document.getElementById(id); if(!host) return;
  if(!rows||!rows.length){host.appendChild(el('p',{'class':'muted'},'(none)'));return;}
  var t=el('table'),h=el('tr');cols.forEach(function(c){h.appendChild(el('th',null,c[0]));});t.appendChild(h);
  rows.forEach(function(r){var tr=el('tr');cols.forEach(function(c){var v=c[1](r);var td=el('td',{'class':c[2]||''},v===undefined||v===null?'':String(v));if(c[2]==='name')td.title=String(v);tr.appendChild(td);});t.appendChild(tr);});
  host.appendChild(t);
}
function color(i){var h=(i*137.508)%360;return 'hsl('+h.toFixed(0)+',55%,55%)';}
// ---- header ----
var I=D.info;
document.getElementById('title').textContent='kernlens report: '+D.title;
document.getElementById('sub').textContent=I.format+' '+I.tool_version+' \u00b7 span '+dur(I.span_ns)+' \u00b7 '+I.counts.kernels+' kernels, '+I.counts.memcpys+' memcpy, '+I.counts.memsets+' memset \u00b7 '+I.ranks+' rank(s)'+(I.gpus.filter(function(g){return g.name;}).length?' \u00b7 '+I.gpus.filter(function(g){return g.name;}).map(function(g){return g.name;}).join(', '):'');
if(I.emulated){var b=document.getElementById('emu');b.style.display='block';b.textContent='EMULATED profile: kernels and durations are modelled by kernlens, not measured on a GPU.';}
// ---- timeline ----
var T=D.timeline, W=1400, LH=16, LW=170, t0=T.start_ns, t1=T.end_ns;
function drawTimeline(){
  var host=document.getElementById('timeline-host'); host.innerHTML='';
  var H=T.lanes.length*LH+24;
  var s=svg('svg',{id:'timeline',width:W,height:H,viewBox:'0 0 '+W+' '+H});
  var span=Math.max(1,t1-t0), sc=(W-LW)/span;
  for(var k=0;k<=10;k++){var x=LW+k*(W-LW)/10;s.appendChild(svg('line',{x1:x,y1:0,x2:x,y2:H,stroke:'#eee'}));var tx=svg('text',{x:x+2,y:H-6,'class':'lane-label'});tx.textContent=dur(t0+k*span/10);s.appendChild(tx);}
  T.lanes.forEach(function(L,li){
    var g=svg('g',{'class':'lane lane-'+L.kind,'data-label':L.label}); var y=li*LH;
    g.appendChild(svg('rect',{x:0,y:y,width:W,height:LH,fill:li%2?'#fafbfc':'#fff'}));
    var lab=svg('text',{x:4,y:y+12,'class':'lane-label'});lab.textContent=L.label;g.appendChild(lab);
    L.rects.forEach(function(r){
      if(r[1]<t0||r[0]>t1)return;
      var x=LW+Math.max(0,(r[0]-t0)*sc), x2=LW+Math.min(W-LW,(r[1]-t0)*sc);
      var rc=svg('rect',{x:x.toFixed(1),y:y+2,width:Math.max(0.5,x2-x).toFixed(1),height:LH-4,fill:color(r[2]),'class':'item'});
      var ti=svg('title',{});ti.textContent=D.timeline.names[r[2]]+(r[3]>1?' (+'+(r[3]-1)+' merged)':'')+'\n'+dur(r[0])+' .. '+dur(r[1])+' ('+dur(r[1]-r[0])+')';
      rc.appendChild(ti); g.appendChild(rc);
    });
    s.appendChild(g);
  });
  host.appendChild(s);
  document.getElementById('tl-range').textContent=dur(t0)+' .. '+dur(t1)+' (items closer than '+dur(T.merge_ns)+' are merged)';
  s.addEventListener('wheel',function(ev){ev.preventDefault();var f=ev.deltaY>0?1.25:0.8;var rect=s.getBoundingClientRect();var px=Math.max(0,ev.clientX-rect.left-LW)/(W-LW);var c=t0+px*(t1-t0);t0=c-(c-t0)*f;t1=c+(t1-c)*f;if(t0<T.start_ns)t0=T.start_ns;if(t1>T.end_ns)t1=T.end_ns;drawTimeline();},{passive:false});
}
document.getElementById('tl-reset').onclick=function(){t0=T.start_ns;t1=T.end_ns;drawTimeline();};
document.getElementById('tl-in').onclick=function(){var c=(t0+t1)/2,h=(t1-t0)/4;t0=c-h;t1=c+h;drawTimeline();};
document.getElementById('tl-out').onclick=function(){var c=(t0+t1)/2,h=(t1-t0);t0=Math.max(T.start_ns,c-h);t1=Math.min(T.end_ns,c+h);drawTimeline();};
drawTimeline();
// ---- tables ----
var S=D.summary;
table('top-kernels',[['kernel',function(r){return r.name;},'name'],['count',function(r){return r.count;},'n'],['total',function(r){return dur(r.total_ns);},'n'],['mean',function(r){return dur(r.mean_ns);},'n'],['min',function(r){return dur(r.min_ns);},'n'],['max',function(r){return dur(r.max_ns);},'n'],['share',function(r){return pct(r.share);},'n']],S.top_kernels);
table('streams',[['rank',function(r){return r.rank;},'n'],['device',function(r){return r.device;},'n'],['stream',function(r){return r.stream;},'n'],['kernels',function(r){return r.kernels;},'n'],['kernel time',function(r){return dur(r.kernel_ns);},'n'],['memcpy',function(r){return dur(r.memcpy_ns);},'n'],['busy',function(r){return dur(r.busy_ns);},'n'],['top kernel',function(r){return r.top_kernel;},'name']],S.streams);
table('overlap',[['rank',function(r){return r.rank;},'n'],['device',function(r){return r.device;},'n'],['active span',function(r){return dur(r.active_span_ns);},'n'],['busy',function(r){return dur(r.busy_ns);},'n'],['compute',function(r){return dur(r.compute_ns);},'n'],['nccl',function(r){return dur(r.nccl_ns);},'n'],['memory',function(r){return dur(r.memory_ns);},'n'],['compute\u2229nccl',function(r){return dur(r.compute_nccl_overlap_ns);},'n'],['nccl exposed',function(r){return dur(r.nccl_exposed_ns);},'n'],['idle',function(r){return dur(r.idle_ns);},'n']],D.overlap.devices);
table('gaps',[['rank',function(r){return r.rank;},'n'],['device',function(r){return r.device;},'n'],['start',function(r){return dur(r.start_ns);},'n'],['gap',function(r){return dur(r.duration_ns);},'n'],['before',function(r){return r.before;},'name'],['after',function(r){return r.after;},'name'],['launch during gap',function(r){return r.after_launch?(r.after_launch.during_gap?'yes':'no'):'';}],['CPU busiest in',function(r){return r.cpu_api.length?r.cpu_api[0].name+' ('+dur(r.cpu_api[0].ns)+')':'';},'name']],D.gaps.gaps);
table('nccl',[['type',function(r){return r.type;}],['count',function(r){return r.count;},'n'],['total',function(r){return dur(r.total_ns);},'n'],['mean',function(r){return dur(r.mean_ns);},'n'],['overlapped',function(r){return dur(r.overlapped_with_compute_ns);},'n'],['exposed',function(r){return dur(r.exposed_ns);},'n']],D.nccl.collectives);
table('memcpy',[['kind',function(r){return r.kind;}],['memory',function(r){return r.memory;}],['count',function(r){return r.count;},'n'],['bytes',function(r){return bytes(r.bytes);},'n'],['time',function(r){return dur(r.total_ns);},'n'],['avg GB/s',function(r){return r.avg_gbps.toFixed(2);},'n']],D.memcpy.kinds);
table('launch',[['kernel',function(r){return r.name;},'name'],['count',function(r){return r.count;},'n'],['launch call',function(r){return dur(r.mean_launch_overhead_ns);},'n'],['queue delay',function(r){return dur(r.mean_queue_delay_ns);},'n'],['max queue',function(r){return dur(r.max_queue_delay_ns);},'n'],['GPU',function(r){return dur(r.mean_gpu_ns);},'n']],D.launch.kernels);
table('threads',[['pid',function(r){return r.pid;},'n'],['tid',function(r){return r.tid;},'n'],['name',function(r){return r.name;},'name'],['launches',function(r){return r.launches;},'n'],['ops',function(r){return r.ops;},'n'],['GPU time',function(r){return dur(r.gpu_ns);},'n'],['API calls',function(r){return r.api_calls;},'n'],['sync',function(r){return dur(r.sync_ns);},'n']],D.threads.threads);
table('sync',[['call site [ATen op]',function(r){return r.site||'(unknown call site)';},'name'],['calls',function(r){return r.calls;},'n'],['blocked',function(r){return dur(r.total_ns);},'n'],['max',function(r){return dur(r.max_ns);},'n'],['kinds',function(r){return r.kinds;}]],D.sync.by_site.slice(0,30));
document.getElementById('sync-total').textContent=D.sync.calls+' sync calls, CPU blocked '+dur(D.sync.blocked_ns)+' (explicit '+dur(D.sync.explicit_ns)+', implicit '+dur(D.sync.implicit_ns)+')';
table('concurrency',[['rank',function(r){return r.rank;},'n'],['device',function(r){return r.device;},'n'],['streams',function(r){return r.streams.length;},'n'],['active span',function(r){return dur(r.active_span_ns);},'n'],['0 busy',function(r){return dur(r.idle_ns);},'n'],['1 busy',function(r){return dur(r.one_stream_ns);},'n'],['2+ busy',function(r){return dur(r.multi_stream_ns);},'n'],['max',function(r){return r.max_concurrent_streams;},'n'],['queued pairs',function(r){return r.queued_pairs;},'n'],['serialised',function(r){return dur(r.serialised_ns);},'n']],D.streams.devices);
table('serialised',[['rank/dev/stream',function(r){return r.rank+'/'+r.device+'/'+r.stream;}],['pairs',function(r){return r.count;},'n'],['serialised',function(r){return dur(r.serialised_ns);},'n'],['A',function(r){return r.first;},'name'],['B',function(r){return r.second;},'name']],D.streams.serialised_pairs);
document.getElementById('cp-total').textContent=D.critical_path.iterations_count+' iterations ('+D.critical_path.method+'), '+D.critical_path.launch_bound_iterations+' launch-bound; GPU waited for the CPU '+dur(D.critical_path.gpu_wait_cpu_ns);
table('critical-path',[['iteration',function(r){return r.label;},'name'],['rank',function(r){return r.rank;},'n'],['ops',function(r){return r.ops;},'n'],['wall',function(r){return dur(r.wall_ns);},'n'],['GPU busy',function(r){return dur(r.gpu_busy_ns);},'n'],['CPU lead',function(r){return dur(r.cpu_lead_ns);},'n'],['GPU waits CPU',function(r){return dur(r.gpu_wait_cpu_ns);},'n'],['other idle',function(r){return dur(r.other_idle_ns);},'n'],['CPU tail',function(r){return dur(r.cpu_tail_ns);},'n'],['bound',function(r){return r.bound;}]],D.critical_path.iterations);
function tf(x){return x===null||x===undefined?'-':(x/1e12).toFixed(1)+' TFLOP/s';}
function pc(x){return x===null||x===undefined?'-':pct(x);}
document.getElementById('mfu-source').textContent='FLOPs from: '+D.mfu.source;
table('mfu',[['rank',function(r){return r.rank;},'n'],['device',function(r){return r.device;},'n'],['GPU',function(r){return r.gpu;},'name'],['peak table',function(r){return r.peak_model;}],['FLOPs',function(r){return r.flops.toExponential(3);},'n'],['in kernels',function(r){return tf(r.achieved_flops_per_s_in_kernels);},'n'],['kernel MFU',function(r){return pc(r.kernel_mfu);},'n'],['over span',function(r){return tf(r.achieved_flops_per_s_over_span);},'n'],['run MFU',function(r){return pc(r.run_mfu);},'n']],D.mfu.devices);
table('mfu-lines',[['call site',function(r){return r.site||'(unknown)';},'name'],['calls',function(r){return r.invocations;},'n'],['FLOPs',function(r){return r.flops.toExponential(3);},'n'],['kernel time',function(r){return dur(r.kernel_ns);},'n'],['achieved',function(r){return tf(r.achieved_flops_per_s);},'n'],['MFU',function(r){return pc(r.mfu);},'n']],D.mfu.lines);
function gb(x){return x===null||x===undefined?'-':x.toFixed(1);}
table('nccl-payloads',[['type',function(r){return r.type;}],['algo',function(r){return r.algorithm;}],['proto',function(r){return r.protocol;}],['size',function(r){return r.bytes<0?'?':bytes(r.bytes);},'n'],['ranks',function(r){return r.ranks;},'n'],['count',function(r){return r.count;},'n'],['total',function(r){return dur(r.total_ns);},'n'],['busbw GB/s',function(r){return gb(r.busbw_gb_per_s);},'n'],['link GB/s',function(r){return gb(r.link_peak_gb_per_s);},'n'],['of link',function(r){return pc(r.busbw_of_peak);},'n']],D.nccl.payloads);
table('nccl-stragglers',[['rank',function(r){return r.rank;},'n'],['calls',function(r){return r.calls;},'n'],['last to arrive',function(r){return r.last_arrivals;},'n'],['waited for others',function(r){return dur(r.waited_ns);},'n'],['made others wait',function(r){return dur(r.caused_ns);},'n']],D.nccl.straggler_ranks);
document.getElementById('iters-method').textContent='method: '+D.iters.method+' \u2014 '+D.iters.detail;
table('iters',[['iteration',function(r){return r.label;},'name'],['start',function(r){return dur(r.start_ns);},'n'],['duration',function(r){return dur(r.duration_ns);},'n'],['ops',function(r){return r.ops;},'n'],['GPU time',function(r){return dur(r.gpu_ns);},'n']],D.iters.iterations);
var rows=[];(function walk(ns){ns.forEach(function(n){rows.push(n);walk(n.children);});})(D.tree.roots);
table('tree',[['range',function(r){return '  '.repeat(r.depth)+r.name;}],['calls',function(r){return r.invocations;},'n'],['inclusive',function(r){return dur(r.inclusive_ns);},'n'],['exclusive',function(r){return dur(r.exclusive_ns);},'n'],['top kernel',function(r){return r.kernels.length?r.kernels[0].name:'';},'name']],rows);
document.getElementById('tree').firstChild&&document.getElementById('tree').firstChild.classList&&document.getElementById('tree').firstChild.classList.add('tree');
var F=document.getElementById('findings');
if(!D.diagnose.findings.length)F.appendChild(el('p',{'class':'muted'},'No rule fired.'));
D.diagnose.findings.forEach(function(f){
  var d=el('div',{'class':'finding '+f.severity});d.appendChild(el('strong',null,'['+f.severity+'] '+f.title));
  var ul=el('ul',{'class':'facts'});f.facts.forEach(function(x){ul.appendChild(el('li',null,'Fact: '+x));});d.appendChild(ul);
  d.appendChild(el('p',{'class':'hyp'},'Hypothesis: '+f.hypothesis));
  var ev=el('ul');f.evidence.forEach(function(e){ev.appendChild(el('li',null,e.what+': '+e.name+(e.start_ns!==undefined?' at '+dur(e.start_ns):'')+' ('+dur(e.duration_ns)+') '+e.note));});d.appendChild(ev);
  F.appendChild(d);
});
table('checked',[['rule',function(r){return r.rule;}],['fired',function(r){return r.fired?'yes':'no';}],['measured',function(r){return r.measured;}]],D.diagnose.checked);
document.body.setAttribute('data-rendered','1');
})();
</script>
)HTML";

const char* kBody = R"HTML(<header><h1 id="title">kernlens report</h1><div class="sub" id="sub"></div></header>
<div class="emu" id="emu" style="display:none"></div>
<main>
<section><h2>Timeline</h2><div id="tl-ctl"><button id="tl-in">zoom in</button><button id="tl-out">zoom out</button><button id="tl-reset">reset</button> <span id="tl-range" class="muted"></span> <span class="muted">(mouse wheel zooms)</span></div><div id="tl-wrap"><div id="timeline-host"></div></div></section>
<section><h2>Findings (diagnose)</h2><div id="findings"></div><details><summary>rules checked</summary><div id="checked"></div></details></section>
<section><h2>Top kernels</h2><div id="top-kernels"></div></section>
<section><h2>Streams</h2><div id="streams"></div></section>
<section><h2>Compute / NCCL / memory overlap</h2><div id="overlap"></div></section>
<section><h2>Largest GPU idle gaps</h2><div id="gaps"></div></section>
<section><h2>NCCL collectives</h2><div id="nccl"></div><h3>Payloads and bus bandwidth</h3><div id="nccl-payloads"></div><h3>Stragglers across ranks</h3><div id="nccl-stragglers"></div></section>
<section><h2>Synchronisation (CPU blocked)</h2><p id="sync-total" class="muted"></p><div id="sync"></div></section>
<section><h2>Stream concurrency</h2><div id="concurrency"></div><h3>Serialised on one stream</h3><div id="serialised"></div></section>
<section><h2>Critical path per iteration</h2><p id="cp-total" class="muted"></p><div id="critical-path"></div></section>
<section><h2>MFU (achieved FLOP/s)</h2><p id="mfu-source" class="muted"></p><div id="mfu"></div><h3>Per call site</h3><div id="mfu-lines"></div></section>
<section><h2>Memory transfers</h2><div id="memcpy"></div></section>
<section><h2>Launch overhead and queue delay</h2><div id="launch"></div></section>
<section><h2>CPU threads</h2><div id="threads"></div></section>
<section><h2>Iterations</h2><p id="iters-method" class="muted"></p><div id="iters"></div></section>
<section><h2>Range tree</h2><div id="tree"></div></section>
</main>
)HTML";

}  // namespace

void writeReport(std::ostream& out, const View& v, const ReportOptions& o) {
  const auto& m = v.m;
  out << kHead << kBody;
  for (const auto& [heading, html] : o.extraSections) {
    out << "<section class=\"extra\"><h2>";
    for (char c : heading) {
      if (c == '<')
        out << "&lt;";
      else if (c == '>')
        out << "&gt;";
      else if (c == '&')
        out << "&amp;";
      else
        out << c;
    }
    out << "</h2>" << html << "</section>\n";
  }
  out << "<script type=\"application/json\" id=\"kl-data\">";
  json::Writer w(out, 0, /*htmlSafe=*/true);
  w.beginObject().field("title", o.title);
  w.key("info");
  writeJson(w, computeInfo(v), m);
  w.key("summary");
  writeJson(w, computeSummary(v), m, o.topKernels);
  w.key("overlap");
  writeJson(w, computeOverlap(v));
  w.key("gaps");
  writeJson(w, computeGaps(v), v);
  w.key("nccl");
  writeJson(w, computeNccl(v), m);
  w.key("sync");
  writeJson(w, computeSync(v), v);
  w.key("streams");
  writeJson(w, computeStreams(v), m, 20);
  w.key("critical_path");
  writeJson(w, computeCriticalPath(v), v);
  w.key("mfu");
  writeJson(w, computeMfu(v), m, 30);
  w.key("memcpy");
  writeJson(w, computeMemcpy(v));
  w.key("launch");
  writeJson(w, computeLaunch(v), m, 20);
  w.key("threads");
  writeJson(w, computeThreads(v), m);
  w.key("iters");
  writeJson(w, computeIters(v), v);
  w.key("tree");
  writeJson(w, computeTree(v), m, 3, 3);
  w.key("diagnose");
  writeJson(w, computeDiagnose(v), v);
  w.key("timeline");
  writeTimeline(w, v, o);
  w.endObject();
  out << "</script>\n" << kScript << "</body></html>\n";
}

}  // namespace kl::analysis
