"""The pages' stylesheet and scripts, served inline (no CDN, no network, no library).

The scripts draw every value with ``textContent`` (never as markup), talk only to the server
they came from (``fetch`` and ``EventSource`` on ``/api/...``), and set
``<html data-ready="1">`` once the first answer is drawn, for people's tools and the tests.
"""

from __future__ import annotations

__all__ = ["CSS", "LIST_JS", "SESSION_JS"]

CSS = """
:root{--fg:#1d2330;--mut:#5f6b7a;--bd:#d9dee5;--bg:#fff;--bg2:#f5f7fa;--ac:#2f6fdb}
*{box-sizing:border-box}
body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;color:var(--fg);
background:var(--bg)}
header.top{display:flex;gap:16px;align-items:baseline;padding:10px 20px;border-bottom:1px solid
var(--bd);background:var(--bg2)}
header.top h1{font-size:17px;margin:0}header.top a{color:var(--fg);text-decoration:none}
main{padding:12px 20px 40px}
h2{font-size:14px;margin:18px 0 8px;color:var(--mut);font-weight:600}
form.filters{display:flex;flex-wrap:wrap;gap:8px 14px;align-items:end;padding:10px 12px;
background:var(--bg2);border:1px solid var(--bd);border-radius:6px}
form.filters label{display:flex;flex-direction:column;font-size:12px;color:var(--mut)}
form.filters label.check{flex-direction:row;gap:4px;align-items:center}
form.filters input,form.filters select{font:inherit;padding:3px 6px;border:1px solid var(--bd);
border-radius:4px;min-width:80px}
form.filters input[name=q]{min-width:220px}
button,.button{font:inherit;padding:4px 12px;border:1px solid var(--ac);background:var(--ac);
color:#fff;border-radius:4px;cursor:pointer;text-decoration:none}
button:disabled{opacity:.45;cursor:default}
button.plain{background:#fff;color:var(--ac)}
.charts{display:flex;flex-wrap:wrap;gap:12px}
figure.chart{margin:0;padding:8px 10px;border:1px solid var(--bd);border-radius:6px}
figure.chart figcaption{font-size:12px;font-weight:600;margin-bottom:4px;display:flex;gap:10px}
.key{font-weight:400;color:var(--mut);display:inline-flex;align-items:center;gap:3px}
.sw{display:inline-block;width:10px;height:10px;border-radius:2px}
svg .axis{stroke:#9aa4b1;stroke-width:1}svg .tick{font-size:10px;fill:var(--mut)}
.c1{fill:#2f6fdb;background:#2f6fdb}.c2{fill:#5b9bd5;background:#5b9bd5}
.c3{fill:#f0a030;background:#f0a030}.c4{fill:#8fc98f;background:#8fc98f}
.c5{fill:#3c8d3c;background:#3c8d3c}.c6{fill:#d64545;background:#d64545}
table.rows{border-collapse:collapse;width:100%;margin-top:8px;font-variant-numeric:tabular-nums}
table.rows th,table.rows td{padding:4px 8px;border-bottom:1px solid var(--bd);text-align:left;
vertical-align:top}
table.rows th{font-size:12px;color:var(--mut);font-weight:600;background:var(--bg2)}
table.rows td.n{text-align:right}
table.rows tr.child td.id{padding-left:22px}
td.id a,td.step a{font-family:ui-monospace,monospace;font-size:12px}
td.text{max-width:640px;overflow-wrap:anywhere}
.status{display:inline-block;padding:0 7px;border-radius:9px;font-size:12px;background:#e6e9ee}
.st-running{background:#dbe8ff;color:#1a4fb0}.st-completed{background:#dcf3dc;color:#23672a}
.st-failed{background:#fbdcdc;color:#a52121}.st-interrupted{background:#eceff3;color:#4b5563}
.st-max_turns{background:#fdf0d5;color:#8a5a00}.st-gone{background:#eee;color:#777}
.st-running::before{content:"\\25CF ";animation:pulse 1s infinite}
@keyframes pulse{50%{opacity:.3}}
.note{color:var(--mut);margin:8px 0}.err{color:#a52121}
.toolbar{display:flex;gap:10px;align-items:center;margin-top:14px}
dl.cards{display:flex;flex-wrap:wrap;gap:8px;margin:10px 0}
dl.cards div{border:1px solid var(--bd);border-radius:6px;padding:4px 10px;min-width:90px}
dl.cards dt{font-size:11px;color:var(--mut)}dl.cards dd{margin:0;overflow-wrap:anywhere}
mark{background:#ffe68a}
"""

_COMMON = r"""
function el(tag,cls,text){var e=document.createElement(tag);if(cls)e.className=cls;
  if(text!==undefined&&text!==null)e.textContent=String(text);return e;}
function link(href,text){var a=el("a",null,text);a.href=href;return a;}
function num(v){return v===null||v===undefined?"-":Number(v).toLocaleString("en-US");}
function usd(v){if(v===null||v===undefined)return "-";
  return v>=0.01||v===0?"$"+v.toFixed(4):"$"+v.toFixed(6);}
function ms(v){if(v===null||v===undefined)return "-";if(v<1000)return Math.round(v)+"ms";
  var s=v/1000;if(s<60)return s.toFixed(1)+"s";var m=Math.floor(s/60);
  if(m<60)return m+"m"+String(Math.floor(s%60)).padStart(2,"0")+"s";
  return Math.floor(m/60)+"h"+String(m%60).padStart(2,"0")+"m";}
function when(v){return v?v.replace("T"," ").slice(0,19):"-";}
function api(path){return fetch(path,{headers:{"Accept":"application/json"}}).then(function(r){
  return r.json().then(function(j){if(!r.ok)throw new Error(j.error||r.statusText);return j;});});}
function tools(t){return Object.keys(t||{}).map(function(k){return t[k]>1?k+"\u00d7"+t[k]:k;})
  .join(", ")||"-";}
function status(s){return el("span","status st-"+s,s);}
function sessionHref(id){return "/sessions/"+encodeURIComponent(id);}
/* The viewer at step N of the session (the server finds a delegated child inside its parent). */
function stepHref(id,n){return sessionHref(id)+"/view?step="+n;}
function cell(tr,cls,value){var td=el("td",cls);
  if(value instanceof Node)td.appendChild(value);else td.textContent=value;tr.appendChild(td);
  return td;}
"""

LIST_JS = (
    "(function(){'use strict';"
    + _COMMON
    + r"""
var query=new URLSearchParams(location.search);
var KEYS=["status","model","tool","since","until","min_cost","errors","limit","q"];
var body=document.getElementById("rows"),note=document.getElementById("note");
var hits=document.getElementById("hits"),hitsBody=document.getElementById("hit-rows");
var diffButton=document.getElementById("diff"),picked=[];
function params(){var p=new URLSearchParams();KEYS.forEach(function(k){var v=query.get(k);
  if(v)p.set(k,v);});return p;}
function pickedChanged(){diffButton.disabled=picked.length!==2;
  diffButton.textContent=picked.length===2?"Diff the two picked":"Pick two sessions to diff ("+
  picked.length+"/2)";}
function onPick(id,box){var at=picked.indexOf(id);
  if(box.checked&&at<0){picked.push(id);if(picked.length>2){var old=picked.shift();
    var other=body.querySelector('tr[data-session="'+CSS.escape(old)+'"] input.pick');
    if(other)other.checked=false;}}
  else if(!box.checked&&at>=0)picked.splice(at,1);pickedChanged();}
function draw(rows){var frag=document.createDocumentFragment();
  rows.forEach(function(r){var tr=el("tr",r.parent_id?"child":null);
    tr.dataset.session=r.session_id;tr.dataset.status=r.status;
    var box=el("input","pick");box.type="checkbox";box.checked=picked.indexOf(r.session_id)>=0;
    box.title="pick for a diff";
    box.addEventListener("change",function(){onPick(r.session_id,box);});
    cell(tr,null,box);
    cell(tr,"id",link(sessionHref(r.session_id),(r.parent_id?"\u2514 ":"")+r.session_id));
    cell(tr,null,r.agent||"-");cell(tr,null,r.model||"-");cell(tr,null,when(r.started_at));
    cell(tr,"n",ms(r.duration_ms));cell(tr,"st",status(r.status));cell(tr,"n",num(r.steps));
    cell(tr,null,tools(r.tools));cell(tr,"n",num(r.input_tokens));
    cell(tr,"n",num(r.output_tokens));cell(tr,"n",usd(r.cost_usd));
    cell(tr,"n",r.errors?num(r.errors):"");
    cell(tr,null,link(r.parent_id?stepHref(r.session_id,1):sessionHref(r.session_id)+"/view",
      "view"));
    frag.appendChild(tr);});
  body.replaceChildren(frag);
  note.textContent=rows.length?rows.length+" session"+(rows.length===1?"":"s"):"no sessions";
  note.className="note";}
function drawHits(rows){hitsBody.replaceChildren();hits.hidden=false;
  rows.forEach(function(h){var tr=el("tr");tr.dataset.session=h.session_id;
    cell(tr,"id",link(sessionHref(h.session_id),h.session_id));
    cell(tr,"step n",link(stepHref(h.session_id,h.step),String(h.step)));
    cell(tr,null,h.field);var td=cell(tr,"text","");
    var parts=String(h.snippet).split(/[\u00ab\u00bb]/);
    parts.forEach(function(p,i){td.appendChild(i%2?el("mark",null,p):document.createTextNode(p));});
    hitsBody.appendChild(tr);});
  if(!rows.length)hitsBody.appendChild(el("tr")).appendChild(el("td","note","no matches"));}
function fail(e){note.textContent="error: "+e.message;note.className="note err";
  document.documentElement.dataset.ready="1";}
function load(){return api("/api/sessions?"+params()).then(function(rows){draw(rows);
  document.documentElement.dataset.ready="1";}).catch(fail);}
var pending=false;
function later(){if(pending)return;pending=true;setTimeout(function(){pending=false;load();},50);}
diffButton.addEventListener("click",function(){if(picked.length!==2)return;
  location.href="/diff?a="+encodeURIComponent(picked[0])+"&b="+encodeURIComponent(picked[1]);});
pickedChanged();load();
if(query.get("q"))api("/api/search?"+new URLSearchParams({q:query.get("q"),limit:"50"}))
  .then(drawHits).catch(fail);
var live=new EventSource("/api/live");live.addEventListener("change",later);
})();
"""
)

SESSION_JS = (
    "(function(){'use strict';"
    + _COMMON
    + r"""
var main=document.getElementById("session"),id=main.dataset.session;
var rows=document.getElementById("steps"),badge=document.getElementById("status");
var cards=document.getElementById("cards"),count=document.getElementById("count");
var byStep={};
function viewHref(n){return stepHref(id,n);}
function card(name,value){var d=el("div");d.appendChild(el("dt",null,name));
  var dd=el("dd");if(value instanceof Node)dd.appendChild(value);else dd.textContent=value;
  d.appendChild(dd);d.dataset.card=name;cards.appendChild(d);}
function links(ids){var span=el("span");(ids||[]).forEach(function(c,i){
  if(i)span.appendChild(document.createTextNode(", "));span.appendChild(link(sessionHref(c),c));});
  if(!(ids||[]).length)span.textContent="-";return span;}
function summary(r){id=r.session_id;badge.replaceChildren(status(r.status));
  main.dataset.status=r.status;cards.replaceChildren();
  card("agent",r.agent||"-");card("model",(r.models||[]).join(", ")||r.model||"-");
  card("started (UTC)",when(r.started_at));card("took",ms(r.duration_ms));
  card("steps",num(r.steps));card("tools",tools(r.tools));
  card("tokens",num(r.input_tokens)+" in, "+num(r.output_tokens)+" out, "+num(r.cached_tokens)+
    " cached");
  card("cost",usd(r.cost_usd));card("errors",num(r.errors));
  card("parent",r.parent_id?links([r.parent_id]):"-");card("children",links(r.children));
  card("file",r.path);}
function stepRow(s){var tr=el("tr");tr.dataset.step=s.step;tr.id="row-"+s.step;
  cell(tr,"step n",link(viewHref(s.step),String(s.step)));cell(tr,null,s.source||"");
  cell(tr,"n",ms(s.at_ms));cell(tr,null,s.model||"");
  cell(tr,"n",s.input_tokens===null?"":num(s.input_tokens));
  cell(tr,"n",s.output_tokens===null?"":num(s.output_tokens));
  cell(tr,null,(s.tools||[]).map(function(t){return t.name+(t.error?" \u2717":"")+
    (t.cancelled?" (cancelled)":"");}).join(", "));
  cell(tr,"text",(s.outcome?"["+s.outcome+"] ":"")+(s.text||""));return tr;}
function upsert(s){var tr=stepRow(s),old=byStep[s.step];byStep[s.step]=tr;
  if(old){rows.replaceChild(tr,old);return;}
  var next=null;Array.prototype.some.call(rows.children,function(r){
    if(Number(r.dataset.step)>s.step){next=r;return true;}return false;});
  rows.insertBefore(tr,next);}
function counted(){var n=rows.children.length;count.textContent=n+" step"+(n===1?"":"s");
  main.dataset.steps=String(n);}
var events=new EventSource("/api/sessions/"+encodeURIComponent(id)+"/events");
events.addEventListener("session",function(e){summary(JSON.parse(e.data));
  document.documentElement.dataset.ready="1";});
events.addEventListener("steps",function(e){JSON.parse(e.data).forEach(upsert);counted();});
events.addEventListener("reset",function(){rows.replaceChildren();byStep={};counted();});
events.addEventListener("gone",function(){badge.replaceChildren(status("gone"));
  main.dataset.status="gone";});
events.addEventListener("error",function(){if(events.readyState===2){
  badge.replaceChildren(status("disconnected"));}});
})();
"""
)
