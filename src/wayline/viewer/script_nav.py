"""The page script's second half: the virtualized step list, search, navigation and start-up.

The step list keeps only the steps near the viewport in the DOM, between two spacers whose
heights stand for the steps above and below (measured heights where a step was drawn before,
the average elsewhere, scaled down so the page stays within browsers' element-height limits);
the browser's scroll anchoring keeps the view still while steps are swapped in and out above
it. Search runs over one lowercase text per step, built in slices after the first screen, and
draws the first matching steps with their hits marked. Start-up decodes the base64 data and
inflates it with ``DecompressionStream`` (a browser built-in; no ``eval`` and no network).
"""

# ruff: noqa: E501

from __future__ import annotations

NAV = r"""
/* ---------- virtualized root step list ---------- */
var V={lo:0,hi:0,h:null,avg:160,box:null,top:null,bot:null,f:1,busy:false};
var CAP=8e6;
function estH(k){var v=V.h[k];return v>0?v:V.avg;}
function sumH(a,b){var t=0;for(var k=a;k<b;k++){var v=V.h[k];t+=v>0?v:V.avg;}return t;}
function padSync(){var n=S.list.length;var total=sumH(0,n);V.f=total>CAP?CAP/total:1;
  V.top.style.height=(sumH(0,V.lo)*V.f)+"px";V.bot.style.height=(sumH(V.hi,n)*V.f)+"px";}
function rendered(){return V.box.querySelectorAll(":scope > .step");}
function measure(nodes){for(var i=0;i<nodes.length;i++){var k=+nodes[i].dataset.k;V.h[k]=nodes[i].offsetHeight+8;}}
function drawAt(k){var it=item();var node=drawStep(it.steps[S.list[k]],it,"");node.dataset.k=String(k);return node;}
function listInit(start){var box=document.getElementById("wl-steps");V.box=box;box.textContent="";
  countLine();
  V.h=new Float32Array(S.list.length);V.top=el("div","pad");V.bot=el("div","pad");
  V.top.id="wl-pad-top";V.bot.id="wl-pad-bottom";add(box,V.top,V.bot);
  if(!S.list.length){box.appendChild(el("div","empty","No step matches."));}
  V.lo=V.hi=Math.max(0,Math.min(start||0,S.list.length));padSync();fillView();drawTail();}
function countLine(){var it=item();var count=document.getElementById("wl-count");
  count.textContent=(S.list.length===it.steps.length?num(it.steps.length)+" steps":
    num(S.list.length)+" of "+num(it.steps.length)+" steps")+(it.more?" · "+loaded(it):"");}
function drawTail(){var it=item();var tail=document.getElementById("wl-tail");tail.textContent="";
  var unref=it.u||[];if(!unref.length||it.more||S.list.length!==it.steps.length)return;
  var other=el("section");other.id="wl-other";add(other,el("h2",null,"Other sub-agent trajectories"));
  unref.forEach(function(k){other.appendChild(subBlock(it.subs[k],k+"."));});tail.appendChild(other);}
function grow(down,batch){var frag=document.createDocumentFragment(),made=[];
  if(down){var z=Math.min(S.list.length,V.hi+batch);for(var k=V.hi;k<z;k++){var n=drawAt(k);made.push(n);frag.appendChild(n);}
    V.box.insertBefore(frag,V.bot);V.hi=z;}
  else{var a=Math.max(0,V.lo-batch);for(var j=a;j<V.lo;j++){var m=drawAt(j);made.push(m);frag.appendChild(m);}
    V.box.insertBefore(frag,V.top.nextSibling);V.lo=a;}
  measure(made);padSync();}
function fillView(){if(V.busy||!V.box)return;V.busy=true;try{
  var n=S.list.length,vh=window.innerHeight||800,margin=vh*1.5;
  var r=V.box.getBoundingClientRect();var y0=-r.top-margin,y1=-r.top+vh+margin;
  var topH=V.top.offsetHeight,nodes=rendered();
  var bottom=nodes.length?nodes[nodes.length-1].offsetTop+nodes[nodes.length-1].offsetHeight-V.box.offsetTop:topH;
  if(nodes.length&&((bottom<y0&&V.hi<n)||(topH>y1&&V.lo>0))){/* the view landed in a spacer: start the window there */
    var want=Math.max(0,-r.top),acc=0,k=0;while(k<n&&acc+estH(k)*V.f<=want){acc+=estH(k)*V.f;k++;}
    measure(nodes);for(var i=0;i<nodes.length;i++)V.box.removeChild(nodes[i]);
    V.lo=V.hi=Math.min(k,n);padSync();nodes=rendered();topH=V.top.offsetHeight;bottom=topH;}
  var guard=0;
  while(V.hi<n&&bottom<y1&&guard++<200){grow(true,8);var last=V.bot.previousSibling;
    bottom=last.offsetTop+last.offsetHeight-V.box.offsetTop;}
  while(V.lo>0&&V.top.offsetHeight>y0&&guard++<400){grow(false,8);r=V.box.getBoundingClientRect();
    y0=-r.top-margin;}
  nodes=rendered();var drop=[];/* steps far outside the window leave the DOM; spacers keep their place */
  for(var a=0;a<nodes.length&&nodes.length-drop.length>40;a++){var nd=nodes[a];
    if(nd.offsetTop+nd.offsetHeight-V.box.offsetTop<y0-margin&&!nd.contains(document.activeElement)){drop.push(nd);V.lo++;}else break;}
  for(var b=nodes.length-1;b>=0&&nodes.length-drop.length>40;b--){var nb=nodes[b];
    if(nb.offsetTop-V.box.offsetTop>y1+margin&&!nb.contains(document.activeElement)){drop.push(nb);V.hi--;}else break;}
  if(drop.length){measure(drop);drop.forEach(function(x){V.box.removeChild(x);});padSync();}
  }finally{V.busy=false;}}
var pending=false;
function onScroll(){if(pending)return;pending=true;requestAnimationFrame(function(){pending=false;fillView();});}
window.addEventListener("scroll",onScroll,{passive:true});
window.addEventListener("resize",function(){onScroll();var t=document.getElementById("wl-timeline");if(t&&t._axis)t._axis();});
/* the root step at list position k, drawn (the window moves there if it is elsewhere) */
function showAt(k){if(k<V.lo||k>=V.hi){var nodes=rendered();measure(nodes);
    for(var i=0;i<nodes.length;i++)V.box.removeChild(nodes[i]);V.lo=V.hi=k;padSync();grow(true,8);}
  return V.box.querySelector(':scope > .step[data-k="'+k+'"]');}
/* ---------- search and filters ---------- */
function stepText(s){var p=[s.m||"",s.r||"",s.s||""];
  (s.c||[]).forEach(function(c){p.push(c.n,c.a,c.xa||"",c.o||"");(c.dx||[]).forEach(function(d){p.push(d);});
    (c.mt||[]).forEach(function(t){p.push(t.who,t.why||"");});});
  (s.o||[]).forEach(function(o){p.push(o.o);});(s.mt||[]).forEach(function(t){p.push(t.who,t.why||"");});
  return p.join("\n").toLowerCase();}
function hayUpTo(it,z){var H=S.hay;if(!H||H.it!==it){H=S.hay={it:it,v:[],n:0};}
  for(;H.n<z;H.n++)H.v[H.n]=stepText(it.steps[H.n]);return H.v;}
function hayInBackground(it){if(item()!==it||it.more)return;
  if(S.hay&&S.hay.it===it&&S.hay.n>=it.steps.length){window.__wlHay=1;return;}hayUpTo(it,Math.min(it.steps.length,(S.hay&&S.hay.it===it?S.hay.n:0)+4000));
  setTimeout(function(){hayInBackground(it);},0);}
function matching(it,a,b,q){var h=q?hayUpTo(it,b):null;var out=[];
  var all=!q&&!S.errs&&S.src.user!==false&&S.src.system!==false&&S.src.agent!==false;
  for(var i=a;i<b;i++){if(!all){var s=it.steps[i];
    if(S.src[s.s]===false)continue;if(S.errs&&!s.e)continue;if(h&&h[i].indexOf(q)<0)continue;}out.push(i);}
  return out;}
function refilter(){var it=item();S.list=matching(it,0,it.steps.length,S.q.toLowerCase());listInit(0);}
/* list position of a root step (by index into it.steps), -1 when filtered out */
function listPos(pos){var L=S.list,a=0,b=L.length-1;while(a<=b){var m=(a+b)>>1;if(L[m]===pos)return m;if(L[m]<pos)a=m+1;else b=m-1;}return -1;}
function stepPos(stepNo){var it=item();if(!S.pos||S.pos.it!==it||S.pos.n!==it.steps.length){var map=new Map();
    it.steps.forEach(function(s,i){if(!map.has(s.i))map.set(s.i,i);});S.pos={it:it,map:map,n:it.steps.length};}
  var p=S.pos.map.get(stepNo);return p===undefined?-1:p;}
function clearFilters(){setQuery("");S.errs=false;S.src={user:true,system:true,agent:true};syncTools();
  S.list=item().steps.map(function(_,i){return i;});}
function ensureRoot(stepNo){var pos=stepPos(stepNo);if(pos<0)return null;var at=listPos(pos);
  if(at<0){clearFilters();listInit(pos);at=pos;}return showAt(at);}
function focusStep(node){if(!node)return;var prev=document.querySelector(".step.target");
  if(prev)prev.classList.remove("target");node.classList.add("target");
  node.scrollIntoView({block:"start"});node.focus({preventScroll:true});fillView();}
function owners(it){if(it._own)return it._own;var own={};
  it.steps.forEach(function(s){[].concat(s.c||[],s.o||[]).forEach(function(c){
    (c.sub||[]).forEach(function(k){if(own[k]===undefined)own[k]=s.i;});});});it._own=own;return own;}
function reveal(path,stepNo){var it=item();var parts=path?path.split(".").filter(Boolean).map(Number):[];
  if(!parts.length){focusStep(ensureRoot(stepNo));setHash(stepId("",stepNo));return;}
  var owner=owners(it)[parts[0]];var node=owner!==undefined?ensureRoot(owner):null;var p="";
  if(owner===undefined&&!document.getElementById(subId(parts[0]+"."))){clearFilters();listInit(0);}
  for(var k=0;k<parts.length;k++){p+=parts[k]+".";var sb=document.getElementById(subId(p));
    if(!sb)break;sb._open(true);node=sb;}
  var target=stepNo?document.getElementById(stepId(p,stepNo)):null;focusStep(target||node);
  if(target)setHash(target.id);}
function setHash(h){var t=DATA.items.length>1?"t"+(S.cur+1)+(h?"/":""):"";
  try{history.replaceState(null,"","#"+t+h);}catch(e){/* file:// in some browsers */}}
/* ---------- page ---------- */
function syncTools(){document.getElementById("wl-q").value=S.q;
  ["user","system","agent"].forEach(function(k){document.getElementById("wl-src-"+k).checked=S.src[k]!==false;});
  document.getElementById("wl-errs").checked=S.errs;}
function drawTools(){var bar=el("div","tools");bar.id="wl-tools";
  var q=el("input");q.type="search";q.id="wl-q";q.placeholder="Search messages, reasoning, tool calls and results (press /)";
  var queued=false;q.addEventListener("input",function(){if(queued)return;queued=true;
    requestAnimationFrame(function(){queued=false;setQuery(q.value);refilter();window.scrollTo(0,Math.min(window.scrollY,bar.offsetTop));});});
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
function select(i,hash){S.cur=i;setQuery("");S.errs=false;S.src={user:true,system:true,agent:true};
  var it=item();$main.textContent="";document.title=safe(it.title)+" — wayline view";
  var h1=el("h1",null,it.title);h1.id="wl-title";var tl=drawTimeline(it);
  add($main,drawPicker(),h1,el("div","mut",it.src),drawHeader(it),drawWarnings(it),
    el("h2",null,"Timeline"),tl,el("h2",null,"Steps"),drawTools());
  if(tl._axis)tl._axis();
  var list=el("div");list.id="wl-steps";var tail=el("div");tail.id="wl-tail";add($main,list,tail);
  S.list=it.steps.map(function(_,k){return k;});listInit(0);
  if(hash)go(hash);else if(DATA.items.length>1)setHash("");
  if(window.__wlLoaded)setTimeout(function(){hayInBackground(it);},0);}
function parseHash(){var h=decodeURIComponent(location.hash.slice(1));var m=/^t(\d+)(?:\/(.*))?$/.exec(h);
  if(m){return {t:+m[1]-1,rest:m[2]||""};}return {t:S.cur,rest:h};}
function go(rest){var m=/^step-(\d+)$/.exec(rest);
  if(m){var node=ensureRoot(+m[1]);if(!node&&!window.__wlLoaded)S.pending=rest;focusStep(node);return;}
  var n=/^step-((?:\d+-)+)(\d+)$/.exec(rest);if(n){
    reveal(n[1].split("-").filter(Boolean).map(function(x){return (+x-1)+".";}).join(""),+n[2]);}}
function onHash(){var p=parseHash();if(p.t!==S.cur&&p.t>=0&&p.t<DATA.items.length)select(p.t,p.rest);else go(p.rest);}
function visibleSteps(){return Array.prototype.slice.call(document.querySelectorAll("#wl-steps .step, #wl-tail .step"))
  .filter(function(x){return x.offsetParent!==null;});}
function current(){return document.activeElement&&document.activeElement.classList&&
  document.activeElement.classList.contains("step")?document.activeElement:document.querySelector(".step.target");}
function moveFocus(d){var all=visibleSteps();if(!all.length)return;var cur=current();var i=cur?all.indexOf(cur):-1;
  if(i<0&&cur===null){focusStep(all[0]);setHash(all[0].id);return;}var j=i+d;
  if(j>=all.length&&V.hi<S.list.length){grow(true,8);all=visibleSteps();}
  if(j<0&&V.lo>0){grow(false,8);all=visibleSteps();j=all.indexOf(cur)+d;}
  j=Math.max(0,Math.min(all.length-1,j));focusStep(all[j]);setHash(all[j].id);}
function nextError(){var it=item();var cur=current();var root=cur?cur.closest("#wl-steps > .step"):null;
  var from=root?+root.dataset.k+1:V.lo;
  for(var k=from;k<S.list.length;k++){if(it.steps[S.list[k]].e){var node=showAt(k);focusStep(node);setHash(node.id);return;}}}
document.addEventListener("keydown",function(ev){var t=ev.target;
  if(ev.ctrlKey||ev.metaKey||ev.altKey||!DATA)return;
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
window.addEventListener("hashchange",function(){if(DATA)onHash();});
/* ---------- start-up: base64 -> bytes -> inflate (DecompressionStream) -> JSON ---------- */
function failed(msg){$main.textContent="";$main.appendChild(el("div","empty",msg));document.documentElement.dataset.ready="error";}
function bytesOf(b64){if(Uint8Array.fromBase64)return Uint8Array.fromBase64(b64);
  var bin=atob(b64),u=new Uint8Array(bin.length);for(var i=0;i<bin.length;i++)u[i]=bin.charCodeAt(i);return u;}
function inflate(node){var b64=node.textContent;node.parentNode.removeChild(node);
  var stream=new Blob([bytesOf(b64)]).stream().pipeThrough(new DecompressionStream("deflate"));
  return new Response(stream).text().then(JSON.parse);}
var TIMES=window.__wlTimes={};
function loaded(it){return it.more?it.steps.length+" of "+num(it.h.steps)+" steps loaded…":"";}
/* a chunk of steps arrived: append them, and to the list what passes the filters */
function append(index,steps){var it=DATA.items[index];var from=it.steps.length;
  for(var i=0;i<steps.length;i++)it.steps.push(steps[i]);it.more=Math.max(0,it.more-steps.length);delete it._own;
  if(index!==S.cur)return;var add2=matching(it,from,it.steps.length,S.q.toLowerCase());
  if(add2.length){var n0=S.list.length;for(var j=0;j<add2.length;j++)S.list.push(add2[j]);
    var h=new Float32Array(S.list.length);h.set(V.h.subarray(0,n0));V.h=h;padSync();}
  countLine();onScroll();}
function afterLoad(){TIMES.loaded=performance.now();window.__wlLoaded=1;
  if(S.pending){var p=S.pending;S.pending=null;go(p);}drawTail();setTimeout(function(){hayInBackground(item());},0);}
function loadMore(){var nodes=Array.prototype.slice.call(document.querySelectorAll("script.wl-more"));
  if(!nodes.length){afterLoad();return;}
  (function next(){var node=nodes.shift();if(!node){afterLoad();return;}var index=+node.dataset.item;
    inflate(node).then(function(steps){append(index,steps);setTimeout(next,0);},
      function(err){failed("The page's data cannot be read: "+err);});})();}
function start(data){TIMES.parsed=performance.now();DATA=data;var first=parseHash();
  select(first.t>=0&&first.t<DATA.items.length?first.t:0,first.rest||null);TIMES.drawn=performance.now();
  /* ready once the first screen is painted: the frame after the next animation frame */
  requestAnimationFrame(function(){setTimeout(function(){window.__wlReady=performance.now();
    document.documentElement.dataset.ready="1";
    if(document.readyState==="loading")document.addEventListener("DOMContentLoaded",loadMore);else loadMore();},0);});}
(function boot(){
  if(typeof DecompressionStream==="undefined"){failed("This browser cannot inflate the page's data "+
    "(it has no DecompressionStream); open the page in a current Chrome, Edge, Firefox or Safari.");return;}
  TIMES.boot=performance.now();inflate(document.getElementById("wl-data")).then(start,
    function(err){failed("The page's data cannot be read: "+err);});})();
})();
"""

__all__ = ["NAV"]
