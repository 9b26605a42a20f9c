/* ksched report renderer: one script for every kind of page. It reads the
 * JSON in #ksched-data (written by src/sim/report_html*.c; the format is in
 * docs/report.md) and builds the page with DOM calls only: every name,
 * label and message reaches the page through textContent or an attribute
 * value, never as markup, so nothing in the data can become HTML. */
(function () {
  'use strict';
  var D = JSON.parse(document.getElementById('ksched-data').textContent);
  var S = D.strings || [];
  var PAGE = 100; /* table rows drawn at once; the rest are paged */
  var nodes = D.nodes || [];
  var res = D.res || [];
  nodes.forEach(function (n, i) { n.i = i; });

  function str(i) { return (i === undefined || i === null || i < 0) ? '' : S[i]; }
  /* a node by position in D.nodes; pages without a cluster (replay) name it */
  function nodeName(i) {
    if (typeof i === 'string') return i;
    return (i === undefined || i === null || i < 0 || !nodes[i]) ? '' : nodes[i].n;
  }

  /* h('td', {class: 'num'}, [child or text, ...]) */
  function h(tag, attrs, kids) {
    var e = document.createElement(tag);
    if (attrs) {
      Object.keys(attrs).forEach(function (k) {
        var v = attrs[k];
        if (v === undefined || v === null || v === false) return;
        if (k === 'class') e.className = v;
        else if (k === 'text') e.textContent = v;
        else if (k.slice(0, 2) === 'on') e.addEventListener(k.slice(2), v);
        else e.setAttribute(k, v);
      });
    }
    add(e, kids);
    return e;
  }
  function add(e, kids) {
    if (kids === undefined || kids === null) return e;
    if (!Array.isArray(kids)) kids = [kids];
    kids.forEach(function (k) {
      if (k === undefined || k === null || k === false) return;
      if (Array.isArray(k)) { add(e, k); return; }
      e.appendChild(typeof k === 'object' ? k : document.createTextNode(String(k)));
    });
    return e;
  }

  /* Amounts as kubectl prints them. */
  function fmtBytes(v) {
    var u = ['', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi'], i = 0;
    while (Math.abs(v) >= 1024 && i < u.length - 1) { v /= 1024; i++; }
    return (i && v < 10 && Math.round(v) !== v ? v.toFixed(1) : String(Math.round(v))) + u[i];
  }
  function fmt(v, unit) {
    if (unit === 'cpu') return v % 1000 === 0 ? String(v / 1000) : (v >= 1000 ? (v / 1000).toFixed(2).replace(/0+$/, '') : v + 'm');
    if (unit === 'bytes') return fmtBytes(v);
    return String(v);
  }
  /* whole percent, rounded down as the text table prints it */
  function pct(used, total) { return total > 0 ? Math.floor(used * 100 / total) : (used > 0 ? 100 : 0); }

  function bar(used, total, unit) {
    var p = pct(used, total);
    var w = Math.min(100, total > 0 ? used * 100 / total : 0);
    return h('div', {class: 'bar', title: fmt(used, unit) + ' of ' + fmt(total, unit) + ' allocatable'}, [
      h('i', {class: p >= 100 ? 'full' : p >= 80 ? 'hi' : '', style: 'width:' + w.toFixed(1) + '%'}),
      h('span', {text: fmt(used, unit) + '/' + fmt(total, unit) + ' (' + p + '%)'})
    ]);
  }

  /* A sortable, filterable, paged table.
   * spec: {id, columns: [{label, key(row) -> sort value, cell(row) -> node|text, num}],
   *        rows, filter(row, text) -> bool, rowAttrs(row) -> attrs, group(row) -> heading,
   *        sort: column index, desc } */
  function Table(spec) {
    var self = this;
    this.spec = spec;
    this.sortCol = spec.sort === undefined ? -1 : spec.sort;
    this.desc = !!spec.desc;
    this.page = 0;
    this.text = '';
    this.extra = null; /* an extra predicate (state filters, heat-map picks) */
    this.el = h('div', {class: 'table-wrap'});
    this.table = h('table', {id: spec.id});
    this.status = h('div', {class: 'pager'});
    this.thead = h('thead');
    var tr = h('tr');
    spec.columns.forEach(function (c, i) {
      var th = h('th', {class: (c.num ? 'num ' : '') + (c.key ? 'sortable' : ''), text: c.label, 'data-col': i});
      if (c.key) th.addEventListener('click', function () {
        if (self.sortCol === i) self.desc = !self.desc; else { self.sortCol = i; self.desc = !!c.num; }
        self.page = 0;
        self.render();
      });
      tr.appendChild(th);
    });
    this.thead.appendChild(tr);
    this.tbody = h('tbody');
    this.table.appendChild(this.thead);
    this.table.appendChild(this.tbody);
    this.el.appendChild(this.table);
    this.el.appendChild(this.status);
  }
  Table.prototype.setFilter = function (text) { this.text = text.toLowerCase(); this.page = 0; this.render(); };
  Table.prototype.rowsShown = function () {
    var spec = this.spec, text = this.text, extra = this.extra;
    var rows = spec.rows.filter(function (r) {
      return (!text || spec.filter(r, text)) && (!extra || extra(r));
    });
    var col = this.sortCol >= 0 ? spec.columns[this.sortCol] : null, desc = this.desc;
    var group = spec.grouped && spec.grouped() ? spec.group : null;
    if (col || group) {
      var keyed = rows.map(function (r, i) { return {r: r, k: col ? col.key(r) : 0, g: group ? group(r) : '', i: i}; });
      keyed.sort(function (a, b) {
        if (a.g !== b.g) return a.g < b.g ? -1 : 1;
        var c = a.k < b.k ? -1 : a.k > b.k ? 1 : 0;
        if (desc) c = -c;
        return c || a.i - b.i;
      });
      rows = keyed.map(function (x) { return x.r; });
    }
    return rows;
  };
  Table.prototype.render = function () {
    var self = this, spec = this.spec;
    var rows = this.rowsShown();
    var pages = Math.max(1, Math.ceil(rows.length / PAGE));
    if (this.page >= pages) this.page = pages - 1;
    var from = this.page * PAGE, to = Math.min(rows.length, from + PAGE);
    Array.prototype.forEach.call(this.thead.querySelectorAll('th'), function (th, i) {
      th.classList.remove('asc', 'desc');
      if (i === self.sortCol) th.classList.add(self.desc ? 'desc' : 'asc');
    });
    var body = h('tbody');
    var group = spec.grouped && spec.grouped() ? spec.group : null, lastGroup = null;
    for (var i = from; i < to; i++) {
      var r = rows[i];
      if (group) {
        var g = group(r);
        if (g !== lastGroup) {
          body.appendChild(h('tr', {class: 'zone-head'}, h('td', {colspan: spec.columns.length, text: spec.groupLabel(g)})));
          lastGroup = g;
        }
      }
      var tr = h('tr', spec.rowAttrs ? spec.rowAttrs(r) : null);
      spec.columns.forEach(function (c) { tr.appendChild(h('td', {class: c.num ? 'num' : ''}, c.cell(r))); });
      body.appendChild(tr);
      if (spec.after) { var extra = spec.after(r); if (extra) body.appendChild(extra); }
    }
    this.table.replaceChild(body, this.tbody);
    this.tbody = body;
    this.status.textContent = '';
    add(this.status, [rows.length ? 'rows ' + (from + 1) + '\u2013' + to + ' of ' + rows.length : 'no rows',
      rows.length !== spec.rows.length ? ' (filtered from ' + spec.rows.length + ')' : '']);
    if (pages > 1) {
      add(this.status, [
        h('button', {text: '\u2039 prev', class: 'prev', disabled: this.page === 0 ? 'disabled' : null,
                     onclick: function () { self.page--; self.render(); }}),
        'page ' + (this.page + 1) + ' of ' + pages,
        h('button', {text: 'next \u203a', class: 'next', disabled: this.page >= pages - 1 ? 'disabled' : null,
                     onclick: function () { self.page++; self.render(); }})
      ]);
    }
  };

  /* ---- cluster ---- */

  function usage(n, k) { return {total: n.a[2 * k], used: n.a[2 * k + 1]}; }
  function zoneOf(n) { return str(n.z); }

  function heatColor(p) {
    /* light blue through amber to red, by allocation */
    if (p >= 100) return '#c0392b';
    var stops = [[0, [234, 242, 251]], [50, [106, 159, 216]], [80, [214, 137, 16]], [100, [192, 57, 43]]];
    for (var i = 1; i < stops.length; i++) {
      if (p <= stops[i][0]) {
        var a = stops[i - 1], b = stops[i], t = (p - a[0]) / (b[0] - a[0]);
        return 'rgb(' + a[1].map(function (x, j) { return Math.round(x + (b[1][j] - x) * t); }).join(',') + ')';
      }
    }
    return '#c0392b';
  }

  /* One square per node, grouped by zone, coloured by the chosen
   * resource's allocation; one SVG, so 5,000 nodes stay cheap. */
  function heatMap(onPick) {
    var wrap = h('div', {class: 'heat'});
    var sel = h('select', {id: 'heat-resource'});
    res.forEach(function (r, k) { sel.appendChild(h('option', {value: k, text: r.name})); });
    var legend = h('span', {class: 'legend'}, ['0%']);
    [0, 25, 50, 75, 90, 100].forEach(function (p) { legend.appendChild(h('i', {style: 'background:' + heatColor(p)})); });
    add(legend, '100%');
    var holder = h('div');
    add(wrap, [h('div', {class: 'controls'}, ['Allocation of ', sel, legend,
      h('span', {class: 'muted', text: 'click a square to show its node'})]), holder]);
    function draw() {
      var k = +sel.value, NS = 'http://www.w3.org/2000/svg';
      var zones = {}, order = [];
      nodes.forEach(function (n, i) {
        var z = zoneOf(n);
        if (!zones[z]) { zones[z] = []; order.push(z); }
        zones[z].push(i);
      });
      order.sort();
      var cell = nodes.length > 2000 ? 8 : 14, gap = 2, perRow = Math.max(10, Math.floor(1100 / (cell + gap)));
      var y = 0, parts = [];
      order.forEach(function (z) {
        parts.push({label: (z || '(no zone)') + ' \u2014 ' + zones[z].length + ' nodes', y: y + 12});
        y += 18;
        zones[z].forEach(function (ni, j) {
          parts.push({node: ni, x: (j % perRow) * (cell + gap), y: y + Math.floor(j / perRow) * (cell + gap)});
        });
        y += Math.ceil(zones[z].length / perRow) * (cell + gap) + 8;
      });
      var svg = document.createElementNS(NS, 'svg');
      svg.setAttribute('width', perRow * (cell + gap));
      svg.setAttribute('height', Math.max(y, 20));
      svg.setAttribute('id', 'heatmap');
      parts.forEach(function (p) {
        var e;
        if (p.label !== undefined) {
          e = document.createElementNS(NS, 'text');
          e.setAttribute('x', 0); e.setAttribute('y', p.y);
          e.setAttribute('font-size', '11'); e.setAttribute('fill', '#5f6b7a');
          e.textContent = p.label;
        } else {
          var n = nodes[p.node], u = usage(n, k), pc = pct(u.used, u.total);
          e = document.createElementNS(NS, 'rect');
          e.setAttribute('class', 'cell');
          e.setAttribute('x', p.x); e.setAttribute('y', p.y);
          e.setAttribute('width', cell); e.setAttribute('height', cell);
          e.setAttribute('fill', u.total > 0 || u.used > 0 ? heatColor(pc) : '#f4f4f4');
          e.setAttribute('data-node', n.n);
          var t = document.createElementNS(NS, 'title');
          t.textContent = n.n + ': ' + res[k].name + ' ' + fmt(u.used, res[k].unit) + '/' + fmt(u.total, res[k].unit) + ' (' + pc + '%)';
          e.appendChild(t);
          e.addEventListener('click', function () { onPick(n.n); });
        }
        svg.appendChild(e);
      });
      holder.textContent = '';
      holder.appendChild(svg);
    }
    sel.addEventListener('change', draw);
    draw();
    return wrap;
  }

  function nodeTable(extraCols) {
    var byZone = h('input', {type: 'checkbox', id: 'node-group', checked: 'checked'});
    var columns = [
      {label: 'Node', key: function (n) { return n.n; }, cell: function (n) { return [n.n, n.u ? h('span', {class: 'tag taint', text: 'unschedulable'}) : null]; }},
      {label: 'Zone', key: zoneOf, cell: zoneOf}
    ];
    (extraCols || []).forEach(function (c) { columns.push(c); });
    res.forEach(function (r, k) {
      columns.push({label: r.name, num: true,
        key: function (n) { var u = usage(n, k); return u.total > 0 ? u.used / u.total : (u.used > 0 ? 2 : -1); },
        cell: function (n) { var u = usage(n, k); return u.total > 0 || u.used > 0 ? bar(u.used, u.total, r.unit) : h('span', {class: 'muted', text: '\u2013'}); }});
    });
    columns.push({label: 'Taints', key: function (n) { return n.t.length; },
      cell: function (n) { return n.t.map(function (t) { return h('span', {class: 'tag taint', text: str(t)}); }); }});
    columns.push({label: 'Labels', cell: function (n) { return n.l.map(function (l) { return h('span', {class: 'tag', text: str(l)}); }); }});
    var open = {};
    var t = new Table({
      id: 'nodes', columns: columns, rows: nodes, sort: 0,
      filter: function (n, text) {
        if (n.n.toLowerCase().indexOf(text) >= 0 || zoneOf(n).toLowerCase().indexOf(text) >= 0) return true;
        return n.l.concat(n.t).some(function (i) { return str(i).toLowerCase().indexOf(text) >= 0; });
      },
      grouped: function () { return byZone.checked; },
      group: zoneOf,
      groupLabel: function (z) { return 'zone ' + (z || '(none)'); },
      rowAttrs: function (n) {
        return {class: 'clickable' + (open[n.n] ? ' selected' : ''), 'data-node': n.n,
          onclick: function () { open[n.n] = !open[n.n]; t.render(); }};
      },
      after: function (n) {
        if (!open[n.n]) return null;
        return h('tr', {class: 'node-detail'}, h('td', {colspan: columns.length},
          [h('strong', {text: n.p.length + ' pods on ' + n.n + ': '}),
           n.p.length ? n.p.map(function (p) { return h('span', {class: 'tag', text: p}); }) : h('span', {class: 'muted', text: 'none'})]));
      }
    });
    var filter = h('input', {type: 'search', id: 'node-filter', placeholder: 'filter: name, zone, label, taint'});
    filter.addEventListener('input', function () { t.setFilter(filter.value); });
    byZone.addEventListener('change', function () { t.render(); });
    t.render();
    var box = h('div', null, [h('div', {class: 'controls'}, [filter, h('label', null, [byZone, ' group by zone'])]), t.el]);
    box.pick = function (name) { filter.value = name; t.setFilter(name); };
    return box;
  }

  function clusterSection(extraCols) {
    var table = nodeTable(extraCols);
    var zones = {};
    nodes.forEach(function (n) { zones[zoneOf(n)] = 1; });
    var totals = res.map(function (r, k) {
      var a = 0, u = 0;
      nodes.forEach(function (n) { a += n.a[2 * k]; u += n.a[2 * k + 1]; });
      return h('div', null, [h('div', {class: 'muted', text: r.name}), bar(u, a, r.unit)]);
    });
    return h('section', {id: 'cluster'}, [
      h('h2', {text: nodes.length + ' nodes in ' + Object.keys(zones).length + ' zone(s)'}),
      h('div', {class: 'controls', style: 'gap:16px'}, totals),
      h('h3', {text: 'Allocation map'}),
      heatMap(function (name) { table.pick(name); table.scrollIntoView(); }),
      h('h3', {text: 'Nodes'}),
      table
    ]);
  }

  /* ---- pods ---- */

  var pods = D.pods || [], victims = D.victims || [];
  function podName(p) { return str(p.ns) + '/' + p.n; }
  function podLink(kind, i) {
    var p = kind === 'victim' ? victims[i] : pods[i];
    if (!p) return h('span', {class: 'muted', text: 'unknown'});
    return h('a', {href: '#' + kind + '-' + i, class: 'podlink', text: podName(p)});
  }

  /* kube-scheduler's "0/N nodes are available: ..." histogram, as a table */
  function reasonsTable(hist) {
    if (!hist || !hist.length) return null;
    return h('table', {class: 'reasons'}, [
      h('thead', null, h('tr', null, [h('th', {class: 'num', text: 'nodes'}), h('th', {text: 'reason'})])),
      h('tbody', null, hist.map(function (x) {
        return h('tr', null, [h('td', {class: 'num', text: x[0]}), h('td', {class: 'msg', text: str(x[1])})]);
      }))
    ]);
  }

  function expandRanges(r) {
    var out = [];
    for (var i = 0; i + 1 < r.length; i += 2) for (var j = r[i]; j <= r[i + 1]; j++) out.push(j);
    return out;
  }

  /* Filter verdicts: one row per node the attempt evaluated, one column per
   * Filter plugin: passed, the rejecting plugin's reasons, or not run (the
   * framework stops at the first rejection). */
  function filterTable(a, id) {
    var fp = a.fp.map(str), rows = [];
    a.vg.forEach(function (g) {
      expandRanges(g[3]).forEach(function (ni) { rows.push({node: ni, plugin: g[0] < 0 ? null : str(g[0]), reasons: g[1].map(str), code: g[2]}); });
    });
    var columns = [{label: 'Node', key: function (r) { return nodeName(r.node); }, cell: function (r) { return nodeName(r.node); }},
      {label: 'Result', key: function (r) { return r.plugin ? 1 : 0; },
        cell: function (r) { return r.plugin ? h('span', {class: 'fail', text: r.code}) : h('span', {class: 'pass', text: 'passed'}); }}];
    fp.forEach(function (name) {
      columns.push({label: name, cell: function (r) {
        if (!r.plugin) return h('span', {class: 'pass', text: '\u2713'});
        var at = fp.indexOf(r.plugin), me = fp.indexOf(name);
        if (me < at) return h('span', {class: 'pass', text: '\u2713'});
        if (me === at) return h('span', {class: 'fail msg', text: r.reasons.join(', ') || r.code});
        return h('span', {class: 'skip', text: 'not run'});
      }});
    });
    if (rows.some(function (r) { return r.plugin && fp.indexOf(r.plugin) < 0; })) {
      columns.push({label: 'Other', cell: function (r) {
        return r.plugin && fp.indexOf(r.plugin) < 0 ? h('span', {class: 'fail msg', text: r.plugin + ': ' + r.reasons.join(', ')}) : '';
      }});
    }
    var t = new Table({id: id, columns: columns, rows: rows, sort: 0,
      filter: function (r, text) { return nodeName(r.node).toLowerCase().indexOf(text) >= 0 || r.reasons.join(' ').toLowerCase().indexOf(text) >= 0; },
      rowAttrs: function (r) { return {class: r.node === a.sel ? 'chosen' : '', 'data-node': nodeName(r.node)}; }});
    t.render();
    var f = h('input', {type: 'search', placeholder: 'filter nodes or reasons', class: 'verdict-filter'});
    f.addEventListener('input', function () { t.setFilter(f.value); });
    return h('div', null, [h('div', {class: 'controls'}, [f, h('span', {class: 'muted', text: a.nv + ' nodes evaluated'})]), t.el]);
  }

  /* Score: weighted score per plugin (raw and normalized on hover), the
   * total, the chosen node highlighted. */
  function scoreTable(a, id) {
    var np = a.sp.length;
    var columns = [{label: 'Node', key: function (r) { return nodeName(r[0]); }, cell: function (r) { return [nodeName(r[0]), r[0] === a.sel ? h('span', {class: 'tag', text: 'chosen'}) : null]; }}];
    a.sp.forEach(function (p, j) {
      columns.push({label: str(p) + ' \u00d7' + a.w[j], num: true, key: function (r) { return r[2 + np + j] * a.w[j]; },
        cell: function (r) { return h('span', {title: 'raw ' + r[2 + j] + ', normalized ' + r[2 + np + j] + ', weight ' + a.w[j], text: r[2 + np + j] * a.w[j]}); }});
    });
    columns.push({label: 'Total', num: true, key: function (r) { return r[1]; }, cell: function (r) { return h('strong', {text: r[1]}); }});
    var t = new Table({id: id, columns: columns, rows: a.sc, sort: columns.length - 1, desc: true,
      filter: function (r, text) { return nodeName(r[0]).toLowerCase().indexOf(text) >= 0; },
      rowAttrs: function (r) { return {class: r[0] === a.sel ? 'chosen' : '', 'data-node': nodeName(r[0])}; }});
    t.render();
    var note = a.sc.length < a.nsc ? 'the ' + a.sc.length + ' best of ' + a.nsc + ' scored nodes' : a.nsc + ' scored nodes';
    return h('div', null, [h('div', {class: 'muted', text: note + '; a cell is normalized score \u00d7 weight (hover for the raw score)'}), t.el]);
  }

  function attemptView(p, a, pi) {
    var parts = [h('h3', {text: 'Attempt ' + a.no + ' at ' + a.t + ': ' + (a.sel >= 0 ? 'scheduled to ' + nodeName(a.sel) : 'not scheduled')})];
    if (a.rq) parts.push(h('div', {class: 'muted', text: 'requeued by ' + a.rq + (a.rqp ? ' (' + a.rqp + '\u2019s QueueingHint)' : '')}));
    if (a.msg) parts.push(h('div', {class: 'msg fail', text: a.msg}));
    if (a.pre) parts.push(h('div', {class: 'msg', text: 'PreFilter: ' + str(a.pre[0]) + ' ' + a.pre[1] + ': ' + a.pre[2]}));
    if (a.vg.length) { parts.push(h('h3', {text: 'Filter'})); parts.push(filterTable(a, 'filter-' + pi + '-' + a.no)); }
    if (a.sc.length) { parts.push(h('h3', {text: 'Score'})); parts.push(scoreTable(a, 'score-' + pi + '-' + a.no)); }
    if (a.pf) {
      parts.push(h('div', {class: 'msg'}, ['PostFilter ' + str(a.pf[0]) + ': ',
        a.pf[3] >= 0 ? 'nominated ' + nodeName(a.pf[3]) : a.pf[1] + (a.pf[2] ? ' \u2014 ' + a.pf[2] : '')]));
    }
    return h('div', {class: 'attempt'}, parts);
  }

  function podDetail(kind, i) {
    var p = kind === 'victim' ? victims[i] : pods[i];
    var box = h('div', {class: 'detail', id: 'pod-detail', 'data-pod': podName(p)});
    add(box, [h('h2', null, [podName(p), ' ', h('span', {class: 'state ' + p.s, text: p.s})])]);
    var facts = [['priority', p.prio], ['attempts', p.att]];
    if (p.node >= 0) facts.push([kind === 'victim' ? 'was on' : 'node', nodeName(p.node)]);
    if (p.nom >= 0 && p.nom !== undefined) facts.push(['nominated node', nodeName(p.nom)]);
    if (p.uid) facts.push(['uid', p.uid]);
    facts.push(['requests', res.map(function (r, k) { return p.req[k] ? r.name + ' ' + fmt(p.req[k], r.unit) : null; }).filter(Boolean).join(', ')]);
    add(box, h('dl', {class: 'inputs'}, facts.reduce(function (acc, f) { return acc.concat([h('dt', {text: f[0]}), h('dd', {text: String(f[1])})]); }, [])));
    if (p.msg) add(box, h('p', {class: 'msg', text: p.msg}));
    if (kind === 'victim') {
      add(box, h('p', null, ['Preempted by ', p.by >= 0 ? podLink('pod', p.by) : 'a pod not in this report', p.deleted ? ' at ' + p.deleted : '']));
    } else if (p.vic && p.vic.length) {
      add(box, h('p', null, ['Preempted to make room: '].concat(p.vic.map(function (v) { return [podLink('victim', v), ' ']; }).reduce(function (a, b) { return a.concat(b); }, []))));
    }
    if (p.h && p.h.length) add(box, [h('h3', {text: 'Reasons, as kube-scheduler counts them (last attempt)'}), reasonsTable(p.h)]);
    if (kind === 'pod' && p.s !== 'Scheduled') add(box, whyView(podName(p)));
    if (p.ex && p.ex.length) p.ex.forEach(function (a) { add(box, attemptView(p, a, i)); });
    else if (p.att) add(box, h('p', {class: 'muted', text: 'Filter and Score detail left out: the page\u2019s size budget was spent on earlier pods (docs/report.md); ksched simulate --explain prints it.'}));
    return box;
  }

  /* ---- why: fixes ---- */

  function fixView(f) {
    var li = h('li', {class: 'fix'});
    add(li, [h('strong', {text: f.changes.map(function (c) { return c.summary; }).join('; ')}),
      f.node ? h('div', {text: '\u2192 the pod lands on ' + f.node}) : null,
      f.unblocks > 1 ? h('div', {text: 'schedules ' + f.unblocks + ' pending pods'}) : null,
      h('div', {class: 'muted'}, f.effects.length ? 'side effects: ' + f.effects.map(function (e) {
        return e.pod + ' ' + e.kind + (e.before || e.after ? ' (' + (e.before || 'pending') + ' \u2192 ' + (e.after || 'pending') + ')' : '');
      }).join('; ') : 'side effect: no other pod affected')]);
    f.changes.forEach(function (c) {
      if (c.command) add(li, h('pre', {class: 'command', text: '$ ' + c.command}));
    });
    return li;
  }

  function fixesList(fixes) { return h('ol', {class: 'fixes'}, fixes.map(fixView)); }

  function classesTable(classes) {
    if (!classes || !classes.length) return null;
    return h('table', {class: 'classes'}, [
      h('thead', null, h('tr', null, [h('th', {text: 'nodes'}), h('th', {text: 'plugin'}), h('th', {text: 'verdict'}), h('th', {text: 'the numbers'})])),
      h('tbody', null, classes.map(function (c) {
        return h('tr', null, [h('td', {class: 'msg', text: c.nodes.length > 3 ? c.nodes.length + ' nodes like ' + c.nodes[0] : c.nodes.join(', ')}),
          h('td', {text: c.plugin || 'PreFilter'}), h('td', {class: 'msg fail', text: c.reasons.join(', ')}),
          h('td', {class: 'msg', text: c.details.join('\n')})]);
      }))]);
  }

  /* What `why` found for one pod: node classes, preemption, fixes (its
   * own, or its root-cause group's representative's). */
  function whyView(name) {
    var W = D.why;
    if (!W) return D.whySkipped ? h('p', {class: 'muted', text: 'Fixes not computed: ' + D.whySkipped + '.'}) : null;
    var wp = W.pods.filter(function (x) { return x.pod === name; })[0];
    if (!wp) return null;
    var box = h('div', {class: 'why', 'data-pod': name}, [h('h3', {text: 'Why, and what would fix it (ksched why)'})]);
    add(box, classesTable(wp.classes));
    if (wp.preemption) add(box, h('p', {class: 'msg', text: 'Preemption: ' + wp.preemption}));
    var fixes = wp.fixes, from = null;
    if (!fixes.length && wp.group >= 0 && W.groups[wp.group]) {
      var rep = W.pods[W.groups[wp.group].rep];
      if (rep && rep.pod !== name) { fixes = rep.fixes; from = rep.pod; }
    }
    if (fixes.length) {
      add(box, h('p', {text: (wp.pairs ? 'No single change schedules it; pairs that do' : 'Changes that schedule it') +
        ' (verified by simulation, smallest first' + (from ? '; found for ' + from + ', which has the same cause' : '') + '):'}));
      add(box, fixesList(fixes));
    } else {
      add(box, h('p', {class: 'muted', text: 'No change found that schedules it (' + wp.tried + ' tried).'}));
    }
    return box;
  }

  function podsSection() {
    var all = pods.map(function (p, i) { return {kind: 'pod', i: i, p: p}; })
      .concat(victims.map(function (p, i) { return {kind: 'victim', i: i, p: p}; }));
    var detail = h('div', {id: 'pod-detail-holder'});
    var selected = null;
    var state = h('select', {id: 'pod-state'}, [h('option', {value: '', text: 'all states'})]);
    var states = {};
    all.forEach(function (r) { states[r.p.s] = (states[r.p.s] || 0) + 1; });
    Object.keys(states).sort().forEach(function (s) { state.appendChild(h('option', {value: s, text: s + ' (' + states[s] + ')'})); });
    var t = new Table({
      id: 'pods', rows: all,
      columns: [
        {label: '#', num: true, key: function (r) { return r.kind === 'pod' ? r.i : pods.length + r.i; }, cell: function (r) { return r.kind === 'pod' ? r.i + 1 : ''; }},
        {label: 'Namespace', key: function (r) { return str(r.p.ns); }, cell: function (r) { return str(r.p.ns); }},
        {label: 'Name', key: function (r) { return r.p.n; }, cell: function (r) { return r.p.n; }},
        {label: 'Status', key: function (r) { return r.p.s; }, cell: function (r) { return h('span', {class: 'state ' + r.p.s, text: r.p.s}); }},
        {label: 'Node', key: function (r) { return nodeName(r.p.node); }, cell: function (r) { return nodeName(r.p.node) || h('span', {class: 'muted', text: '<none>'}); }},
        {label: 'Priority', num: true, key: function (r) { return r.p.prio; }, cell: function (r) { return r.p.prio; }},
        {label: 'Message', cell: function (r) {
          if (r.kind === 'victim') return [r.p.by >= 0 ? ['preempted by ', podLink('pod', r.p.by), ' \u2014 '] : null, r.p.msg || ''];
          return h('span', {class: 'msg', text: r.p.s === 'Scheduled' ? '' : (r.p.nom >= 0 && r.p.nom !== undefined ? '(nominated to ' + nodeName(r.p.nom) + ') ' : '') + (r.p.msg || '')});
        }}
      ],
      sort: 0,
      filter: function (r, text) {
        return podName(r.p).toLowerCase().indexOf(text) >= 0 || nodeName(r.p.node).toLowerCase().indexOf(text) >= 0 ||
          (r.p.msg || '').toLowerCase().indexOf(text) >= 0;
      },
      rowAttrs: function (r) {
        return {class: 'clickable' + (selected === r ? ' selected' : ''), 'data-pod': podName(r.p), 'data-state': r.p.s,
          onclick: function (ev) { if (ev.target.tagName !== 'A') location.hash = '#' + r.kind + '-' + r.i; }};
      }
    });
    var filter = h('input', {type: 'search', id: 'pod-filter', placeholder: 'filter: namespace/name, node, message'});
    filter.addEventListener('input', function () { t.setFilter(filter.value); });
    state.addEventListener('change', function () {
      var s = state.value;
      t.extra = s ? function (r) { return r.p.s === s; } : null;
      t.page = 0;
      t.render();
    });
    function show() {
      var m = /^#(pod|victim)-(\d+)$/.exec(location.hash);
      if (!m) return;
      var kind = m[1], i = +m[2];
      if (!(kind === 'pod' ? pods[i] : victims[i])) return;
      selected = all.filter(function (r) { return r.kind === kind && r.i === i; })[0];
      detail.textContent = '';
      detail.appendChild(podDetail(kind, i));
      t.render();
      tabs.show('pods');
      detail.scrollIntoView();
    }
    window.addEventListener('hashchange', show);
    t.render();
    var wls = D.workloads || [];
    var wlBox = null;
    if (wls.length) {
      var wt = new Table({id: 'workloads', rows: wls, sort: 0,
        columns: [
          {label: 'Workload', key: function (w) { return w.kind + ' ' + str(w.ns) + '/' + w.name; }, cell: function (w) { return w.kind + ' ' + str(w.ns) + '/' + w.name; }},
          {label: 'Desired', num: true, key: function (w) { return w.desired; }, cell: function (w) { return w.desired < 0 ? '?' : w.desired; }},
          {label: 'Running before', num: true, key: function (w) { return w.running; }, cell: function (w) { return w.running; }},
          {label: 'Scheduled', num: true, key: function (w) { return w.scheduled; }, cell: function (w) { return w.scheduled; }},
          {label: 'Pending', num: true, key: function (w) { return w.pending; }, cell: function (w) { return w.pending ? h('span', {class: 'fail', text: w.pending}) : 0; }},
          {label: 'Not created', num: true, key: function (w) { return w.notCreated; }, cell: function (w) { return w.notCreated || ''; }},
          {label: 'Why pending', cell: function (w) {
            var extra = w.rollout ? 'rollout ' + w.rollout.new + '/' + w.rollout.total + ' new' + (w.rollout.oldLeft ? ', ' + w.rollout.oldLeft + ' old left' : '') + '. ' : '';
            var p = w.firstPending >= 0 ? pods[w.firstPending] : null;
            return [extra, p ? [podLink('pod', w.firstPending), ': ', h('span', {class: 'msg', text: p.msg || ''})] : ''];
          }}],
        filter: function (w, text) { return (w.kind + ' ' + str(w.ns) + '/' + w.name).toLowerCase().indexOf(text) >= 0; },
        rowAttrs: function (w) {
          var i = wls.indexOf(w);
          return {class: 'clickable', 'data-workload': str(w.ns) + '/' + w.name, onclick: function (ev) {
            if (ev.target.tagName === 'A') return;
            t.extra = function (r) { return r.kind === 'pod' && r.p.wl === i; };
            t.page = 0;
            t.render();
          }};
        }});
      wt.render();
      wlBox = h('div', {id: 'workloads-box'}, [h('h3', {text: wls.length + ' workloads (click one to list its pods)'}), wt.el]);
    }
    var sec = h('section', {id: 'pods-section'}, [
      h('h2', {text: pods.length + ' pending pods' + (victims.length ? ', ' + victims.length + ' preempted' : '')}),
      h('div', {class: 'controls'}, [filter, state, h('span', {class: 'muted', text: 'click a pod for its Filter and Score tables'})]),
      t.el, detail]);
    if (wlBox) sec.insertBefore(wlBox, sec.children[1]);
    sec.show = show;
    if (D.explainOmitted) sec.insertBefore(h('p', {class: 'muted', text: D.explainOmitted + ' pods have no Filter/Score detail: the page keeps it within its size budget (docs/report.md).'}), t.el);
    return sec;
  }

  /* ---- replay: time series ---- */

  var COLORS = ['#2463b3', '#d35400', '#27ae60', '#8e44ad', '#c0392b', '#16a085', '#7f8c8d', '#f1c40f'];

  function fmtDuration(sec) {
    if (sec < 120) return sec.toFixed(sec < 10 ? 1 : 0) + 's';
    if (sec < 7200) return (sec / 60).toFixed(0) + 'm';
    if (sec < 172800) return (sec / 3600).toFixed(1) + 'h';
    return (sec / 86400).toFixed(1) + 'd';
  }

  /* One SVG line chart: x in seconds from the start, one line per series
   * (the configurations overlaid on the same axes). */
  function lineChart(id, title, xs, series, yfmt, integer) {
    var NS = 'http://www.w3.org/2000/svg', W = 1000, H = 200, L = 60, R = 10, T = 10, B = 24;
    function el(tag, attrs, text) {
      var e = document.createElementNS(NS, tag);
      Object.keys(attrs).forEach(function (k) { e.setAttribute(k, attrs[k]); });
      if (text !== undefined) e.textContent = text;
      return e;
    }
    var ymax = 0;
    series.forEach(function (s) { s.ys.forEach(function (y) { if (y !== null && y > ymax) ymax = y; }); });
    /* a round top: 1, 2, 2.5 or 5 x 10^k; for counts a multiple of 4, so
     * each of the 4 ticks is a whole number */
    if (integer) {
      ymax = 4 * Math.max(1, Math.ceil(ymax / 4));
    } else {
      if (ymax <= 0) ymax = 1;
      var mag = Math.pow(10, Math.floor(Math.log(ymax) / Math.LN10));
      ymax = [1, 2, 2.5, 5, 10].map(function (f) { return f * mag; }).filter(function (v) { return v >= ymax - 1e-9; })[0];
    }
    var xmax = xs.length ? xs[xs.length - 1] : 1;
    if (xmax <= 0) xmax = 1;
    function X(x) { return L + (W - L - R) * x / xmax; }
    function Y(y) { return T + (H - T - B) * (1 - y / ymax); }
    var svg = el('svg', {width: W, height: H, id: id, class: 'chart', viewBox: '0 0 ' + W + ' ' + H});
    for (var i = 0; i <= 4; i++) {
      var yv = ymax * i / 4, yy = Y(yv);
      svg.appendChild(el('line', {x1: L, x2: W - R, y1: yy, y2: yy, stroke: '#e3e7ec'}));
      svg.appendChild(el('text', {x: L - 4, y: yy + 4, 'text-anchor': 'end', 'font-size': 10, fill: '#5f6b7a'}, yfmt(yv)));
      var xv = xmax * i / 4;
      svg.appendChild(el('text', {x: X(xv), y: H - 6, 'text-anchor': i === 0 ? 'start' : i === 4 ? 'end' : 'middle', 'font-size': 10, fill: '#5f6b7a'}, '+' + fmtDuration(xv)));
    }
    series.forEach(function (s, k) {
      /* null: no value at that sample (the line joins its neighbours) */
      var pts = s.ys.map(function (y, j) { return y === null ? null : X(xs[j]).toFixed(1) + ',' + Y(y).toFixed(1); })
        .filter(function (p) { return p !== null; }).join(' ');
      var line = el('polyline', {points: pts, fill: 'none', stroke: COLORS[k % COLORS.length], 'stroke-width': 1.5, 'data-series': s.name});
      line.appendChild(el('title', {}, s.name));
      svg.appendChild(line);
    });
    var cursor = el('line', {x1: 0, x2: 0, y1: T, y2: H - B, stroke: '#999', visibility: 'hidden'});
    svg.appendChild(cursor);
    var readout = h('div', {class: 'muted readout', text: '\u00a0'});
    svg.addEventListener('mousemove', function (ev) {
      var r = svg.getBoundingClientRect(), x = (ev.clientX - r.left) * W / r.width;
      var t = (x - L) / (W - L - R) * xmax, j = 0;
      while (j + 1 < xs.length && xs[j + 1] <= t) j++;
      cursor.setAttribute('x1', X(xs[j] || 0)); cursor.setAttribute('x2', X(xs[j] || 0));
      cursor.setAttribute('visibility', 'visible');
      readout.textContent = '+' + fmtDuration(xs[j] || 0) + ': ' + series.map(function (s) {
        return s.name + ' ' + (s.ys[j] === null || s.ys[j] === undefined ? '\u2013' : yfmt(s.ys[j])); }).join(', ');
    });
    var legend = h('div', {class: 'legend'}, series.map(function (s, k) {
      return [h('i', {style: 'background:' + COLORS[k % COLORS.length]}), ' ' + s.name + ' \u00a0'];
    }));
    return h('div', {class: 'chart-box'}, [h('h3', {text: title}), legend, svg, readout]);
  }

  function replaySection() {
    var R = D.replay, runs = R.runs, names = R.configs;
    var sec = h('section', {id: 'replay'});
    var rows = [
      ['pods arrived', function (s) { return s.arrived; }], ['scheduled', function (s) { return s.scheduled; }],
      ['never scheduled', function (s) { return s.neverScheduled; }], ['preempted', function (s) { return s.preempted; }],
      ['evicted', function (s) { return s.evicted; }], ['finished', function (s) { return s.finished; }],
      ['deleted', function (s) { return s.deleted; }], ['scheduling attempts', function (s) { return s.attempts; }],
      ['pending time p50', function (s) { return fmtDuration(s.p50); }], ['pending time p90', function (s) { return fmtDuration(s.p90); }],
      ['pending time p99', function (s) { return fmtDuration(s.p99); }], ['pending time max', function (s) { return fmtDuration(s.max); }]
    ];
    (runs[0] ? runs[0].summary.res : []).forEach(function (r, k) {
      rows.push([r.name + ' allocation, peak', function (s) { return s.res[k] ? (s.res[k].peak * 100).toFixed(1) + '%' : ''; }]);
      rows.push([r.name + ' allocation, time-weighted mean', function (s) { return s.res[k] ? (s.res[k].mean * 100).toFixed(1) + '%' : ''; }]);
    });
    if (runs.some(function (r) { return r.summary.recorded; })) {
      rows.push(['recorded bindings (audit log)', function (s) { return s.recorded; }]);
      rows.push(['same node as recorded', function (s) { return s.sameNode; }]);
      rows.push(['recorded node infeasible for ksched', function (s) { return s.recordedInfeasible; }]);
    }
    add(sec, [h('h2', {text: 'Summary'}), h('table', {id: 'replay-summary'}, [
      h('thead', null, h('tr', null, [h('th')].concat(names.map(function (n) { return h('th', {class: 'num', text: n}); })))),
      h('tbody', null, rows.map(function (row) {
        return h('tr', null, [h('td', {text: row[0]})].concat(runs.map(function (r) { return h('td', {class: 'num', text: String(row[1](r.summary))}); })));
      }))])]);
    /* key: a series name, a function of a run's series, or an array of
     * either (several lines per configuration, named by label: an array
     * parallel to key, or an object by name) */
    function over(key, title, fmtY, label) {
      var base = runs[0] ? runs[0].series : null;
      if (!base || !base.t.length) return null;
      var keys = Array.isArray(key) ? key : [key], ser = [];
      runs.forEach(function (r, i) {
        keys.forEach(function (k, j) {
          var ys = typeof k === 'function' ? k(r.series) : r.series[k];
          var part = !Array.isArray(key) ? '' : ' ' + (Array.isArray(label) ? label[j] : (label && label[k]) || k);
          if (ys) ser.push({name: names[i] + part, ys: ys});
        });
      });
      var computed = keys.some(function (k) { return typeof k === 'function'; });
      if (computed && !ser.some(function (x) { return x.ys.some(function (y) { return y > 0; }); })) return null;
      var id = 'chart-' + (computed ? title.replace(/\W+/g, '-') : keys.join('-'));
      return lineChart(id, title, base.t, ser, fmtY, fmtY === count);
    }
    var count = function (v) { return String(Math.round(v)); };
    var pctf = function (v) { return (v < 10 && v !== Math.round(v) ? v.toFixed(1) : v.toFixed(0)) + '%'; };
    add(sec, h('h2', {text: 'Over time' + (R.stride > 1 ? ' (every ' + R.stride + ' samples shown)' : '')}));
    (runs[0] ? runs[0].summary.res : []).forEach(function (r, k) {
      add(sec, over(function (s) { return s.alloc[k].map(function (v) { return v / 10; }); }, r.name + ' allocation (requested / allocatable)', pctf));
    });
    if (runs[0] && runs[0].series.wait) {
      add(sec, over([0, 1, 2].map(function (q) { return function (s) { return s.wait[q]; }; }),
        'pending time of the pods bound in each step (p50, p90, p99)', function (v) { return fmtDuration(v); }, ['p50', 'p90', 'p99']));
    }
    add(sec, [over('pending', 'pending pods', count), over('pendingLong', 'pods pending longer than ' + fmtDuration(R.pendingLong || 0), count),
      over('running', 'running pods', count), over(['evictions', 'preemptions'], 'evictions and preemptions per step', count, {evictions: 'evictions', preemptions: 'preemptions'}),
      over(['arrived', 'scheduled'], 'pods arrived and scheduled per step', count, {arrived: 'arrived', scheduled: 'scheduled'}),
      over('nodes', 'nodes', count)]);
    (R.extra || []).forEach(function (name, k) {
      add(sec, over(function (s) { return s.extra[k]; }, name, function (v) { return v.toFixed(2); }));
    });
    return sec;
  }

  /* ---- compare: two configurations, decision by decision ---- */

  function hasNode(x) { return typeof x === 'string' || x >= 0; }

  function compareSection() {
    var C = D.compare, A = C.sides[0], B = C.sides[1];
    var metric = function (label, key) { return h('tr', null, [h('td', {text: label}), h('td', {class: 'num', text: A[key]}), h('td', {class: 'num', text: B[key]})]); };
    var cs = h('section', {id: 'compare'}, [
      h('h2', {text: 'Side by side'}),
      h('table', {id: 'compare-sides'}, [h('thead', null, h('tr', null, [h('th'), h('th', {class: 'num', text: 'A: ' + A.label}), h('th', {class: 'num', text: 'B: ' + B.label})])),
        h('tbody', null, [metric('scheduled', 'scheduled'), metric('unschedulable', 'unschedulable'), metric('gated', 'gated'),
          metric('preempted', 'preempted'), metric('nodes used', 'nodesUsed'), metric('attempts', 'attempts')].concat(
          C.resources.map(function (r) {
            return h('tr', null, [h('td', {text: r.name + ' allocation, mean \u00b1 sd over nodes'}),
              h('td', {class: 'num', text: r.mean[0].toFixed(1) + '% \u00b1 ' + r.sd[0].toFixed(1)}),
              h('td', {class: 'num', text: r.mean[1].toFixed(1) + '% \u00b1 ' + r.sd[1].toFixed(1)})]);
          })))])]);
    var whyCell = function (w, own, other) {
      if (!w) return '';
      if (!w.otherScored) return h('span', {class: 'msg', text: other + ': ' + (w.otherVerdict || 'not evaluated')});
      return h('span', {class: 'msg', text: own + ' by ' + w.total + ': ' + w.deltas.map(function (d) {
        return str(d[0]) + ' ' + (d[1] > 0 ? '+' : '') + d[1]; }).join(', ')});
    };
    var mt = new Table({id: 'moved', rows: C.moved, sort: 0,
      columns: [{label: 'Pod', key: function (m) { return m.pod; }, cell: function (m) { return m.pod; }},
        {label: 'A node', key: function (m) { return nodeName(m.node[0]); }, cell: function (m) { return nodeName(m.node[0]); }},
        {label: 'B node', key: function (m) { return nodeName(m.node[1]); }, cell: function (m) { return nodeName(m.node[1]); }},
        {label: 'why A (weighted score deltas, A\u2019s node \u2212 B\u2019s)', cell: function (m) { return whyCell(m.why[0], nodeName(m.node[0]), nodeName(m.node[1])); }},
        {label: 'why B (B\u2019s node \u2212 A\u2019s)', cell: function (m) { return whyCell(m.why[1], nodeName(m.node[1]), nodeName(m.node[0])); }}],
      filter: function (m, text) { return (m.pod + ' ' + nodeName(m.node[0]) + ' ' + nodeName(m.node[1])).toLowerCase().indexOf(text) >= 0; },
      rowAttrs: function (m) { return {'data-pod': m.pod}; }});
    mt.render();
    var mf = h('input', {type: 'search', id: 'moved-filter', placeholder: 'filter pods or nodes'});
    mf.addEventListener('input', function () { mt.setFilter(mf.value); });
    add(cs, [h('h2', {text: C.moved.length + ' pods placed differently'}), h('div', {class: 'controls'}, mf), mt.el]);
    var ot = new Table({id: 'one-side', rows: C.oneSide, sort: 0,
      columns: [{label: 'Pod', key: function (m) { return m.pod; }, cell: function (m) { return m.pod; }},
        {label: 'A', key: function (m) { return m.s[0]; }, cell: function (m) { return [h('span', {class: 'state ' + m.s[0], text: m.s[0]}), hasNode(m.node[0]) ? ' on ' + nodeName(m.node[0]) : '']; }},
        {label: 'B', key: function (m) { return m.s[1]; }, cell: function (m) { return [h('span', {class: 'state ' + m.s[1], text: m.s[1]}), hasNode(m.node[1]) ? ' on ' + nodeName(m.node[1]) : '']; }},
        {label: 'Why not', cell: function (m) { return h('span', {class: 'msg', text: m.msg[0] || m.msg[1] || ''}); }}],
      filter: function (m, text) { return m.pod.toLowerCase().indexOf(text) >= 0; },
      rowAttrs: function (m) { return {'data-pod': m.pod}; }});
    ot.render();
    add(cs, [h('h2', {text: C.oneSide.length + ' pods scheduled under one configuration only'}), ot.el]);
    return cs;
  }

  /* ---- inputs ---- */

  function inputsSection(extra) {
    var inp = D.inputs || {};
    var rows = [
      ['ksched', inp.ksched], ['decided as', inp.decidedAs],
      ['command', (inp.command || []).map(function (a) { return /^[\w\/.=:,@+-]+$/.test(a) ? a : "'" + a.replace(/'/g, "'\\''") + "'"; }).join(' ')],
      ['input files', (inp.paths || []).join(', ') || '(none)'],
      ['configuration', inp.config || 'kube-scheduler v1.34 defaults'],
      ['seed', inp.seed], ['tie-break', inp.tieBreak]
    ].concat(extra || []);
    var dl = h('dl', {class: 'inputs', id: 'inputs'});
    rows.forEach(function (r) { if (r[1] !== undefined && r[1] !== null) add(dl, [h('dt', {text: r[0]}), h('dd', {text: String(r[1])})]); });
    var parts = [h('h2', {text: 'Inputs'}), dl];
    if (inp.configText) parts.push(h('h3', {text: inp.config}), h('pre', {text: inp.configText}));
    return h('section', {id: 'inputs-section'}, parts);
  }

  /* ---- page ---- */

  var tabs = {
    bar: h('nav', {class: 'tabs'}), panes: {}, buttons: {},
    addTab: function (id, label, el) {
      var self = this;
      this.panes[id] = el;
      this.buttons[id] = h('button', {text: label, 'data-tab': id, onclick: function () { self.show(id); }});
      this.bar.appendChild(this.buttons[id]);
    },
    show: function (id) {
      var self = this;
      Object.keys(this.panes).forEach(function (k) {
        self.panes[k].style.display = k === id ? '' : 'none';
        self.buttons[k].classList.toggle('active', k === id);
      });
    }
  };

  function counts() {
    var c = {};
    pods.forEach(function (p) { c[p.s] = (c[p.s] || 0) + 1; });
    return c;
  }

  function render() {
    var app = document.getElementById('app');
    var header = h('header'), main = h('main');
    var first;
    if (D.kind === 'simulate') {
      var c = counts();
      document.title = 'ksched simulate: ' + pods.length + ' pending pods on ' + nodes.length + ' nodes';
      add(header, [h('h1', {text: 'ksched simulate'}), h('div', {class: 'summary', id: 'summary', text:
        pods.length + ' pending pods: ' + (c.Scheduled || 0) + ' scheduled, ' + ((c.Unschedulable || 0) + (c.Pending || 0)) +
        ' unschedulable, ' + (c.SchedulingGated || 0) + ' gated; ' + victims.length + ' preempted. ' + nodes.length + ' nodes; ' +
        D.attempts + ' scheduling attempts, simulated ' + D.simStart + ' \u2192 ' + D.simEnd + '.'})]);
      var ps = podsSection();
      tabs.addTab('pods', 'Pods', ps);
      tabs.addTab('cluster', 'Cluster', clusterSection());
      tabs.addTab('inputs', 'Inputs', inputsSection());
      first = 'pods';
      window.setTimeout(ps.show, 0);
    } else if (D.kind === 'capacity') {
      var cap = D.capacity, per = {};
      cap.perNode.forEach(function (x) { per[x[0]] = x[1]; });
      document.title = 'ksched capacity: ' + cap.replicas + ' more replicas of ' + cap.pod;
      add(header, [h('h1', {text: 'ksched capacity'}), h('div', {class: 'summary', id: 'summary', text:
        cap.replicas + ' more replica' + (cap.replicas === 1 ? '' : 's') + ' of ' + cap.pod + ' fit' + (cap.stoppedAtMax ? ' (stopped at --max)' : '') + '.'})]);
      var answer = h('section', {id: 'capacity'}, [
        h('div', {class: 'big', id: 'replicas', text: String(cap.replicas)}),
        h('div', {class: 'muted', text: 'replicas of ' + cap.pod + ' requesting ' + res.map(function (r, k) {
          return cap.req[k] && r.name !== 'pods' ? r.name + ' ' + fmt(cap.req[k], r.unit) : null; }).filter(Boolean).join(', ')}),
        cap.msg ? [h('h3', {text: 'The next replica does not fit'}), h('p', {class: 'msg fail', text: cap.msg}), reasonsTable(cap.h)] : null,
        h('h3', {text: 'Where they go'})
      ]);
      var ct = new Table({id: 'replicas-per-node', rows: cap.perNode, sort: 1, desc: true,
        columns: [{label: 'Node', key: function (x) { return nodeName(x[0]); }, cell: function (x) { return nodeName(x[0]); }},
          {label: 'Replicas', num: true, key: function (x) { return x[1]; }, cell: function (x) { return x[1]; }}],
        filter: function (x, text) { return nodeName(x[0]).toLowerCase().indexOf(text) >= 0; }});
      ct.render();
      answer.appendChild(ct.el);
      tabs.addTab('capacity', 'Capacity', answer);
      tabs.addTab('cluster', 'Cluster', clusterSection([{label: 'Replicas', num: true,
        key: function (n) { return per[n.i] || 0; }, cell: function (n) { return per[n.i] || ''; }}]));
      tabs.addTab('inputs', 'Inputs', inputsSection());
      first = 'capacity';
    } else if (D.kind === 'why') {
      var W = D.why;
      document.title = 'ksched why: ' + W.pods.length + ' pod(s)';
      add(header, [h('h1', {text: 'ksched why'}), h('div', {class: 'summary', id: 'summary', text:
        W.pods.length + ' pod(s)' + (W.groups.length ? ', ' + W.groups.length + ' root cause(s)' : '') + '; ' + W.runs + ' simulations run.'})]);
      var ws = h('section', {id: 'why'});
      var shown = {};
      var order = W.groups.length ? W.groups.map(function (g) { return g; }) : [null];
      order.forEach(function (g) {
        if (g) add(ws, [h('h2', {class: 'cause', text: g.pods.length + ' pod(s): ' + g.cause}),
          h('p', {class: 'muted', text: 'pods: ' + g.pods.join(', ')})]);
        W.pods.forEach(function (wp, i) {
          if (shown[i] || (g && W.pods[g.rep] !== wp)) return;
          shown[i] = 1;
          var box = h('div', {class: 'detail why-pod', 'data-pod': wp.pod}, [
            h('h2', null, [wp.pod, ' ', h('span', {class: 'state ' + wp.s, text: wp.s}), wp.node ? ' on ' + wp.node : '']),
            wp.msg ? h('p', {class: 'msg', text: wp.msg}) : null]);
          if (wp.h.length) add(box, [h('h3', {text: 'Reasons, as kube-scheduler counts them'}), reasonsTable(wp.h)]);
          add(box, classesTable(wp.classes));
          if (wp.preemption) add(box, h('p', {class: 'msg', text: 'Preemption: ' + wp.preemption}));
          if (wp.fixes.length) add(box, [h('h3', {text: (wp.pairs ? 'Pairs of changes' : 'Changes') + ' that schedule the pod (verified, smallest first; ' + wp.tried + ' tried)'}), fixesList(wp.fixes)]);
          else if (wp.s !== 'Scheduled') add(box, h('p', {class: 'muted', text: 'No change found that schedules it (' + wp.tried + ' tried).'}));
          ws.appendChild(box);
        });
      });
      if (W.clusterFixes.length) add(ws, [h('h2', {text: 'Cluster-side changes, most pods unblocked first'}), fixesList(W.clusterFixes)]);
      tabs.addTab('why', 'Why', ws);
      tabs.addTab('cluster', 'Cluster', clusterSection());
      tabs.addTab('inputs', 'Inputs', inputsSection());
      first = 'why';
    } else if (D.kind === 'compare') {
      var C = D.compare, A = C.sides[0], B = C.sides[1];
      document.title = 'ksched compare: ' + A.label + ' vs ' + B.label;
      add(header, [h('h1', {text: 'ksched simulate --compare'}), h('div', {class: 'summary', id: 'summary', text:
        C.pending + ' pending pods under A = ' + A.label + ' and B = ' + B.label + ': ' + C.moved.length +
        ' placed on different nodes, ' + C.oneSide.length + ' scheduled under one only.'})]);
      var cs = compareSection();
      tabs.addTab('compare', 'Comparison', cs);
      tabs.addTab('cluster', 'Cluster', clusterSection());
      var extra = [['configuration B', D.inputs && D.compareConfig]];
      var inp = inputsSection(extra);
      if (D.compareConfigText) add(inp, [h('h3', {text: D.compareConfig + ' (B)'}), h('pre', {text: D.compareConfigText})]);
      tabs.addTab('inputs', 'Inputs', inp);
      first = 'compare';
    } else if (D.kind === 'replay') {
      document.title = 'ksched replay: ' + D.replay.configs.join(' vs ');
      var s0 = D.replay.runs[0] ? D.replay.runs[0].summary : {};
      add(header, [h('h1', {text: 'ksched replay'}), h('div', {class: 'summary', id: 'summary', text:
        D.replay.configs.length + ' configuration(s): ' + D.replay.configs.join(', ') + '; simulated ' + s0.start + ' \u2192 ' + s0.end + '.'})]);
      tabs.addTab('replay', 'Replay', replaySection());
      if (D.compare) tabs.addTab('compare', 'Decisions that differ', compareSection());
      tabs.addTab('inputs', 'Inputs', inputsSection());
      first = 'replay';
    } else {
      add(header, h('h1', {text: 'ksched: unknown report kind ' + D.kind}));
    }
    Object.keys(tabs.panes).forEach(function (k) { main.appendChild(tabs.panes[k]); });
    add(app, [header, tabs.bar, main]);
    if (first) tabs.show(first);
    document.body.setAttribute('data-ready', '1');
  }

  render();
})();
