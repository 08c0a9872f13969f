"""The page's script: draws the embedded JSON with DOM calls and ``textContent`` only.

No ``innerHTML``/``insertAdjacentHTML``/``eval`` anywhere: trajectory text can never become markup
or code. The step list is drawn in chunks (a window over the filtered steps) and a long timeline
only draws the rows in view, so a 10,000-step trajectory shows its first screen quickly.
"""

# The script is dense hand-written JavaScript kept as a string so the package needs no data
# files; its lines follow JavaScript layout, not Python's line length.
# ruff: noqa: E501

from __future__ import annotations

JS = r"""
(function(){
"use strict";
var DATA=JSON.parse(document.getElementById("wl-data").textContent);
var CHUNK=100, ROW=20, VIRTUAL=1500, FOLD_CHARS=800, FOLD_LINES=14;
var S={cur:0,q:"",src:{user:true,system:true,agent:true},errs:false,list:[],lo:0,hi:0,hay:null};
var $main=document.getElementById("wl-main");
function el(tag,cls,text){var e=document.createElement(tag);if(cls)e.className=cls;
  if(text!==undefined&&text!==null)e.textContent=String(text);return e;}
function add(p){for(var i=1;i<arguments.length;i++){if(arguments[i])p.appendChild(arguments[i]);}return p;}
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
  if(!long){box.textContent=text;return box;}
  var head=lines.slice(0,FOLD_LINES).join("\n");if(head.length>FOLD_CHARS)head=head.slice(0,FOLD_CHARS);
  var open=false;var body=el("span",null,head+" …");
  var b=el("button","fold","show all ("+num(text.length)+" chars, "+num(lines.length)+" lines)");
  b.type="button";
  b.addEventListener("click",function(){open=!open;body.textContent=open?text:head+" …";
    b.textContent=open?"show less":"show all ("+num(text.length)+" chars, "+num(lines.length)+" lines)";});
  box.dataset.fold="1";box._toggle=function(){b.click();};
  add(box,body,b);return box;}
/* ---------- header, picker, warnings ---------- */
function kv(k,v,cls){var d=el("div","kv"+(cls?" "+cls:""));add(d,el("b",null,k),el("span",null,v));
  d.title=k+": "+v;return d;}
function drawPicker(){if(DATA.items.length<2)return null;
  var box=el("nav","picker");box.id="wl-picker";
  add(box,el("b",null,"Trajectories ("+DATA.items.length+")"),
    el("span","mut","  — pick one; keys [ and ] step through them"));
  var ol=el("ol");DATA.items.forEach(function(it,i){var li=el("li",i===S.cur?"cur":null);
    var a=el("a",null,it.title);a.href="#t"+i;
    a.addEventListener("click",function(ev){ev.preventDefault();select(i,null);});
    var h=it.h;add(li,a,el("span","mut","  "+(h.agent||"?")+" · "+num(h.steps)+" steps · "
      +num(h.errors)+" errors · "+it.src));ol.appendChild(li);});
  return add(box,ol);}
function drawHeader(it){var h=it.h;var box=el("section","hdr");box.id="wl-header";
  add(box,kv("agent",(h.agent||"?")+(h.ver&&h.ver!=="unknown"?" "+h.ver:"")),kv("model",h.model||"–"),
    kv("session",h.session||h.tid||"–"),kv("start",h.start||"–"),kv("end",h.end||"–"),
    kv("duration",h.dur!==undefined?fmtMs(h.dur):"–"),kv("steps",num(h.steps)),
    kv("tokens in",num(h["in"])),kv("tokens out",num(h.out)),kv("tokens cached",num(h.ca)));
  if(h.co!==undefined)box.appendChild(kv("cost","$"+Number(h.co).toFixed(4)));
  var e=kv("errors",num(h.errors),h.errors?"bad":null);e.id="wl-errors";
  if(h.errors)e.addEventListener("click",function(){S.errs=true;syncTools();refilter();});
  box.appendChild(e);box.appendChild(kv("schema",(h.schema||"?")+" · "+it.kind));
  return box;}
function drawWarnings(it){var w=it.w||[];var notes=it.h.notes;
  if(!w.length&&!notes)return null;var box=el("details","warn");box.id="wl-warnings";
  if(w.length<=8)box.open=true;
  add(box,el("summary",null,w.length+" validation warning"+(w.length===1?"":"s")+
    (notes?" · note: "+notes:"")));var ul=el("ul");
  w.forEach(function(x){ul.appendChild(el("li",null,x));});return add(box,ul);}
/* ---------- timeline ---------- */
var KIND={llm:"LLM",tool:"tool",approval:"approval",subagent:"sub-agent"};
function drawTimeline(it){var spans=it.spans;var box=el("section","tlbox");box.id="wl-timeline";
  if(!spans.length){box.appendChild(el("div","mut","No timeline: this trajectory records no "+
    "call timing ("+it.timing+")."));return box;}
  var end=0;spans.forEach(function(s){if(s.e>end)end=s.e;});if(end<=0)end=1;
  var axis=el("div","tlaxis");[0,.25,.5,.75,1].forEach(function(f){var t=el("span",null,fmtMs(end*f));
    t.style.left=(f*100)+"%";if(f===1)t.style.transform="translateX(-100%)";axis.appendChild(t);});
  var rows=el("div","tlrows");rows.id="wl-tlrows";
  function row(i){var s=spans[i];var r=el("div","tlrow");r.dataset.span=String(i);
    var lab=el("div","tllab");lab.style.paddingLeft=(s.d*14)+"px";
    if(s.g)lab.appendChild(el("span","par","∥ "));
    lab.appendChild(document.createTextNode(KIND[s.k]+" "+s.n));
    var tr=el("div","tltrack");var b=el("div","bar "+s.k+(s.er?" err":"")+(s.ap?" ap":""));
    b.style.left=(s.s/end*100)+"%";b.style.width=((s.e-s.s)/end*100)+"%";
    var tip=KIND[s.k]+" "+s.n+" · "+fmtMs(s.e-s.s)+" @ +"+fmtMs(s.s)+(s.st?" · step "+s.st:"")+
      (s.ne?" · no end recorded: drawn to the next model call":s.ap?" · estimated":"")+(s.er?" · error":"");b.title=tip;lab.title=tip;
    var dl=el("span","dur",fmtMs(s.e-s.s));var right=s.e/end;
    if(right>0.85){dl.style.right=((1-s.s/end)*100)+"%";}else{dl.style.left=(right*100)+"%";}
    add(r,lab,add(tr,b,dl));r.addEventListener("click",function(){reveal(s.p,s.st);});return r;}
  if(spans.length<=VIRTUAL){for(var i=0;i<spans.length;i++)rows.appendChild(row(i));}
  else{var pad=el("div");pad.style.height=(spans.length*ROW)+"px";pad.style.position="relative";
    rows.appendChild(pad);var shown={};
    var paint=function(){var top=rows.scrollTop,h=rows.clientHeight||330;
      var a=Math.max(0,Math.floor(top/ROW)-10),z=Math.min(spans.length,Math.ceil((top+h)/ROW)+10);
      Object.keys(shown).forEach(function(k){var k2=+k;if(k2<a||k2>=z){pad.removeChild(shown[k]);delete shown[k];}});
      for(var j=a;j<z;j++){if(!shown[j]){var r=row(j);r.style.position="absolute";r.style.top=(j*ROW)+"px";
        r.style.left="0";r.style.right="0";shown[j]=r;pad.appendChild(r);}}};
    rows.addEventListener("scroll",paint);setTimeout(paint,0);rows._paint=paint;}
  var leg=el("div","legend");leg.appendChild(document.createTextNode(num(spans.length)+" spans · timing: "+it.timing));
  [["llm","LLM call"],["tool","tool call"],["approval","approval"],["subagent","sub-agent"],["err","error"]]
    .forEach(function(p){var i2=el("i","sw "+p[0]);
      add(leg,i2,document.createTextNode(p[1]));});
  leg.appendChild(document.createTextNode("  · ∥ = parallel calls of one step; click a row to open its step"));
  return add(box,axis,rows,leg);}
/* ---------- steps ---------- */
function stepId(path,i){return path?"step-"+path.replace(/\./g,"-")+i:"step-"+i;}
function drawCall(c,it,path){var box=el("div","call"+(c.e?" err":""));
  var head=el("div","ch");add(head,el("span","fn",c.n),el("code",null,c.id||""));
  if(c.e)head.appendChild(el("span","errtag","error"));box.appendChild(head);
  var al=el("div","lbl","arguments");al.appendChild(copyBtn("copy",function(){return c.a;}));
  add(box,al,folded("pre","args",c.a));
  if(c.o!==undefined){var rl=el("div","lbl","result");rl.appendChild(copyBtn("copy",function(){return c.o;}));
    add(box,rl,folded("pre","res",c.o));}
  else box.appendChild(el("div","lbl","no result recorded"));
  drawSubs(box,c,it,path);return box;}
function drawSubs(box,c,it,path){(c.sub||[]).forEach(function(k){box.appendChild(subBlock(it.subs[k],path+k+"."));});
  (c.ext||[]).forEach(function(x){box.appendChild(el("div","sub mut","sub-agent trajectory (not embedded): "+x));});}
function subBlock(sub,path){var box=el("div","sub");box.id="sub-"+path.replace(/\./g,"-");
  var h=sub.h;var b=el("button","subh","▸ sub-agent "+(h.tid||h.session||"")+" — "+(h.agent||"?")+
    " · "+num(h.steps)+" steps"+(h.errors?" · "+h.errors+" errors":""));b.type="button";
  var body=null;box._open=function(want){if(want===undefined)want=!body;
    if(want&&!body){body=el("div","subbody");drawSteps(body,sub,path,sub.steps.map(function(_,i){return i;}),0);
      box.appendChild(body);b.textContent="▾"+b.textContent.slice(1);}
    else if(!want&&body){box.removeChild(body);body=null;b.textContent="▸"+b.textContent.slice(1);}};
  b.addEventListener("click",function(){box._open();});box.appendChild(b);return box;}
function drawStep(s,it,path){var a=el("article","step "+(s.s||"unknown")+(s.e?" err":""));
  a.id=stepId(path,s.i);a.tabIndex=-1;a.dataset.step=String(s.i);a.dataset.path=path;
  var head=el("div","sh");var link=el("a","sid","#"+s.i);link.href="#"+a.id;
  add(head,link,el("span","src",s.s||"?"));
  var meta=[];if(s.t!==undefined)meta.push("+"+fmtMs(s.t));if(s.mo)meta.push(s.mo);
  if(s.x){var x=s.x;meta.push(num(x["in"])+" in / "+num(x.out)+" out"+(x.ca?" / "+num(x.ca)+" cached":"")+
    (x.co!==undefined?" · $"+Number(x.co).toFixed(4):""));}
  if(s.cp)meta.push("copied context");
  add(head,el("span","mut",meta.join(" · ")));if(s.e)head.appendChild(el("span","errtag","error"));
  var lk=copyBtn("copy link",function(){return location.href.split("#")[0]+"#"+a.id;});head.appendChild(lk);
  a.appendChild(head);
  if(s.m)a.appendChild(folded("div","msg",s.m));
  else if(!s.c&&!s.o)a.appendChild(el("div","msg mut","(empty message)"));
  if(s.r){var d=el("details","reason");add(d,el("summary",null,"reasoning ("+num(s.r.length)+" chars)"),
    folded("pre",null,s.r));a.appendChild(d);}
  (s.c||[]).forEach(function(c){a.appendChild(drawCall(c,it,path));});
  (s.o||[]).forEach(function(o){var box=el("div","call"+(o.e?" err":""));
    var rl=el("div","lbl","observation");rl.appendChild(copyBtn("copy",function(){return o.o;}));
    add(box,rl,folded("pre","res",o.o));drawSubs(box,o,it,path);a.appendChild(box);});
  return a;}
function drawSteps(box,it,path,idx,from){var n=Math.min(idx.length,from+200);
  for(var i=from;i<n;i++)box.appendChild(drawStep(it.steps[idx[i]],it,path));
  if(n<idx.length){var more=el("button","more","show "+num(idx.length-n)+" more steps");
    more.addEventListener("click",function(){box.removeChild(more);drawSteps(box,it,path,idx,n);});
    box.appendChild(more);}}
/* ---------- filtered, windowed root list ---------- */
function hay(it){if(S.hay&&S.hay.it===it)return S.hay.v;
  var v=it.steps.map(function(s){var p=[s.m||"",s.r||"",s.s||""];
    (s.c||[]).forEach(function(c){p.push(c.n,c.a,c.o||"");});(s.o||[]).forEach(function(o){p.push(o.o);});
    return p.join("\n").toLowerCase();});S.hay={it:it,v:v};return v;}
function refilter(){var it=item();var q=S.q.toLowerCase();var h=q?hay(it):null;var out=[];
  for(var i=0;i<it.steps.length;i++){var s=it.steps[i];
    if(S.src[s.s]===false)continue;if(S.errs&&!s.e)continue;if(h&&h[i].indexOf(q)<0)continue;out.push(i);}
  S.list=out;S.lo=0;S.hi=0;drawList();}
function drawList(){var box=document.getElementById("wl-steps");box.textContent="";var it=item();
  var count=document.getElementById("wl-count");
  count.textContent=S.list.length===it.steps.length?num(it.steps.length)+" steps":
    num(S.list.length)+" of "+num(it.steps.length)+" steps";
  if(!S.list.length){box.appendChild(el("div","empty","No step matches."));return;}
  if(S.lo>0){var up=el("button","more","show "+num(S.lo)+" earlier steps");up.id="wl-earlier";
    up.addEventListener("click",function(){var old=S.lo;S.lo=Math.max(0,S.lo-CHUNK);
      var first=box.querySelector(".step");box.removeChild(up);
      var frag=document.createDocumentFragment();
      for(var i=S.lo;i<old;i++)frag.appendChild(drawStep(it.steps[S.list[i]],it,""));
      box.insertBefore(frag,first);if(S.lo>0){box.insertBefore(up,box.firstChild);
        up.textContent="show "+num(S.lo)+" earlier steps";}});box.appendChild(up);}
  S.hi=S.lo;more();
  var unref=it.u||[];if(unref.length&&S.list.length===it.steps.length){
    var other=el("section");other.id="wl-other";add(other,el("h2",null,"Other sub-agent trajectories"));
    unref.forEach(function(k){other.appendChild(subBlock(it.subs[k],k+"."));});
    document.getElementById("wl-tail").textContent="";document.getElementById("wl-tail").appendChild(other);}
  else document.getElementById("wl-tail").textContent="";}
function more(){var box=document.getElementById("wl-steps");var it=item();
  var old=document.getElementById("wl-more");if(old)box.removeChild(old);
  var z=Math.min(S.list.length,S.hi+CHUNK);var frag=document.createDocumentFragment();
  for(var i=S.hi;i<z;i++)frag.appendChild(drawStep(it.steps[S.list[i]],it,""));
  box.appendChild(frag);S.hi=z;
  if(S.hi<S.list.length){var m=el("button","more","show more ("+num(S.list.length-S.hi)+" left)");
    m.id="wl-more";m.addEventListener("click",more);box.appendChild(m);
    if(window.IntersectionObserver){var ob=new IntersectionObserver(function(en){
      if(en[0].isIntersecting){ob.disconnect();if(m.parentNode)more();}},{rootMargin:"600px"});ob.observe(m);}}}
function ensureRoot(stepNo){var it=item();var pos=-1;
  for(var i=0;i<it.steps.length;i++){if(it.steps[i].i===stepNo){pos=i;break;}}
  if(pos<0)return null;var at=S.list.indexOf(pos);
  if(at<0){S.q="";S.errs=false;S.src={user:true,system:true,agent:true};syncTools();
    S.list=it.steps.map(function(_,i){return i;});at=pos;S.lo=0;}
  if(at<S.lo||at>=S.hi){S.lo=Math.max(0,at-at%CHUNK);drawList();}
  return document.getElementById(stepId("",stepNo));}
function focusStep(node){if(!node)return;var prev=document.querySelector(".step.target");
  if(prev)prev.classList.remove("target");node.classList.add("target");
  node.scrollIntoView({block:"start"});node.focus({preventScroll:true});}
function reveal(path,stepNo){var it=item();var parts=path?path.split(".").filter(Boolean).map(Number):[];
  if(!parts.length){focusStep(ensureRoot(stepNo));setHash(stepId("",stepNo));return;}
  var top=parts[0];var owner=null;
  it.steps.forEach(function(s){[].concat(s.c||[],s.o||[]).forEach(function(c){
    if((c.sub||[]).indexOf(top)>=0&&owner===null)owner=s.i;});});
  var node=owner!==null?ensureRoot(owner):null;var p="";
  if(owner===null&&!document.getElementById("sub-"+top+"-")){S.q="";S.errs=false;syncTools();refilter();}
  for(var k=0;k<parts.length;k++){p+=parts[k]+".";var sb=document.getElementById("sub-"+p.replace(/\./g,"-"));
    if(!sb)break;sb._open(true);node=sb;}
  var target=stepNo?document.getElementById(stepId(p,stepNo)):null;focusStep(target||node);}
function setHash(h){var t=DATA.items.length>1?"t"+S.cur+"/":"";
  try{history.replaceState(null,"","#"+t+h);}catch(e){/* file:// in some browsers */}}
/* ---------- page ---------- */
function syncTools(){document.getElementById("wl-q").value=S.q;
  ["user","system","agent"].forEach(function(k){document.getElementById("wl-src-"+k).checked=S.src[k]!==false;});
  document.getElementById("wl-errs").checked=S.errs;}
function drawTools(){var bar=el("div","tools");bar.id="wl-tools";
  var q=el("input");q.type="search";q.id="wl-q";q.placeholder="Search messages, reasoning, tool calls and results (press /)";
  var t=null;q.addEventListener("input",function(){clearTimeout(t);t=setTimeout(function(){S.q=q.value;refilter();},150);});
  bar.appendChild(q);
  ["user","system","agent"].forEach(function(k){var l=el("label");var c=el("input");c.type="checkbox";
    c.id="wl-src-"+k;c.checked=true;c.addEventListener("change",function(){S.src[k]=c.checked;refilter();});
    add(l,c,document.createTextNode(" "+k));bar.appendChild(l);});
  var l2=el("label");var e=el("input");e.type="checkbox";e.id="wl-errs";
  e.addEventListener("change",function(){S.errs=e.checked;refilter();});
  add(l2,e,document.createTextNode(" errors only"));var cnt=el("span","mut");cnt.id="wl-count";
  var help=el("span","help");["j/k next/previous step","o open/fold","e next error","/ search"]
    .forEach(function(x){var p=x.split(" ");add(help,el("kbd",null,p[0]),document.createTextNode(" "+p.slice(1).join(" ")+"  "));});
  return add(bar,l2,cnt,help);}
function select(i,hash){S.cur=i;S.q="";S.errs=false;S.src={user:true,system:true,agent:true};S.hay=null;
  var it=item();$main.textContent="";document.title=it.title+" — wayline view";
  var h1=el("h1",null,it.title);h1.id="wl-title";
  add($main,drawPicker(),h1,el("div","mut",it.src),drawHeader(it),drawWarnings(it),
    el("h2",null,"Timeline"),drawTimeline(it),el("h2",null,"Steps"),drawTools());
  var list=el("div");list.id="wl-steps";var tail=el("div");tail.id="wl-tail";add($main,list,tail);
  S.list=it.steps.map(function(_,k){return k;});S.lo=0;S.hi=0;drawList();
  if(hash)go(hash);else if(DATA.items.length>1)setHash("");}
function parseHash(){var h=decodeURIComponent(location.hash.slice(1));var m=/^t(\d+)(?:\/(.*))?$/.exec(h);
  if(m){return {t:+m[1],rest:m[2]||""};}return {t:S.cur,rest:h};}
function go(rest){var m=/^step-(\d+)$/.exec(rest);if(m){focusStep(ensureRoot(+m[1]));return;}
  var n=/^step-((?:\d+-)+)(\d+)$/.exec(rest);if(n){reveal(n[1].replace(/-/g,"."),+n[2]);}}
function onHash(){var p=parseHash();if(p.t!==S.cur&&p.t>=0&&p.t<DATA.items.length)select(p.t,p.rest);else go(p.rest);}
function visibleSteps(){return Array.prototype.slice.call(document.querySelectorAll("#wl-steps .step, #wl-tail .step"))
  .filter(function(x){return x.offsetParent!==null;});}
function moveFocus(d){var all=visibleSteps();if(!all.length)return;
  var cur=document.activeElement&&document.activeElement.classList.contains("step")?document.activeElement:
    document.querySelector(".step.target");var i=cur?all.indexOf(cur):-1;var j=i+d;
  if(j>=all.length&&S.hi<S.list.length){more();all=visibleSteps();}
  j=Math.max(0,Math.min(all.length-1,j));focusStep(all[j]);setHash(all[j].id);}
function nextError(){var all=visibleSteps();var cur=document.querySelector(".step.target");
  var i=cur?all.indexOf(cur):-1;for(var j=i+1;j<all.length;j++){if(all[j].classList.contains("err")){focusStep(all[j]);setHash(all[j].id);return;}}
  if(S.hi<S.list.length){more();nextError();}}
document.addEventListener("keydown",function(ev){var t=ev.target;
  if(ev.ctrlKey||ev.metaKey||ev.altKey)return;
  if(t&&(t.tagName==="INPUT"||t.tagName==="TEXTAREA")){if(ev.key==="Escape"){t.blur();}return;}
  if(ev.key==="j"){moveFocus(1);ev.preventDefault();}
  else if(ev.key==="k"){moveFocus(-1);ev.preventDefault();}
  else if(ev.key==="/"){document.getElementById("wl-q").focus();ev.preventDefault();}
  else if(ev.key==="e"){nextError();ev.preventDefault();}
  else if(ev.key==="o"||ev.key==="Enter"){var s=document.querySelector(".step.target");if(!s)return;
    Array.prototype.forEach.call(s.querySelectorAll("[data-fold]"),function(f){f._toggle();});
    Array.prototype.forEach.call(s.querySelectorAll(".sub"),function(b){if(b._open)b._open();});
    var r=s.querySelector("details.reason");if(r)r.open=!r.open;ev.preventDefault();}
  else if((ev.key==="]"||ev.key==="[")&&DATA.items.length>1){
    var n=(S.cur+(ev.key==="]"?1:-1)+DATA.items.length)%DATA.items.length;select(n,null);ev.preventDefault();}});
window.addEventListener("hashchange",onHash);
var first=parseHash();select(first.t>=0&&first.t<DATA.items.length?first.t:0,first.rest||null);
window.__wlReady=performance.now();
document.documentElement.dataset.ready="1";
})();
"""
