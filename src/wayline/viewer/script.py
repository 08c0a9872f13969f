"""The page's script: draws the embedded data with DOM calls and ``textContent`` only.

No ``innerHTML``/``insertAdjacentHTML``/``eval`` anywhere: trajectory text can never become markup
or code. Every text goes through ``el``/``fill``, which show bidirectional control characters
(U+202A–U+202E, U+2066–U+2069, U+200E/F, U+061C) escaped as ``⟨U+202E⟩`` so a file name cannot be
spoofed, and ``fill`` wraps search hits in ``<mark>``. This module holds the drawing of the
header, timeline and one step; :mod:`wayline.viewer.script_nav` holds the virtualized step list,
search, navigation and the start-up that decompresses the data.
"""

# The script is dense hand-written JavaScript kept as a string so the package needs no data
# files; its lines follow JavaScript layout, not Python's line length.
# ruff: noqa: E501

from __future__ import annotations

from wayline.viewer.script_nav import NAV

CORE = r"""
(function(){
"use strict";
var DATA=null;
var ROW=20, VIRTUAL=1500, FOLD_CHARS=800, FOLD_LINES=14;
var S={cur:0,q:"",re:null,src:{user:true,system:true,agent:true},errs:false,list:[],hay:null,pos:null};
var $main=document.getElementById("wl-main");
var BIDI="[\u202A-\u202E\u2066-\u2069\u200E\u200F\u061C]";
var BIDI_G=new RegExp(BIDI,"g");
function hex(c){var h=c.charCodeAt(0).toString(16).toUpperCase();while(h.length<4)h="0"+h;return "U+"+h;}
function safe(t){return t.replace(BIDI_G,function(c){return "\u27E8"+hex(c)+"\u27E9";});}
function el(tag,cls,text){var e=document.createElement(tag);if(cls)e.className=cls;
  if(text!==undefined&&text!==null)e.textContent=safe(String(text));return e;}
function add(p){for(var i=1;i<arguments.length;i++){if(arguments[i])p.appendChild(arguments[i]);}return p;}
function escRe(s){return s.replace(/[.*+?^${}()|[\]\\]/g,"\\$&");}
function setQuery(q){S.q=q;S.re=new RegExp((q?"("+escRe(q)+")|":"")+BIDI,"gi");}
setQuery("");
/* text into node: plain text nodes, <mark> around search hits, escaped bidi controls */
function fill(node,text){var re=S.re,last=0,m;re.lastIndex=0;
  while((m=re.exec(text))!==null){if(!m[0].length){re.lastIndex++;continue;}
    if(m.index>last)node.appendChild(document.createTextNode(text.slice(last,m.index)));
    if(m[1]!==undefined)node.appendChild(el("mark",null,m[1]));
    else{var b=el("span","bidi","\u27E8"+hex(m[0])+"\u27E9");b.title="bidirectional control character "+hex(m[0])+", shown escaped";node.appendChild(b);}
    last=re.lastIndex;}
  if(last<text.length)node.appendChild(document.createTextNode(text.slice(last)));return node;}
function hits(text){if(!S.q)return false;S.re.lastIndex=0;var m;
  while((m=S.re.exec(text))!==null){if(m[1]!==undefined)return true;if(!m[0].length)S.re.lastIndex++;}return false;}
function fmtMs(ms){if(ms===undefined||ms===null)return "";var a=Math.abs(ms);
  if(a<1)return ms.toFixed(3)+" ms";if(a<1000)return ms.toFixed(a<10?2:1)+" ms";
  if(a<60000)return (ms/1000).toFixed(a<10000?3:2)+" s";
  var m=Math.floor(ms/60000);return m+"m "+((ms-m*60000)/1000).toFixed(1)+"s";}
function num(n){return n===undefined||n===null?"–":Number(n).toLocaleString("en-US");}
function item(){return DATA.items[S.cur];}
function copy(text,btn){var label=btn.textContent;
  function done(ok){btn.textContent=ok?"copied":"copy failed";setTimeout(function(){btn.textContent=label;},1200);}
  function fallback(){var t=el("textarea");t.value=text;t.setAttribute("readonly","");
    t.style.position="fixed";t.style.opacity="0";document.body.appendChild(t);t.select();
    var ok=false;try{ok=document.execCommand("copy");}catch(e){ok=false;}
    document.body.removeChild(t);done(ok);}
  if(navigator.clipboard&&window.isSecureContext){navigator.clipboard.writeText(text).then(
    function(){done(true);},fallback);}else{fallback();}}
function copyBtn(label,getText){var b=el("button","copy",label);b.type="button";
  b.addEventListener("click",function(ev){ev.stopPropagation();copy(getText(),b);});return b;}
function folded(tag,cls,text){
  var box=el(tag,cls);var lines=text.split("\n");
  var long=text.length>FOLD_CHARS||lines.length>FOLD_LINES;
  if(!long){fill(box,text);return box;}
  var head=lines.slice(0,FOLD_LINES).join("\n");if(head.length>FOLD_CHARS)head=head.slice(0,FOLD_CHARS);
  var open=hits(text)&&!hits(head);var body=el("span");
  var label="show all ("+num(text.length)+" chars, "+num(lines.length)+" lines)";
  var b=el("button","fold");b.type="button";
  function draw(){body.textContent="";fill(body,open?text:head+" …");b.textContent=open?"show less":label;}
  b.addEventListener("click",function(){open=!open;draw();});draw();
  box.dataset.fold="1";box._toggle=function(){b.click();};
  add(box,body,b);return box;}
/* 1-based everywhere a person reads or links: trajectory t1, sub-agent sub-1-, step-1-3 */
function linkPath(path){return path.split(".").filter(Boolean).map(function(x){return +x+1;}).join("-");}
function stepId(path,i){return path?"step-"+linkPath(path)+"-"+i:"step-"+i;}
function subId(path){return "sub-"+linkPath(path)+"-";}
/* ---------- header, picker, warnings ---------- */
function kv(k,v,cls){var d=el("div","kv"+(cls?" "+cls:""));add(d,el("b",null,k),el("span",null,v));
  d.title=safe(k+": "+v);return d;}
function drawPicker(){if(DATA.items.length<2)return null;
  var box=el("nav","picker");box.id="wl-picker";
  add(box,el("b",null,"Trajectories ("+DATA.items.length+")"),
    el("span","mut","  — pick one; keys [ and ] step through them"));
  var ol=el("ol");DATA.items.forEach(function(it,i){var li=el("li",i===S.cur?"cur":null);
    var a=el("a",null,it.title);a.href="#t"+(i+1);
    a.addEventListener("click",function(ev){ev.preventDefault();select(i,null);});
    var h=it.h;add(li,a,el("span","mut","  "+(h.agent||"?")+" · "+num(h.steps)+" steps · "
      +num(h.errors)+" errors · "+it.src));ol.appendChild(li);});
  return add(box,ol);}
/* metrics shown in the header and per step: [key, label, format]; a new metric is one row */
/* a cost with two significant digits at least, never rounded away: $0.000012, $0.0123, $1.25 */
function money(v){v=Number(v);var a=Math.abs(v);if(!isFinite(v))return "–";if(a===0)return "$0";
  var d=a>=1?2:Math.min(12,Math.max(4,Math.ceil(-Math.log10(a))+1));return "$"+v.toFixed(d);}
/* every turn's outcome: "1 completed · 2 max_turns …", or counts past a dozen turns */
var OUTCOME_CLS={completed:"ok",max_turns:"stop",cancelled:"cn",error:"bad",open:"open"};
function outcomes(list){if(list.length<=12)return list.map(function(o,i){return (i+1)+" "+o;}).join(" · ");
  var n={};list.forEach(function(o){n[o]=(n[o]||0)+1;});
  return Object.keys(n).map(function(o){return n[o]+" "+o;}).join(" · ")+" (each turn on the timeline)";}
var HEAD_METRICS=[["in","tokens in",num],["out","tokens out",num],["ca","tokens cached",num],["co","cost",money]];
function drawHeader(it){var h=it.h;var box=el("section","hdr");box.id="wl-header";
  add(box,kv("agent",(h.agent||"?")+(h.ver&&h.ver!=="unknown"?" "+h.ver:"")),kv("model",h.model||"–"),
    kv("session",h.session||h.tid||"–"),kv("start",h.start||"–"),kv("end",h.end||"–"),
    kv("duration",h.dur!==undefined?fmtMs(h.dur):"–"),kv("steps",num(h.steps)));
  var tu=h.turns||[];if(tu.length){var last=tu[tu.length-1];
    var t=kv(tu.length===1?"turn":num(tu.length)+" turns",outcomes(tu),tu.indexOf("error")>=0?"bad":null);
    t.id="wl-turns";t.dataset.last=last;box.appendChild(t);}
  HEAD_METRICS.forEach(function(m){if(h[m[0]]!==undefined||m[2]===num)box.appendChild(kv(m[1],m[2](h[m[0]])));});
  var e=kv("errors",num(h.errors),h.errors?"bad":null);e.id="wl-errors";
  if(h.errors)e.addEventListener("click",function(){S.errs=true;syncTools();refilter();});
  box.appendChild(e);box.appendChild(kv("schema",(h.schema||"?")+" · "+it.kind));
  return box;}
function stepMetrics(x){var p=num(x["in"])+" in / "+num(x.out)+" out"+(x.ca?" / "+num(x.ca)+" cached":"");
  if(x.co!==undefined)p+=" · "+money(x.co);return p;}
function drawWarnings(it){var w=it.w||[];var notes=it.h.notes;
  if(!w.length&&!notes)return null;var box=el("details","warn");box.id="wl-warnings";
  if(w.length<=8)box.open=true;
  add(box,el("summary",null,w.length+" validation warning"+(w.length===1?"":"s")+
    (notes?" · note: "+notes:"")));var ul=el("ul");
  w.forEach(function(x){ul.appendChild(el("li",null,x));});return add(box,ul);}
/* ---------- timeline (spans arrive as columns; see page.span_columns) ---------- */
var KIND=["LLM","tool","approval","sub-agent",""],KCLS=["llm","tool","approval","subagent","turn"];
function spans(it){if(it._sp)return it._sp;var c=it.sp,n=c.k.length,s=new Float64Array(n),e=new Float64Array(n),at=0;
  for(var i=0;i<n;i++){at+=c.s[i];s[i]=at/1000;e[i]=(at+c.u[i])/1000;}
  it._sp={n:n,s:s,e:e,k:c.k,d:c.d,st:c.st,f:c.f,lab:function(i){return c.nt[c.n[i]];},path:function(i){return c.pt[c.p[i]];}};
  delete it.sp;return it._sp;}
function drawAxis(axis,end){axis.textContent="";var w=axis.clientWidth||600;
  var parts=Math.max(1,Math.min(4,Math.floor(w/90)));
  for(var i=0;i<=parts;i++){var f=i/parts;var t=el("span",null,fmtMs(end*f));t.style.left=(f*100)+"%";
    if(i===parts)t.style.transform="translateX(-100%)";else if(i===0)t.style.transform="none";axis.appendChild(t);}}
function drawTimeline(it){var sp=spans(it);var box=el("section","tlbox");box.id="wl-timeline";
  if(!sp.n){box.appendChild(el("div","mut","No timeline: this trajectory records no "+
    "call timing ("+it.timing+")."));return box;}
  var end=0;for(var q=0;q<sp.n;q++){if(sp.e[q]>end)end=sp.e[q];}if(end<=0)end=1;
  var axis=el("div","tlaxis");axis.id="wl-axis";box._axis=function(){drawAxis(axis,end);};
  var rows=el("div","tlrows");rows.id="wl-tlrows";
  function row(i){var k=sp.k[i],f=sp.f[i],s0=sp.s[i],e0=sp.e[i],st=sp.st[i],name=sp.lab(i);
    var r=el("div","tlrow");r.dataset.span=String(i);
    var lab=el("div","tllab");lab.style.paddingLeft=(sp.d[i]*14)+"px";
    if(f&8)lab.appendChild(el("span","par","∥ "));
    lab.appendChild(document.createTextNode(safe((KIND[k]?KIND[k]+" ":"")+name)));
    var tr=el("div","tltrack");var b=el("div","bar "+KCLS[k]+(f&1?" err":"")+(f&2?" ap":"")+(f&16?" cn":"")+(f&32?" stop":""));
    b.style.left=(s0/end*100)+"%";b.style.width=((e0-s0)/end*100)+"%";
    var tip=safe((KIND[k]?KIND[k]+" ":"")+name+" · "+fmtMs(e0-s0)+" @ +"+fmtMs(s0)+(st?" · step "+st:"")+
      (f&4?" · no end recorded: drawn to the next model call":f&2&&k!==4?" · estimated":"")+
      (k===4?"":(f&1?" · error":"")+(f&16?" · cancelled":"")));b.title=tip;lab.title=tip;
    var dl=el("span","dur",fmtMs(e0-s0));var right=e0/end;
    if(right>0.85){dl.style.right=((1-s0/end)*100)+"%";}else{dl.style.left=(right*100)+"%";}
    add(r,lab,add(tr,b,dl));r.addEventListener("click",function(){reveal(sp.path(i),st);});return r;}
  if(sp.n<=VIRTUAL){for(var i=0;i<sp.n;i++)rows.appendChild(row(i));}
  else{var pad=el("div");pad.style.height=(sp.n*ROW)+"px";pad.style.position="relative";
    rows.appendChild(pad);var shown={};
    var paint=function(){var top=rows.scrollTop,h=rows.clientHeight||330;
      var a=Math.max(0,Math.floor(top/ROW)-10),z=Math.min(sp.n,Math.ceil((top+h)/ROW)+10);
      Object.keys(shown).forEach(function(k){var k2=+k;if(k2<a||k2>=z){pad.removeChild(shown[k]);delete shown[k];}});
      for(var j=a;j<z;j++){if(!shown[j]){var r=row(j);r.style.position="absolute";r.style.top=(j*ROW)+"px";
        r.style.left="0";r.style.right="0";shown[j]=r;pad.appendChild(r);}}};
    rows.addEventListener("scroll",paint);paint();rows._paint=paint;}
  var leg=el("div","legend");leg.appendChild(document.createTextNode(num(sp.n)+" spans · timing: "+it.timing));
  [["turn","turn"],["llm","LLM call"],["tool","tool call"],["approval","approval"],["subagent","sub-agent"],
    ["err","error"],["cn","cancelled"],["stop","max_turns"]]
    .forEach(function(p){var i2=el("i","sw "+p[0]);
      add(leg,i2,document.createTextNode(p[1]));});
  leg.appendChild(document.createTextNode("  · ∥ = parallel calls of one step; click a row to open its step"));
  return add(box,axis,rows,leg);}
/* ---------- steps ---------- */
function drawTrace(box,trace,what){var ul=el("ul","trace");
  trace.forEach(function(t){var li=el("li");add(li,el("b",null,t.who),el("span",null,t.why!==undefined?": "+t.why:""));
    Object.keys(t.more||{}).forEach(function(k){li.appendChild(el("span","mut"," · "+k+": "+t.more[k]));});ul.appendChild(li);});
  add(box,el("div","lbl",what),ul);}
function who(trace){return trace.map(function(t){return t.who;}).join(", ");}
function drawCall(c,it,path){var rw=c.xa!==undefined;var box=el("div","call"+(c.e?" err":"")+(rw?" rw":""));
  var head=el("div","ch");add(head,el("span","fn",c.n),el("code",null,c.id||""));
  if(rw){var tag=el("span","rwtag","rewritten"+(c.mt?" by "+who(c.mt):""));
    tag.title="The tool ran with other arguments than the model asked for";head.appendChild(tag);}
  else if(c.mt)head.appendChild(el("span","mwtag","middleware: "+who(c.mt)));
  if(c.e)head.appendChild(el("span","errtag","error"));
  if(c.cn)head.appendChild(el("span","cntag","cancelled"));box.appendChild(head);
  var al=el("div","lbl",rw?"arguments (the model's)":"arguments");al.appendChild(copyBtn("copy",function(){return c.a;}));
  add(box,al,folded("pre","args",c.a));
  if(rw){var xl=el("div","lbl","executed arguments");xl.appendChild(copyBtn("copy",function(){return c.xa;}));
    add(box,xl,folded("pre","args xargs",c.xa));
    if(c.dx){var dl=el("ul","changes");c.dx.forEach(function(d){dl.appendChild(fill(el("li"),d));});
      add(box,el("div","lbl","changed"),dl);}}
  if(c.mt)drawTrace(box,c.mt,"middleware (who changed it and why)");
  if(c.o!==undefined){var rl=el("div","lbl","result");rl.appendChild(copyBtn("copy",function(){return c.o;}));
    add(box,rl,folded("pre","res",c.o));}
  else box.appendChild(el("div","lbl","no result recorded"));
  drawSubs(box,c,it,path);return box;}
function drawSubs(box,c,it,path){(c.sub||[]).forEach(function(k){box.appendChild(subBlock(it.subs[k],path+k+"."));});
  (c.ext||[]).forEach(function(x){box.appendChild(el("div","sub mut","sub-agent trajectory (not embedded): "+x));});}
function subBlock(sub,path){var box=el("div","sub");box.id=subId(path);
  var h=sub.h;var b=el("button","subh","▸ sub-agent "+(h.tid||h.session||"")+" — "+(h.agent||"?")+
    " · "+num(h.steps)+" steps"+(h.errors?" · "+h.errors+" errors":""));b.type="button";
  var body=null;box._open=function(want){if(want===undefined)want=!body;
    if(want&&!body){body=el("div","subbody");drawSteps(body,sub,path,0);
      box.appendChild(body);b.textContent="▾"+b.textContent.slice(1);}
    else if(!want&&body){box.removeChild(body);body=null;b.textContent="▸"+b.textContent.slice(1);}};
  b.addEventListener("click",function(){box._open();});box.appendChild(b);return box;}
function drawStep(s,it,path){var a=el("article","step "+(s.s||"unknown")+(s.e?" err":"")+(s.cn&&!s.e?" cn":""));
  a.id=stepId(path,s.i);a.tabIndex=-1;a.dataset.step=String(s.i);a.dataset.path=path;
  var head=el("div","sh");var link=el("a","sid","#"+s.i);link.href="#"+a.id;
  add(head,link,el("span","src",s.s||"?"));
  var meta=[];if(s.t!==undefined)meta.push("+"+fmtMs(s.t));if(s.mo)meta.push(s.mo);
  if(s.x)meta.push(stepMetrics(s.x));
  if(s.cp)meta.push("copied context");
  add(head,el("span","mut",meta.join(" · ")));
  if(s.mt)head.appendChild(el("span","mwtag","request rewritten by "+who(s.mt)));
  if(s.e)head.appendChild(el("span","errtag","error"));
  if(s.cn)head.appendChild(el("span","cntag","cancelled"));
  if(s.to){var ot=el("span","outtag "+(OUTCOME_CLS[s.to]||"open"),"turn ended: "+s.to+(s.ti?" (from its steps)":""));
    ot.title=s.ti?"No record of how the turn ended: read from its last agent step":"As the run recorded it";head.appendChild(ot);}
  var lk=copyBtn("copy link",function(){return location.href.split("#")[0]+"#"+a.id;});head.appendChild(lk);
  a.appendChild(head);
  if(s.m)a.appendChild(folded("div","msg",s.m));
  else if(!s.c&&!s.o)a.appendChild(el("div","msg mut","(empty message)"));
  if(s.mt)drawTrace(a,s.mt,"model request middleware (who changed it and why)");
  if(s.r){var d=el("details","reason");add(d,el("summary",null,"reasoning ("+num(s.r.length)+" chars)"),
    folded("pre",null,s.r));if(hits(s.r))d.open=true;a.appendChild(d);}
  (s.c||[]).forEach(function(c){a.appendChild(drawCall(c,it,path));});
  (s.o||[]).forEach(function(o){var box=el("div","call"+(o.e?" err":""));
    var rl=el("div","lbl","observation");rl.appendChild(copyBtn("copy",function(){return o.o;}));
    add(box,rl,folded("pre","res",o.o));drawSubs(box,o,it,path);a.appendChild(box);});
  return a;}
function drawSteps(box,it,path,from){var n=Math.min(it.steps.length,from+200);
  for(var i=from;i<n;i++)box.appendChild(drawStep(it.steps[i],it,path));
  if(n<it.steps.length){var more=el("button","more","show "+num(it.steps.length-n)+" more steps");
    more.addEventListener("click",function(){box.removeChild(more);drawSteps(box,it,path,n);});
    box.appendChild(more);}}
"""

JS = CORE + NAV

__all__ = ["CORE", "JS"]
