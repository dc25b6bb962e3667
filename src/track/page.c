/* page.c - the live page: the JSON documents the HTTP thread serves, and the HTML page.
 *
 * The service thread builds each JSON document (topics, prevalence, events,
 * status) from the model and the tracker, and publishes it here with
 * slda_page_set; the HTTP thread (http.c) only ever copies the published text
 * under the mutex, so it never touches the model while training runs. The
 * page is one self-contained HTML document (inline CSS and JS, SVG charts
 * drawn in the browser from /api/...; no external resources) that polls the
 * JSON every few seconds.
 */
#include "track/track.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

struct slda_page_s {
    pthread_mutex_t lock;
    char *doc[SLDA_PAGE__COUNT];
    size_t len[SLDA_PAGE__COUNT];
    uint64_t ver[SLDA_PAGE__COUNT];   /* moves when a document's text changes */
    char *gz[SLDA_PAGE__COUNT];       /* its gzip form (made by the first request wanting it) */
    size_t gzlen[SLDA_PAGE__COUNT];
    uint64_t gzver[SLDA_PAGE__COUNT]; /* the version gz[] was made from */
    struct {
        uint32_t topic;
        char *text;
    } label[SLDA_PAGE_LABELS]; /* a queue: nlabels waiting, the oldest first */
    size_t nlabels;
    uint32_t K;           /* the model's topics: a label for another topic is refused */
};

void slda_page_set_topics(slda_page_t *page, uint32_t K)
{
    pthread_mutex_lock(&page->lock);
    page->K = K;
    pthread_mutex_unlock(&page->lock);
}

int slda_page_label_post(slda_page_t *page, uint32_t topic, const char *text)
{
    int ok = 0;
    pthread_mutex_lock(&page->lock);
    if (page->K && topic >= page->K) {
        ok = -1;
    } else if (page->nlabels < SLDA_PAGE_LABELS) {
        page->label[page->nlabels].topic = topic;
        page->label[page->nlabels++].text = slda_xstrdup(text);
        ok = 1;
    }
    pthread_mutex_unlock(&page->lock);
    return ok;
}

int slda_page_label_take(slda_page_t *page, uint32_t *topic, char **text)
{
    int got = 0;
    pthread_mutex_lock(&page->lock);
    if (page->nlabels) {
        *topic = page->label[0].topic;
        *text = page->label[0].text;
        memmove(&page->label[0], &page->label[1], --page->nlabels * sizeof page->label[0]);
        got = 1;
    }
    pthread_mutex_unlock(&page->lock);
    return got;
}

slda_page_t *slda_page_new(void)
{
    slda_page_t *page = slda_xcalloc(1, sizeof *page);
    pthread_mutex_init(&page->lock, NULL);
    return page;
}

void slda_page_destroy(slda_page_t *page)
{
    if (!page)
        return;
    for (int i = 0; i < SLDA_PAGE__COUNT; i++) {
        free(page->doc[i]);
        free(page->gz[i]);
    }
    for (size_t i = 0; i < page->nlabels; i++)
        free(page->label[i].text);
    pthread_mutex_destroy(&page->lock);
    free(page);
}

void slda_page_set(slda_page_t *page, slda_page_doc_t doc, char *json, size_t len)
{
    pthread_mutex_lock(&page->lock);
    char *old = page->doc[doc], *oldgz = NULL;
    if (old && page->len[doc] == len && !memcmp(old, json, len)) {
        old = json; /* the same text: the version (what the page refetches by) stays */
    } else {
        page->doc[doc] = json;
        page->len[doc] = len;
        page->ver[doc]++;
        oldgz = page->gz[doc];
        page->gz[doc] = NULL;
    }
    pthread_mutex_unlock(&page->lock);
    free(old);
    free(oldgz);
}

uint64_t slda_page_version(slda_page_t *page, slda_page_doc_t doc)
{
    pthread_mutex_lock(&page->lock);
    uint64_t v = page->ver[doc];
    pthread_mutex_unlock(&page->lock);
    return v;
}

/* len bytes gzip-compressed (level 6: about a quarter of the JSON's bytes): malloc'ed, or NULL. */
static char *gzip_bytes(const char *src, size_t len, size_t *out_len)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) /* +16: gzip */
        return NULL;
    size_t cap = deflateBound(&z, (uLong)len) + 32;
    char *out = slda_xmalloc(cap);
    z.next_in = (Bytef *)src;
    z.avail_in = (uInt)len;
    z.next_out = (Bytef *)out;
    z.avail_out = (uInt)cap;
    int rc = deflate(&z, Z_FINISH);
    *out_len = z.total_out;
    deflateEnd(&z);
    if (rc != Z_STREAM_END) {
        free(out);
        return NULL;
    }
    return out;
}

char *slda_page_get_gzip(slda_page_t *page, slda_page_doc_t doc, size_t *len)
{
    char *copy = NULL;
    pthread_mutex_lock(&page->lock);
    if (page->gz[doc] && page->gzver[doc] == page->ver[doc]) {
        copy = slda_xmalloc(page->gzlen[doc] + 1);
        memcpy(copy, page->gz[doc], page->gzlen[doc]);
        *len = page->gzlen[doc];
        pthread_mutex_unlock(&page->lock);
        return copy;
    }
    uint64_t ver = page->ver[doc];
    pthread_mutex_unlock(&page->lock);
    size_t rawlen = 0;
    char *raw = slda_page_get(page, doc, &rawlen);
    if (!raw)
        return NULL;
    char *gz = gzip_bytes(raw, rawlen, len); /* outside the lock: the service thread never waits */
    free(raw);
    if (!gz)
        return NULL;
    pthread_mutex_lock(&page->lock);
    if (page->ver[doc] == ver) { /* still the current text: keep it for the next requests */
        free(page->gz[doc]);
        page->gz[doc] = slda_xmalloc(*len + 1);
        memcpy(page->gz[doc], gz, *len);
        page->gzlen[doc] = *len;
        page->gzver[doc] = ver;
    }
    pthread_mutex_unlock(&page->lock);
    return gz;
}

char *slda_page_get(slda_page_t *page, slda_page_doc_t doc, size_t *len)
{
    char *copy = NULL;
    pthread_mutex_lock(&page->lock);
    if (page->doc[doc]) {
        copy = slda_xmalloc(page->len[doc] + 1);
        memcpy(copy, page->doc[doc], page->len[doc]);
        copy[page->len[doc]] = '\0';
        *len = page->len[doc];
    }
    pthread_mutex_unlock(&page->lock);
    return copy;
}

static const char page_html[] =
"<!DOCTYPE html>\n"
"<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
"<title>streamlda: live topics</title>\n"
"<link rel=\"icon\" href=\"data:,\">\n"
"<style>\n"
"body{font:14px/1.4 system-ui,-apple-system,'Segoe UI',sans-serif;margin:0;background:#f6f7f9;color:#222}\n"
"header{background:#1f3a5f;color:#fff;padding:10px 16px}\n"
"header h1{font-size:18px;margin:0 0 4px}\n"
"#status{display:flex;flex-wrap:wrap;gap:6px 18px;font-size:13px}\n"
"#status b{font-weight:600}\n"
"main{display:grid;grid-template-columns:minmax(0,3fr) minmax(0,2fr);gap:14px;padding:14px}\n"
"section{background:#fff;border:1px solid #dde1e6;border-radius:6px;padding:10px 12px}\n"
"h2{font-size:15px;margin:0 0 8px}\n"
"#chart svg{width:100%;height:auto;display:block}\n"
"#legend{font-size:12px;display:flex;flex-wrap:wrap;gap:4px 12px;margin-top:6px}\n"
"#legend span i{display:inline-block;width:10px;height:10px;margin-right:4px;border-radius:2px}\n"
"#topics{display:grid;grid-template-columns:repeat(auto-fill,minmax(260px,1fr));gap:8px}\n"
".topic{border:1px solid #e3e6ea;border-radius:5px;padding:6px 8px;font-size:13px}\n"
".topic .hd{display:flex;justify-content:space-between;align-items:center;gap:6px}\n"
".bar{height:4px;background:#e8ecf1;border-radius:2px;margin:4px 0}\n"
".bar i{display:block;height:4px;background:#3b7dd8;border-radius:2px}\n"
".words{color:#333}\n"
".tag{font-size:11px;padding:1px 6px;border-radius:8px;color:#fff}\n"
".emerging{background:#2e8b57}.fading{background:#b5651d}.dead{background:#777}\n"
".drift{color:#666;font-size:12px}\n"
"#events{max-height:420px;overflow:auto;font-size:13px;margin:0;padding:0;list-style:none}\n"
"#events li{border-bottom:1px solid #eee;padding:4px 0}\n"
"#events .k{font-weight:600;text-transform:uppercase;font-size:11px;margin-right:6px}\n"
".muted{color:#777}\n"
".lbl{font-weight:600}.lbl.auto{font-weight:400;color:#555}\n"
".topic button{font-size:11px;border:1px solid #ccd;background:#f8f9fb;border-radius:4px;cursor:pointer;padding:0 5px}\n"
".docs{margin:4px 0 0;padding-left:16px;font-size:12px;color:#333}.docs li{margin:2px 0;overflow-wrap:anywhere}\n"
"#search{font-size:13px;padding:2px 6px;margin-left:8px;max-width:60%}\n"
"#groups table{border-collapse:collapse;width:100%;font-size:13px}#groups td,#groups th{text-align:left;padding:3px 6px;border-bottom:1px solid #eee;vertical-align:middle}\n"
"#groups th{font-weight:600;font-size:12px;color:#555}#groups td.n{text-align:right;white-space:nowrap}#groups svg{display:block}#groups td.g{overflow-wrap:anywhere}\n"
/* a phone: each group a block (name, documents, its line; its topics below), no sideways scroll */
"@media (max-width:800px){#groups th{display:none}#groups tr{display:block;border-bottom:1px solid #eee;padding:3px 0}#groups td{display:inline-block;border:0;padding:1px 4px;vertical-align:middle}#groups td.t{display:block}}\n"
"@media (max-width:800px){main{grid-template-columns:1fr;padding:8px}#topics{grid-template-columns:1fr}}\n"
"</style></head><body>\n"
"<header><h1>streamlda <span id=\"model\"></span></h1><div id=\"status\">loading...</div></header>\n"
"<main>\n"
"<section><h2>Prevalence over event time</h2><div id=\"chart\"><p class=\"muted\">no documents yet</p></div>"
"<div id=\"legend\"></div><p id=\"chartnote\" class=\"muted\" style=\"font-size:12px;margin:4px 0 0\"></p><p class=\"muted\" style=\"font-size:12px;margin:4px 0 0\">Each window's "
"share shrunk toward the topic's mean by the weight of 10 documents: a window of few documents "
"cannot spike (/api/prevalence has the shares as measured).</p></section>\n"
"<section><h2>Events</h2><ul id=\"events\"><li class=\"muted\">none yet</li></ul></section>\n"
"<section id=\"ssec\" style=\"grid-column:1/-1;display:none\"><h2>Super-topics <span id=\"snote\" class=\"muted\"></span></h2><ul id=\"supers\" class=\"docs\"></ul></section>\n"
"<section id=\"gsec\" style=\"grid-column:1/-1;display:none\"><h2><span id=\"gtitle\">Groups</span> <span id=\"gnote\" class=\"muted\"></span></h2>"
"<div id=\"groups\"></div></section>\n"
"<section style=\"grid-column:1/-1\"><h2>Topics <span id=\"ntopics\" class=\"muted\"></span>"
"<input id=\"search\" type=\"search\" placeholder=\"search: a word or a label\" aria-label=\"search topics\"></h2>"
"<div id=\"topics\"></div></section>\n"
"</main>\n"
"<script>\n"
"'use strict';\n"
"var COLORS=['#3b7dd8','#d8573b','#2e8b57','#8e44ad','#c29d0b','#16a2b8','#e83e8c','#6c757d','#795548','#20c997'];\n"
"var topicsData=null,examples=null,openDocs={},CARDS=100,showAll=false,byTopic=null,pins=[],prevData=null,redraw=false;\n"
/* a topic pinned to the chart (its card's "chart" button, up to 10) replaces the 8 that moved
 * most; its shares come from /api/prevalence (every topic), fetched only while a pin is set */
"function pin(k){var i=pins.indexOf(k);if(i>=0)pins.splice(i,1);else if(pins.length<10)pins.push(k);seen.prevalence=null;redraw=true;if(topicsData)renderTopics(topicsData);refresh();}\n"
"function pinnedChart(p){var ids=pins.slice(),docs=0,mean=ids.map(function(){return 0;});p.windows.forEach(function(w){docs+=w.docs;ids.forEach(function(k,j){mean[j]+=w.share[k]*w.docs;});});\n"
" return {topics:ids,pinned:true,mean:mean.map(function(x){return docs>0?x/docs:0;}),window_ms:p.window_ms,windows:p.windows.map(function(w){return {start:w.start,docs:w.docs,share:ids.map(function(k){return w.share[k];})};})};}\n"
"function labelOf(x){return x.label!==null&&x.label!==undefined?x.label:'['+x.auto+']';}\n"
"function matches(x,q){if(!q)return true;q=q.toLowerCase();if((x.label||'').toLowerCase().indexOf(q)>=0||(x.auto||'').toLowerCase().indexOf(q)>=0)return true;\n"
" return x.words.some(function(w){return w[0].toLowerCase().indexOf(q)===0;});}\n"
"function setLabel(k,cur){var v=prompt('Label of topic #'+k+' (empty: none)',cur||'');if(v===null)return;\n"
" fetch('api/labels',{method:'POST',headers:{'Content-Type':'application/json'},body:JSON.stringify({topic:k,label:v})}).then(function(r){if(!r.ok)return r.text().then(function(t){alert(t);});setTimeout(refresh,2500);});}\n"
"function showDocs(c,k){var ul=el('ul',{'class':'docs'});c.appendChild(ul);var go=function(){var l=examples&&examples.topics[k]||[];ul.textContent='';\n"
"  if(!l.length)ul.appendChild(el('li',{'class':'muted'},'no document yet'));l.forEach(function(d){var li=el('li');li.appendChild(el('b',null,d.id+' '));\n"
"  li.appendChild(el('span',{'class':'muted'},d.time+' '+(100*d.score).toFixed(0)+'% '));li.appendChild(document.createTextNode(d.text));ul.appendChild(li);});};\n"
" if(examples)go();else get('api/examples').then(function(e){examples=e;go();}).catch(function(){});}\n"
"function el(tag,attrs,text){var e=document.createElement(tag);if(attrs)for(var k in attrs)e.setAttribute(k,attrs[k]);if(text!==undefined)e.textContent=text;return e;}\n"
"function svg(tag,attrs){var e=document.createElementNS('http://www.w3.org/2000/svg',tag);for(var k in attrs)e.setAttribute(k,attrs[k]);return e;}\n"
/* time ticks: the rule of track/ticks.c (the finest calendar step whose labels fit, years named) */
"var MON=['Jan','Feb','Mar','Apr','May','Jun','Jul','Aug','Sep','Oct','Nov','Dec'];\n"
"var STEPS=[[0,1],[0,2],[0,5],[0,10],[0,15],[0,30],[1,1],[1,2],[1,3],[1,6],[1,12],[2,1],[2,2],[3,1],[4,1],[4,2],[4,3],[4,6],[5,1],[5,2],[5,5],[5,10],[5,20],[5,50],[5,100],[5,200],[5,500],[5,1000]];\n"
"function fixedMs(u,n){return u===0?6e4*n:u===1?36e5*n:u===2?864e5*n:6048e5;}\n"
"function firstTick(s,t){var u=s[0],n=s[1];if(u<=3){var st=fixedMs(u,n),off=u===3?4*864e5:0;return (Math.floor((t-off-1)/st)+1)*st+off;}\n"
" var d=new Date(t),m=d.getUTCFullYear()*12+d.getUTCMonth(),ev=u===4?n:12*n;for(var i=Math.floor(m/ev)*ev;;i+=ev){var ms=Date.UTC(Math.floor(i/12),i%12,1);if(ms>=t)return ms;}}\n"
"function nextTick(s,t){var u=s[0],n=s[1];if(u<=3)return t+fixedMs(u,n);var d=new Date(t);return Date.UTC(d.getUTCFullYear(),d.getUTCMonth()+(u===4?n:12*n),1);}\n"
"function p2(x){return (x<10?'0':'')+x;}\n"
"function tickLabel(u,d,q){var Y=d.getUTCFullYear(),M=MON[d.getUTCMonth()],D=d.getUTCDate(),hm=p2(d.getUTCHours())+':'+p2(d.getUTCMinutes());\n"
" var ny=!q||q.getUTCFullYear()!==Y,nd=ny||q.getUTCMonth()!==d.getUTCMonth()||q.getUTCDate()!==D;\n"
" if(u===5)return ''+Y;if(u===4)return ny?M+' '+Y:M;if(u>=2)return ny?D+' '+M+' '+Y:D+' '+M;if(ny)return D+' '+M+' '+Y+' '+hm;return nd?D+' '+M+' '+hm:hm;}\n"
"function tryStep(s,t0,t1,width,cw){var out=[],q=null;for(var ms=firstTick(s,t0);ms<=t1;ms=nextTick(s,ms)){if(out.length===64)return null;\n"
"  var d=new Date(ms),lab=tickLabel(s[0],d,q),x=width*(ms-t0)/(t1-t0),z=out[out.length-1];q=d;\n"
"  if(z&&z.labelled&&z.x+2+cw*z.label.length+cw>x)return null;out.push({ms:ms,x:x,label:lab,labelled:x+2+cw*lab.length<=width});}return out;}\n"
"function ticks(t0,t1,width,cw){var one=null;if(!(t1>t0))return [];for(var i=0;i<STEPS.length;i++){var r=tryStep(STEPS[i],t0,t1,width,cw);if(r&&r.length>=2)return r;if(r&&r.length===1&&!one)one=r;}return one||[];}\n"
"function iso(ms){if(!ms)return '-';return new Date(ms).toISOString().replace('.000Z','Z');}\n"
"function dur(s){if(s<0||s===null||s===undefined)return '-';if(s<120)return s.toFixed(0)+' s';if(s<7200)return (s/60).toFixed(0)+' min';if(s<172800)return (s/3600).toFixed(1)+' h';return (s/86400).toFixed(1)+' d';}\n"
"function get(u){return fetch(u,{cache:'no-store'}).then(function(r){if(!r.ok)throw new Error(u+': '+r.status);return r.json();});}\n"
"function renderStatus(s){document.getElementById('model').textContent=s.model||'';var d=document.getElementById('status');d.textContent='';\n"
" var items=[['documents',s.docs],['docs/s',s.docs_per_s.toFixed(1)],['updates',s.updates],['consumer lag',s.lag<0?'?':s.lag],\n"
"  ['newest event',iso(s.event_ms)],['event-time lag',dur(s.event_lag_s)],['perplexity',s.perplexity>0?s.perplexity.toFixed(1):'-'],['vocabulary',s.vocab],['warm-up',s.warmup?'yes':'no'],\n"
"  ['late documents',s.late+(s.docs?' ('+(100*s.late/s.docs).toFixed(1)+'%)':'')]];\n"
" items.forEach(function(it){var sp=el('span');sp.appendChild(el('b',null,it[0]+': '));sp.appendChild(document.createTextNode(String(it[1])));d.appendChild(sp);});}\n"
"function renderTopics(t){topicsData=t;var box=document.getElementById('topics');box.textContent='';var q=document.getElementById('search').value.trim();\n"
" var max=0;t.topics.forEach(function(x){if(x.weight>max)max=x.weight;});var shown=t.topics.filter(function(x){return matches(x,q);});\n"
/* heaviest first; past CARDS of them (K=1000) the rest is a click away, or found by the search:
 * a refresh then builds 100 cards, not K */
" shown.sort(function(a,b){return b.weight-a.weight||a.id-b.id;});var more=!q&&!showAll&&shown.length>CARDS?shown.length-CARDS:0;if(more)shown=shown.slice(0,CARDS);\n"
" document.getElementById('ntopics').textContent=q?'('+shown.length+' of '+t.K+' match \u201c'+q+'\u201d)':'('+t.K+(more?'; the '+CARDS+' heaviest shown':'')+')';\n"
" shown.forEach(function(x){var c=el('div',{'class':'topic','data-topic':x.id});var hd=el('div',{'class':'hd'});\n"
"  var nm=el('span');nm.appendChild(el('b',null,'#'+x.id+' '));nm.appendChild(el('span',{'class':x.label!==null?'lbl':'lbl auto'},labelOf(x)));hd.appendChild(nm);hd.appendChild(el('span',{'class':'drift'},'weight '+(100*x.weight).toFixed(1)+'%'+(x.drift!==null?' \\u00b7 drift '+x.drift.toFixed(2):'')));\n"
"  if(x.flag)hd.appendChild(el('span',{'class':'tag '+x.flag},x.flag));if(x.dead)hd.appendChild(el('span',{'class':'tag dead'},'dead'));c.appendChild(hd);\n"
"  var bar=el('div',{'class':'bar'});var fill=el('i');fill.style.width=(max>0?100*x.weight/max:0).toFixed(1)+'%';bar.appendChild(fill);c.appendChild(bar);\n"
"  c.appendChild(el('div',{'class':'words'},x.words.map(function(w){return w[0];}).join(' ')));\n"/* an author-topic model: the authors who drive the topic (/api/authors) */
"  var by=byTopic&&byTopic[x.id];if(by&&by.length)c.appendChild(el('div',{'class':'drift'},'by '+by.slice(0,5).map(function(a){return a[0];}).join(', ')));\n"
"  if(x.entered.length)c.appendChild(el('div',{'class':'drift'},'+ '+x.entered.join(' ')+(x.left.length?'  \\u2212 '+x.left.join(' '):'')));\n"
"  var act=el('div');var eb=el('button',{type:'button'},'label\\u2026');eb.onclick=function(){setLabel(x.id,x.label);};act.appendChild(eb);\n"
"  var cb=el('button',{type:'button','class':'pin'},pins.indexOf(x.id)>=0?'unpin from chart':'chart');cb.onclick=function(){pin(x.id);};act.appendChild(document.createTextNode(' '));act.appendChild(cb);\n"
"  if(x.examples){var db=el('button',{type:'button'},openDocs[x.id]?'hide documents':'documents ('+x.examples+')');db.onclick=function(){if(openDocs[x.id])delete openDocs[x.id];else openDocs[x.id]=1;renderTopics(topicsData);};act.appendChild(document.createTextNode(' '));act.appendChild(db);}\n"
"  c.appendChild(act);if(openDocs[x.id])showDocs(c,x.id);\n"
"  box.appendChild(c);});\n"
" if(more){var mb=el('button',{type:'button',id:'more'},'show the other '+more+' topics');mb.onclick=function(){showAll=true;renderTopics(topicsData);};box.appendChild(mb);}}\n"
"function renderChart(p){var box=document.getElementById('chart'),leg=document.getElementById('legend');var W=p.windows;if(!W.length)return;\n"
/* /api/chart: the 8 topics holding the most documents over the windows shown (chosen by the
 * service), their shares only, and each one's mean (index j of p.topics) */
" var ids=p.topics.map(function(k,j){return j;}),mean=p.mean;\n"
" var w=Math.max(320,Math.min(960,box.clientWidth||640)),h=w<500?220:260,l=40,r=10,tp=10,b=30,t0=W[0].start,t1=W[W.length-1].start;if(t1===t0)t1=t0+p.window_ms;var ymax=0;\n"
/* a window's share shrunk toward the topic's mean by 10 documents' weight (as the report's
 * charts: SHRINK_DOCS): a window of two documents cannot spike to 90% and set the scale */
" function sv(x,k){return (x.share[k]*x.docs+10*mean[k])/(x.docs+10);}\n"
" ids.forEach(function(k){W.forEach(function(x){if(sv(x,k)>ymax)ymax=sv(x,k);});});if(ymax<=0)ymax=1;ymax=Math.min(1,ymax*1.1);\n"
" function X(t){return l+(w-l-r)*(t-t0)/(t1-t0);}function Y(v){return tp+(h-tp-b)*(1-v/ymax);}\n"
" var s=svg('svg',{viewBox:'0 0 '+w+' '+h,role:'img','aria-label':'topic prevalence'});\n"
" for(var i=0;i<=4;i++){var v=ymax*i/4;s.appendChild(svg('line',{x1:l,x2:w-r,y1:Y(v),y2:Y(v),stroke:'#eee'}));var tx=svg('text',{x:l-4,y:Y(v)+4,'text-anchor':'end','font-size':10,fill:'#777'});tx.textContent=(100*v).toFixed(0)+'%';s.appendChild(tx);}\n"
" ticks(t0,t1,w-l-r,6.2).forEach(function(k){var x=l+k.x;s.appendChild(svg('line',{x1:x,x2:x,y1:tp,y2:h-b,stroke:'#eee'}));if(!k.labelled)return;\n"
"  var tx=svg('text',{x:x+2,y:h-10,'font-size':10,fill:'#777','class':'tick'});tx.textContent=k.label;s.appendChild(tx);});\n"
" leg.textContent='';ids.forEach(function(k,j){var col=COLORS[j%COLORS.length];var seg=[];\n"
"  function flush(){if(seg.length)s.appendChild(svg('polyline',{points:seg.join(' '),fill:'none',stroke:col,'stroke-width':2,'class':'series','data-topic':p.topics[k]}));seg=[];}\n"
"  W.forEach(function(x,i){if(i&&x.start-W[i-1].start>4*p.window_ms)flush();seg.push(X(x.start).toFixed(1)+','+Y(sv(x,k)).toFixed(1));});flush();\n"
"  W.forEach(function(x){s.appendChild(svg('circle',{cx:X(x.start).toFixed(1),cy:Y(sv(x,k)).toFixed(1),r:2.5,fill:col,'class':'point'}));});\n"
"  var t=topicsData&&topicsData.topics[p.topics[k]],words=t?labelOf(t):'';\n"
"  var sp=el('span');var sw=el('i');sw.style.background=col;sp.appendChild(sw);sp.appendChild(document.createTextNode('#'+p.topics[k]+' '+words));leg.appendChild(sp);});\n"
" document.getElementById('chartnote').textContent=p.pinned?'The topics pinned with their cards\\u2019 \\u201cchart\\u201d button (unpin them all to see the topics that moved most).':'The '+p.topics.length+' topics whose share moved most over these windows (standard deviation); a topic card\\u2019s \\u201cchart\\u201d button pins others here.';\n"
" box.textContent='';box.appendChild(s);}\n"
/* /api/groups: the largest groups (input.group.field; authors, languages), each with its share
 * of the stream, a sparkline of its share of each window (shrunk toward its mean by 10
 * documents' weight, as the prevalence chart: a window of two documents cannot spike) and its
 * three largest topics */
"function spark(g,total,all){var n=total.length,w=120,h=22,m=0,mean=all>0?g.docs/all:0,v=g.series.map(function(x,i){return total[i]>0?(x+10*mean)/(total[i]+10):null;});v.forEach(function(x){if(x>m)m=x;});if(m<=0)m=1;\n"
" var s=svg('svg',{width:w,height:h,viewBox:'0 0 '+w+' '+h,role:'img','aria-label':'share over time'}),pts=[];v.forEach(function(x,i){if(x!==null)pts.push((n>1?i*(w-2)/(n-1)+1:w/2).toFixed(1)+','+(h-2-(h-4)*x/m).toFixed(1));});\n"
" s.appendChild(svg('polyline',{points:pts.join(' '),fill:'none',stroke:'#3b7dd8','stroke-width':1.5}));return s;}\n"
"function renderGroups(d){var sec=document.getElementById('gsec');if(!d||!d.list){sec.style.display='none';return;}sec.style.display='';\n"
" var by={'@author':'Authors','@lang':'Languages','@key':'Keys'}[d.source];document.getElementById('gtitle').textContent=by||('Groups by '+d.source);\n"
" var span=d.total.length?iso(d.base_ms).slice(0,10)+' \u2013 '+iso(d.base_ms+d.width_ms*d.total.length).slice(0,10):'';\n"
" document.getElementById('gnote').textContent='('+d.groups+' kept of '+d.capacity+(d.evicted?', '+d.evicted+' evicted into (other)':'')+'; the '+d.list.length+' largest; share per window '+span+')';\n"
" var t=el('table'),hr=el('tr');['group','documents','share over time','largest topics'].forEach(function(x){hr.appendChild(el('th',null,x));});t.appendChild(hr);\n"
" var rows=d.list.slice();if(d.other&&d.other.docs>0)rows.push(d.other);rows.forEach(function(g){var tr=el('tr');tr.appendChild(el('td',{'class':'g'},g.name));\n"
"  tr.appendChild(el('td',{'class':'n'},(g.docs>=10?g.docs.toFixed(0):g.docs.toFixed(1))+' ('+(100*g.docs/Math.max(1,d.docs)).toFixed(1)+'%)'));var sc=el('td');sc.appendChild(spark(g,d.total,d.docs));tr.appendChild(sc);\n"
"  tr.appendChild(el('td',{'class':'t'},(g.topics||[]).slice(0,3).map(function(p){var x=topicsData&&topicsData.topics[p[0]];return '#'+p[0]+(x?' '+labelOf(x):'')+' '+(100*p[1]).toFixed(0)+'%';}).join(' \u00b7 ')));t.appendChild(tr);});\n"
" var box=document.getElementById('groups');box.textContent='';box.appendChild(t);}\n"
/* /api/supers (pachinko allocation): each super-topic with the topics of the largest shares of
 * its prior, by label */
"function renderSupers(d){var sec=document.getElementById('ssec');if(!d||!d.supers){sec.style.display='none';return;}sec.style.display='';\n"
" document.getElementById('snote').textContent='('+d.S+': the topics each draws together, by their share of its prior; uniform '+(100/d.K).toFixed(1)+'%)';\n"
" var ul=document.getElementById('supers');ul.textContent='';d.supers.forEach(function(x){var li=el('li');li.appendChild(el('b',null,'super '+x.super+': '));\n"
"  li.appendChild(document.createTextNode(x.topics.map(function(p){var t=topicsData&&topicsData.topics[p[0]];return '#'+p[0]+(t?' '+labelOf(t):'')+' '+(100*p[1]).toFixed(1)+'%';}).join(' \\u00b7 ')));ul.appendChild(li);});}\n"
"function renderEvents(e){var ul=document.getElementById('events');var ev=e.events.slice().reverse();if(!ev.length)return;ul.textContent='';\n"
" ev.slice(0,100).forEach(function(x){var li=el('li');li.appendChild(el('span',{'class':'k'},x.kind));\n"
"  li.appendChild(document.createTextNode('#'+x.topic+(x.other!==undefined?' & #'+x.other:'')+' at '+x.event_time+(x.js!==undefined?' (JS '+x.js.toFixed(2)+')':'')+': '+x.words.join(' ')));ul.appendChild(li);});}\n"
/* the status first: it lists the other documents' versions, and only those that changed are
 * fetched again (a service that trains nothing costs the page one small request a refresh) */
"var seen={},chartData=null,groupsData=null,supersData=null;\n"
"function fresh(name,v){if(seen[name]===v)return Promise.resolve(null);return get('api/'+name).then(function(d){seen[name]=v;return d;});}\n"
"function refresh(){get('api/status').then(function(s){renderStatus(s);var v=s.versions||{};if(seen.examples!==v.examples){examples=null;seen.examples=v.examples;}\n"
" return Promise.all([fresh('topics',v.topics),fresh('chart',v.chart),fresh('events',v.events),v.groups?fresh('groups',v.groups):null,v.authors?fresh('authors',v.authors):null,pins.length?fresh('prevalence',v.prevalence):null,v.supers?fresh('supers',v.supers):null]);}).then(function(a){\n"
" if(a[4]){byTopic={};a[4].topics.forEach(function(t){byTopic[t.topic]=t.authors;});if(!a[0]&&topicsData)renderTopics(topicsData);}\n"
" if(a[0])renderTopics(a[0]);if(a[1])chartData=a[1];if(a[5])prevData=a[5];var cd=pins.length&&prevData?pinnedChart(prevData):chartData;if(cd&&(a[1]||a[5]||a[0]||redraw)){redraw=false;renderChart(cd);}if(a[2])renderEvents(a[2]);if(a[3])groupsData=a[3];if(a[3]||(a[0]&&groupsData))renderGroups(groupsData);if(a[6])supersData=a[6];if(a[6]||(a[0]&&supersData))renderSupers(supersData);}).catch(function(err){document.getElementById('status').textContent='waiting for the service: '+err.message;});}\n"
"var sb=document.getElementById('search');var hq=/[#&]q=([^&]*)/.exec(location.hash);if(hq)sb.value=decodeURIComponent(hq[1]);\n"
"sb.addEventListener('input',function(){if(topicsData)renderTopics(topicsData);});\n"
"refresh();setInterval(refresh,3000);\n"
"</script></body></html>\n";

const char *slda_page_html(size_t *len)
{
    *len = sizeof page_html - 1;
    return page_html;
}
