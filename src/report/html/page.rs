//! The page around the sections: one self-contained HTML file (inline CSS
//! and a little plain JavaScript, nothing fetched: the page's content
//! security policy forbids every request), paged tables, and print rules
//! (every page of every table printed, no hover-only text lost: each value
//! shown on hover is also in a table; folds open).

use std::fmt::Write;

use super::esc;

/// The page's style: screen, then print.
const CSS: &str = r#"
:root{--ink:#1d232a;--muted:#5f6b76;--line:#d5dbe1;--bg:#fff;--soft:#f4f6f8;--err:#c62828;--warn:#e08e0b;--ok:#2e7d32}
*{box-sizing:border-box}
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--ink);background:var(--bg);margin:0;padding:0 24px 48px}
header{border-bottom:1px solid var(--line);padding:16px 0 8px}
h1{font-size:22px;margin:0 0 4px}
h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid var(--line);padding-bottom:4px}
h3{font-size:15px;margin:16px 0 6px}
nav a{margin-right:14px;color:#1565c0;text-decoration:none}
.muted,.sources{color:var(--muted)}
code,.mono,td.num,.hex{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
table{border-collapse:collapse;margin:6px 0 10px}
th,td{border:1px solid var(--line);padding:3px 7px;text-align:left;vertical-align:top}
th{background:var(--soft);font-weight:600}
td.num{text-align:right}
.badge{display:inline-block;padding:2px 12px;border-radius:12px;color:#fff;font-weight:700;letter-spacing:.02em}
.v-healthy .badge,.st-ok{background:var(--ok)}
.v-warnings .badge,.st-under_replicated{background:var(--warn)}
.v-damaged .badge,.st-diverged,.st-lost{background:var(--err)}
.restarts{list-style:none;padding:0;margin:0}.restarts li{margin:4px 0}
.restarts li.unclean .badge{background:var(--err)}.restarts li.clean .badge{background:var(--ok)}
.restarts li.election{font-weight:600}
.st{color:#fff;padding:1px 8px;border-radius:9px;font-size:12px}
.verdict{font-size:16px}
tr.sev-error td.sev{color:var(--err);font-weight:700}
tr.sev-warning td.sev{color:var(--warn);font-weight:700}
figure{margin:6px 0 12px;break-inside:avoid}
figure.partition{margin:2px 0 4px}svg text.partition-name{font-weight:700;font-size:12px}
figcaption{margin-bottom:0}
figure p{margin:2px 0}
svg{display:block;max-width:100%;height:auto}
svg text{font:11px system-ui,sans-serif;fill:var(--ink)}
.segment{stroke:#fff;stroke-width:1}
.seg-a{fill:#90a4ae}.seg-b{fill:#b0bec5}
.before-start{fill:#eceff1}
.mark line{stroke-width:2}.mark .flag{stroke:none}.mark text.flag-letter{fill:#fff;font:bold 9px system-ui,sans-serif;text-anchor:middle}
.m-log-start{stroke:#37474f;fill:#37474f}.m-recovery-point{stroke:#6a1b9a;fill:#6a1b9a}.m-recovery-point line{stroke-dasharray:4 2}
.m-high-watermark{stroke:#1565c0;fill:#1565c0}.m-last-stable{stroke:#00838f;fill:#00838f}.m-last-stable line{stroke-dasharray:2 2}.m-log-end{stroke:#263238;fill:#263238}
.axis-line,.tick{stroke:#78909c;stroke-width:1}.grid{stroke:#eceff1;stroke-width:1}svg text.tick-label{font-size:10px;fill:var(--muted);text-anchor:middle}
svg text.lane-label{font-size:11px;fill:var(--muted)}
.txn-open{fill:#ffb300}.txn-aborted{fill:#8d6e63}
.damage{fill:var(--err)}
.kafka-drops{fill:var(--err);opacity:.55}.salvage-loses{fill:#ad1457}
.divergence{stroke:var(--err);stroke-width:3}.divergence-label{fill:var(--err);font-weight:700}.truncation{stroke:#6a1b9a;stroke-width:2;stroke-dasharray:4 2}
.run{stroke:#fff;stroke-width:1}
.marks{font-size:12px;color:var(--muted)}.marks span{margin-right:14px;white-space:nowrap}.marks b{color:var(--ink)}
.heat td.cell{text-align:right;font-family:ui-monospace,monospace;min-width:44px;color:#111}
.heat td.total{font-weight:700;background:var(--soft)}
.legend span{display:inline-block;width:14px;height:12px;margin:0 3px 0 10px;vertical-align:middle;border:1px solid #0002}
.pager{margin:2px 0 12px}
details.fold{margin:6px 0 10px}details.fold>summary{cursor:pointer;font-weight:600;color:#1565c0}
.pager button{font:inherit;padding:0 10px}
#tip{position:absolute;z-index:9;max-width:560px;background:#263238;color:#fff;padding:6px 9px;border-radius:4px;font:12px/1.4 ui-monospace,monospace;white-space:pre-wrap;pointer-events:none}
.hexview{font:12px/1.6 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;white-space:pre;overflow-x:auto;border:1px solid var(--line);padding:8px;background:var(--soft)}
.hexview .addr{color:var(--muted);margin-right:10px}
.hexview .f{border-radius:2px;padding:1px 0;cursor:default}
.hexview .d0{background:#e3f2fd}.hexview .d1{background:#e8f5e9}.hexview .d2{background:#fff8e1}
.hexview .u{color:#9aa5b1}
.hl,.hexview .hl{background:#ffd54f!important;outline:1px solid #f57f17}
tr.hl td{background:#fff3c4}
table.fields tr.d1 td:nth-child(3){padding-left:20px}
table.fields tr.d2 td:nth-child(3){padding-left:34px}
@media print{
  body{padding:0;font-size:11px}
  nav,.pager,#tip{display:none!important}
  tbody.page[hidden]{display:table-row-group!important}
  section{break-before:auto}
  h2{break-after:avoid}
  .badge,.st,td.cell,.hexview span{-webkit-print-color-adjust:exact;print-color-adjust:exact}
}
"#;

/// Hover (tooltips; a layout field lit in the hex view and its table) and
/// paging. Text shown is set with `textContent`, never parsed as HTML.
const JS: &str = r#"
(function(){
"use strict";
var tip=document.getElementById("tip");
var lit=[];
function clear(){lit.forEach(function(e){e.classList.remove("hl");});lit=[];}
function show(ev,text){tip.textContent=text;tip.hidden=false;
  tip.style.left=(ev.pageX+14)+"px";tip.style.top=(ev.pageY+14)+"px";}
document.addEventListener("mouseover",function(ev){
  var t=ev.target;if(!(t instanceof Element))return;
  clear();
  var f=t.closest("[data-f]");
  if(f){var k=f.getAttribute("data-f");
    document.querySelectorAll('[data-f="'+k+'"]').forEach(function(e){e.classList.add("hl");lit.push(e);});
    var row=document.getElementById("f-"+k);
    if(row){show(ev,row.getAttribute("data-tip"));return;}}
  var d=t.closest("[data-tip]");
  if(d){show(ev,d.getAttribute("data-tip"));}else{tip.hidden=true;}
});
document.querySelectorAll(".pager").forEach(function(p){
  var table=document.getElementById(p.getAttribute("data-for"));if(!table)return;
  var pages=table.querySelectorAll("tbody.page");var cur=0;var label=p.querySelector(".pageno");
  p.addEventListener("click",function(ev){var b=ev.target.closest("button");if(!b)return;
    var n=cur+parseInt(b.getAttribute("data-step"),10);if(n<0||n>=pages.length)return;
    pages[cur].hidden=true;pages[n].hidden=false;cur=n;label.textContent=(n+1)+" / "+pages.length;});
});
window.addEventListener("beforeprint",function(){
  document.querySelectorAll("details.fold").forEach(function(d){d.open=true;});});
document.body.setAttribute("data-ready","1");
})();
"#;

/// The page's content security policy, for a page whose one inline
/// script is `script`: nothing is fetched (`default-src 'none'`, images
/// only as `data:` URLs); the inline `<style>` applies; the only script
/// that runs is the one whose SHA-256 is `script`'s (CSP Level 2 hash
/// source: the digest of the script element's text, base64), so markup
/// that got into the page (an escaping bug) cannot run its own, nor an
/// event-handler attribute; no form posts anywhere (`form-action 'none'`)
/// and no `<base>` moves the page's relative links (`base-uri 'none'`),
/// neither of which `default-src` covers.
pub fn csp(script: &str) -> String {
    use base64::Engine as _;
    use sha2::Digest as _;
    let hash = base64::engine::general_purpose::STANDARD.encode(sha2::Sha256::digest(script));
    format!(
        "default-src 'none'; style-src 'unsafe-inline'; script-src 'sha256-{hash}'; \
         img-src data:; form-action 'none'; base-uri 'none'"
    )
}

/// The whole page: `title`, the navigation links (`(id, label)`), then `body`.
pub fn page(title: &str, nav: &[(&str, &str)], body: &str) -> String {
    let mut h = String::with_capacity(body.len() + CSS.len() + JS.len() + 1024);
    h.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    let _ = writeln!(
        h,
        "<meta http-equiv=\"Content-Security-Policy\" content=\"{}\">",
        csp(JS)
    );
    h.push_str("<meta name=\"generator\" content=\"klog report\">\n");
    let _ = writeln!(h, "<title>{}</title>", esc(title));
    let _ = writeln!(h, "<style>{CSS}</style>\n</head>\n<body>");
    if !nav.is_empty() {
        h.push_str("<nav>");
        for (id, label) in nav {
            let _ = write!(h, "<a href=\"#{id}\">{label}</a>");
        }
        h.push_str("</nav>\n");
    }
    h.push_str(body);
    h.push_str("<div id=\"tip\" hidden></div>\n<script>");
    h.push_str(JS);
    h.push_str("</script>\n</body>\n</html>\n");
    h
}

/// A fold, closed on screen and opened for print: `summary`, then what
/// `body` writes.
pub fn folded(out: &mut String, summary: &str, body: impl FnOnce(&mut String)) {
    let _ = write!(out, "<details class=\"fold\"><summary>{summary}</summary>");
    body(out);
    out.push_str("</details>\n");
}

/// A [`paged_table`] of class and id `id` in a fold headed `summary`.
pub fn folded_table(out: &mut String, summary: &str, id: &str, head: &str, rows: &[String]) {
    folded(out, summary, |b| paged_table(b, id, id, head, rows));
}

/// Rows per page of a paged table.
pub const PAGE_ROWS: usize = 100;

/// A table of `rows` (each a whole `<tr>`), under `head` (the `<tr>` of
/// headers), in pages of [`PAGE_ROWS`]: the first shown, the others
/// hidden until the pager turns to them (all printed).
pub fn paged_table(out: &mut String, id: &str, class: &str, head: &str, rows: &[String]) {
    let _ = write!(
        out,
        "<table id=\"{id}\" class=\"{class}\"><thead>{head}</thead>"
    );
    let pages = rows.len().div_ceil(PAGE_ROWS).max(1);
    for (i, chunk) in rows.chunks(PAGE_ROWS).enumerate() {
        let _ = write!(
            out,
            "<tbody class=\"page\" data-page=\"{i}\"{}>",
            if i == 0 { "" } else { " hidden" }
        );
        for r in chunk {
            out.push_str(r);
        }
        out.push_str("</tbody>");
    }
    out.push_str("</table>\n");
    if pages > 1 {
        let _ = writeln!(
            out,
            "<div class=\"pager\" data-for=\"{id}\"><button data-step=\"-1\">&lsaquo; previous</button> \
             page <span class=\"pageno\">1 / {pages}</span> of {} rows \
             <button data-step=\"1\">next &rsaquo;</button></div>",
            rows.len()
        );
    }
}
