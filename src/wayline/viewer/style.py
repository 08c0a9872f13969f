"""The page's stylesheet (inline in the page; no fonts or images from anywhere)."""

from __future__ import annotations

CSS = """
:root{--bg:#fbfbfd;--fg:#1d2330;--mut:#687083;--line:#dfe2ea;--card:#fff;--acc:#3558d6;
--user:#2f7d4f;--sys:#7a5af8;--agent:#3558d6;--tool:#c06a00;--appr:#b0317a;--sub:#17808a;
--err:#c62828;--errbg:#fdecec;--hl:#fff6cc;--mono:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
@media (prefers-color-scheme:dark){:root{--bg:#14161c;--fg:#e4e7ef;--mut:#9aa2b5;--line:#2c313d;
--card:#1b1e26;--errbg:#3a1c1f;--hl:#3a3418}}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--fg);font:14px/1.45 system-ui,-apple-system,
"Segoe UI",Roboto,sans-serif}
main{max-width:1180px;margin:0 auto;padding:14px 18px 80px}
h1{font-size:19px;margin:4px 0 10px;word-break:break-all}
h2{font-size:15px;margin:18px 0 8px}
button{font:inherit;font-size:12px;border:1px solid var(--line);background:var(--card);
color:var(--fg);border-radius:5px;padding:1px 7px;cursor:pointer}
button:hover{border-color:var(--acc)}
pre{font:12.5px/1.4 var(--mono);white-space:pre-wrap;word-break:break-word;margin:4px 0;
background:var(--bg);border:1px solid var(--line);border-radius:5px;padding:6px 8px}
.mut{color:var(--mut)}
.picker{border:1px solid var(--line);background:var(--card);border-radius:8px;padding:8px 10px;
margin-bottom:10px}
.picker ol{margin:4px 0 0;padding-left:22px;max-height:220px;overflow:auto}
.picker li{padding:1px 0}.picker li.cur a{font-weight:700}
.picker a{color:var(--acc);text-decoration:none;cursor:pointer}
.hdr{display:grid;grid-template-columns:repeat(auto-fill,minmax(235px,1fr));gap:6px;
margin-bottom:8px}
.kv{background:var(--card);border:1px solid var(--line);border-radius:7px;padding:5px 9px;
min-width:0}
.kv b{display:block;font-size:11px;color:var(--mut);font-weight:600;text-transform:uppercase;
letter-spacing:.04em}
.kv span{display:block;overflow-wrap:anywhere;word-break:break-word}
.kv.bad{border-color:var(--err);background:var(--errbg);cursor:pointer}
.warn{border:1px solid #d9a400;background:var(--hl);border-radius:7px;padding:6px 10px;
margin:8px 0}
.warn ul{margin:4px 0;padding-left:20px;max-height:160px;overflow:auto;font:12px var(--mono)}
.tlbox{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:6px 8px}
.tlaxis{display:flex;margin-left:260px;position:relative;height:16px;font-size:11px;
color:var(--mut)}
.tlaxis span{position:absolute;transform:translateX(-50%);white-space:nowrap}
.tlaxis span:first-child{transform:none}
.tlrows{max-height:330px;overflow:auto;position:relative}
.tlrow{display:flex;height:20px;align-items:center;cursor:pointer}
.tlrow:hover{background:var(--bg)}
.tllab{width:260px;flex:none;overflow:hidden;white-space:nowrap;text-overflow:ellipsis;
font-size:12px;padding-right:6px}
.tltrack{flex:1;position:relative;height:100%}
.bar{position:absolute;top:4px;height:12px;border-radius:3px;min-width:2px;opacity:.9}
.llm{background:var(--agent)}.tool{background:var(--tool)}
.approval{background:var(--appr)}.bar.subagent,.sw.subagent{background:var(--sub);opacity:.45}
.bar.turn,.sw.turn{background:var(--user);opacity:.3}.bar.stop,.sw.stop{background:#d9a400}
.bar.cn,.sw.cn{background:var(--mut)}.bar.turn.stop{opacity:.55}.bar.turn.cn{opacity:.45}
.bar.err,.sw.err{background:var(--err)}.bar.ap{background-image:repeating-linear-gradient(45deg,
transparent 0 4px,rgba(255,255,255,.45) 4px 8px)}
.dur{position:absolute;top:3px;font-size:10.5px;color:var(--mut);padding:0 4px;
white-space:nowrap}
.par{color:var(--tool);font-weight:700}
.legend{font-size:12px;color:var(--mut);margin:4px 0 0}
.legend i{display:inline-block;width:10px;height:10px;border-radius:2px;margin:0 3px 0 10px;
vertical-align:-1px}
.tools{position:sticky;top:0;z-index:5;background:var(--bg);padding:8px 0;display:flex;
flex-wrap:wrap;gap:8px;align-items:center;border-bottom:1px solid var(--line)}
.tools input[type=search]{flex:1;min-width:220px;font:inherit;padding:4px 8px;
border:1px solid var(--line);border-radius:6px;background:var(--card);color:var(--fg)}
.tools label{font-size:13px;white-space:nowrap}
.step{background:var(--card);border:1px solid var(--line);border-left:4px solid var(--mut);
border-radius:7px;margin:8px 0;padding:6px 10px;scroll-margin-top:60px}
.step:focus{outline:2px solid var(--acc);outline-offset:1px}
.step.user{border-left-color:var(--user)}.step.system{border-left-color:var(--sys)}
.step.agent{border-left-color:var(--agent)}
.step.err{border-color:var(--err);border-left-color:var(--err);background:var(--errbg)}
.step.target{box-shadow:0 0 0 3px var(--hl)}
.sh{display:flex;gap:8px;align-items:baseline;flex-wrap:wrap;font-size:12.5px}
.sh a.sid{font-weight:700;color:var(--fg);text-decoration:none}
.src{font-weight:600;text-transform:uppercase;font-size:11px;letter-spacing:.05em}
.user .src{color:var(--user)}.system .src{color:var(--sys)}.agent .src{color:var(--agent)}
.msg{white-space:pre-wrap;word-break:break-word;margin:4px 0}
.reason{margin:4px 0}.reason summary{cursor:pointer;color:var(--mut);font-size:12.5px}
.call{border:1px solid var(--line);border-radius:6px;margin:6px 0;padding:4px 8px}
.call.err{border-color:var(--err)}
.ch{display:flex;gap:8px;align-items:center;flex-wrap:wrap;font-size:12.5px}
.ch .fn{font-weight:700;color:var(--tool);font-family:var(--mono)}
.ch code{color:var(--mut);font-size:11.5px}
.lbl{font-size:11px;text-transform:uppercase;color:var(--mut);letter-spacing:.04em;
display:flex;gap:6px;align-items:center;margin-top:4px}
.errtag{color:#fff;background:var(--err);border-radius:4px;padding:0 5px;font-size:11px}
.cntag,.outtag{color:#fff;background:var(--mut);border-radius:4px;padding:0 5px;font-size:11px}
.outtag.ok{background:var(--user)}.outtag.stop{background:#a07800}.outtag.bad{background:var(--err)}
.step.cn{border-left-color:var(--mut)}
.fold{margin-left:4px}
.sub{border-left:3px solid var(--sub);margin:6px 0 2px 6px;padding-left:8px}
.sub>.subh{font-size:12.5px;color:var(--sub);font-weight:600}
.more{display:block;margin:10px auto;padding:4px 14px}
.help{font-size:12px;color:var(--mut)}
kbd{font:11px var(--mono);border:1px solid var(--line);border-radius:3px;padding:0 3px}
.empty{color:var(--mut);padding:20px;text-align:center}
.pad{overflow-anchor:none}
mark{background:#ffd54a;color:#1d2330;border-radius:2px;padding:0 1px}
.bidi{color:var(--err);border:1px dashed var(--err);border-radius:3px;font:11px var(--mono);
padding:0 2px}
.call.rw{border-color:var(--appr);border-style:dashed}
.rwtag,.mwtag{color:#fff;background:var(--appr);border-radius:4px;padding:0 5px;font-size:11px}
.mwtag{background:var(--sys)}
.xargs{border-color:var(--appr)}
.trace,.changes{margin:2px 0 4px;padding-left:20px;font-size:12.5px}
.changes{font-family:var(--mono);font-size:12px}
@media (max-width:640px){main{padding:10px 8px 60px}.tllab{width:120px}
.hdr{grid-template-columns:repeat(2,minmax(0,1fr))}
.tlaxis{margin-left:120px}.help{display:none}}
"""
