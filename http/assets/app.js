// devgraph's web page: plain JavaScript, no build step. Every read and every write goes
// through POST /graphql on this server, so the same rules, limits, events and actor
// apply as for any other client. Text from the graph is put in the page as text
// (textContent), never as HTML.
(function () {
  'use strict';

  var PAGE = 100;        // the server's default page cap
  var MAX_DRAWN = 300;   // nodes drawn at most

  // ---- small helpers -------------------------------------------------------------

  function el(tag, attrs) {
    var e = document.createElement(tag);
    if (attrs) {
      Object.keys(attrs).forEach(function (k) {
        var v = attrs[k];
        if (v === undefined || v === null || v === false) return;
        if (k === 'text') e.textContent = v;
        else if (k === 'class') e.className = v;
        else if (k.slice(0, 2) === 'on') e.addEventListener(k.slice(2), v);
        else e.setAttribute(k, v === true ? '' : String(v));
      });
    }
    for (var i = 2; i < arguments.length; i++) add(e, arguments[i]);
    return e;
  }
  function add(parent, c) {
    if (c === undefined || c === null || c === false) return;
    if (Array.isArray(c)) { c.forEach(function (x) { add(parent, x); }); return; }
    parent.appendChild(typeof c === 'string' || typeof c === 'number' ? document.createTextNode(String(c)) : c);
  }
  function clear(e) { while (e.firstChild) e.removeChild(e.firstChild); return e; }
  function nodeLink(id, name) { return el('a', { href: '#node/' + encodeURIComponent(id), title: id }, name || id); }
  function fmtTime(t) { return t ? String(t).replace('T', ' ').replace(/\.\d+Z$/, 'Z') : ''; }
  function pct(x) { return Math.round(x * 100) + '%'; }

  function flash(msg, ok) {
    var box = document.getElementById('flash');
    var d = el('div', { class: ok ? 'ok' : 'err', 'data-flash': ok ? 'ok' : 'err' }, msg);
    box.appendChild(d);
    setTimeout(function () { if (d.parentNode) d.parentNode.removeChild(d); }, ok ? 4000 : 9000);
  }

  // gql sends one GraphQL request; GraphQL errors become a rejected promise with their
  // messages (the server's own words: they say what to fix).
  function gql(query, variables) {
    return fetch('/graphql', {
      method: 'POST',
      credentials: 'same-origin',
      headers: { 'Content-Type': 'application/json', 'Accept': 'application/json' },
      body: JSON.stringify({ query: query, variables: variables || {} })
    }).then(function (r) {
      if (r.status === 401) {
        location.assign('/login?next=' + encodeURIComponent('/' + location.hash));
        throw new Error('log in first');
      }
      return r.json().then(function (j) {
        if (j.errors && j.errors.length) throw new Error(j.errors.map(function (e) { return e.message; }).join('; '));
        return j.data;
      });
    });
  }

  // write runs a mutation, says what happened and re-renders the current view.
  function write(query, variables, done) {
    return gql(query, variables).then(function (d) {
      flash(typeof done === 'function' ? done(d) : done, true);
      route();
      return d;
    }).catch(function (e) { flash(e.message, false); }); // the server's words say what to fix
  }

  // form builds an inline form whose submit calls fn with the named fields' values.
  function form(fields, label, fn, cls) {
    var inputs = {};
    var f = el('form', { class: 'inline ' + (cls || '') });
    fields.forEach(function (fd) {
      var input;
      if (fd.options) {
        input = el('select', { name: fd.name, 'aria-label': fd.label || fd.name });
        fd.options.forEach(function (o) { input.appendChild(el('option', { value: o }, o)); });
      } else if (fd.area) {
        input = el('textarea', { name: fd.name, placeholder: fd.placeholder || '', 'aria-label': fd.label || fd.name });
      } else if (fd.checkbox) {
        input = el('input', { type: 'checkbox', name: fd.name });
        inputs[fd.name] = input;
        f.appendChild(el('label', null, input, ' ' + fd.label));
        return;
      } else {
        input = el('input', { name: fd.name, placeholder: fd.placeholder || '', size: fd.size || 18, 'aria-label': fd.label || fd.name, value: fd.value });
      }
      inputs[fd.name] = input;
      f.appendChild(input);
    });
    f.appendChild(el('button', { type: 'submit', class: 'primary' }, label));
    f.addEventListener('submit', function (ev) {
      ev.preventDefault();
      var v = {};
      Object.keys(inputs).forEach(function (k) { v[k] = inputs[k].type === 'checkbox' ? inputs[k].checked : inputs[k].value.trim(); });
      fn(v);
    });
    return f;
  }

  function tagChips(target, tags, removable) {
    return (tags || []).map(function (t) {
      return el('span', { class: 'tag', 'data-tag': t.name }, t.name, removable && el('button', {
        type: 'button', title: 'remove ' + t.name, 'aria-label': 'remove ' + t.name,
        onclick: function () {
          write('mutation($t: ID!, $r: [String!]) { tag(target: $t, remove: $r) { targetId } }', { t: target, r: [t.name] }, 'Removed ' + t.name + ' from ' + target);
        }
      }, '×'));
    });
  }

  function tagForm(target) {
    return form([{ name: 'tag', placeholder: 'namespace:value', label: 'tag to add' }], 'Add tag', function (v) {
      if (!v.tag) return;
      write('mutation($t: ID!, $a: [String!]) { tag(target: $t, add: $a) { targetId } }', { t: target, a: [v.tag] }, 'Tagged ' + target + ' ' + v.tag);
    }, 'tag-form');
  }

  // ---- devices -------------------------------------------------------------------

  var DEVICE = 'fragment D on Device { id ref name source present infra boundBy identity { id name } tags { name } ' +
    'match { score confidence summary ambiguous identityId name explanation { kind value note weight } } }';

  function matchCell(d) {
    var m = d.match;
    if (!m || !m.identityId) return el('span', { class: 'muted' }, 'no candidate');
    return el('div', null,
      nodeLink(m.identityId, m.name || m.identityId), ' ',
      el('span', { class: 'badge ' + m.confidence, title: 'score' }, pct(m.score) + ' ' + m.confidence),
      m.ambiguous ? el('span', { class: 'badge low' }, 'ambiguous') : null,
      el('div', { class: 'muted' }, m.summary),
      el('ul', { class: 'why' }, (m.explanation || []).map(function (r) {
        return el('li', null, el('code', null, r.kind + ' ' + r.value), ' — ' + r.note + ' (' + r.weight.toFixed(2) + ')');
      })));
  }

  function bindControls(d) {
    var box = el('div', { class: 'bind', 'data-ref': d.ref });
    var m = d.match;
    if (m && m.identityId) {
      box.appendChild(el('button', {
        type: 'button', class: 'primary', 'data-action': 'bind-candidate',
        onclick: function () { bind(d.ref, { identity: m.identityId }); }
      }, 'Bind to ' + (m.name || m.identityId)));
    }
    box.appendChild(form([{ name: 'identity', placeholder: 'identity (e.g. jdxi)', label: 'identity to bind to', size: 16 }], 'Bind', function (v) {
      if (v.identity) bind(d.ref, { identity: v.identity });
    }, 'bind-identity'));
    box.appendChild(form([{ name: 'newName', placeholder: 'new name', label: 'name of a new identity', size: 16 }], 'Bind as new', function (v) {
      if (v.newName) bind(d.ref, { newName: v.newName });
    }, 'bind-new'));
    return box;
  }

  function bind(ref, how) {
    var vars = { ref: ref, identity: how.identity || null, newName: how.newName || null };
    return write('mutation($ref: String!, $identity: ID, $newName: String) { bind(ref: $ref, identity: $identity, newName: $newName) { created identity { id name } } }', vars,
      function (d) { return 'Bound ' + ref + ' to ' + d.bind.identity.id + (d.bind.created ? ' (new)' : ''); });
  }

  function unbindButton(d) {
    return el('button', {
      type: 'button', class: 'danger', 'data-action': 'unbind',
      onclick: function () {
        write('mutation($ref: String!) { unbind(ref: $ref) { ref } }', { ref: d.ref }, 'Unbound ' + d.ref);
      }
    }, 'Unbind');
  }

  function deviceRow(d, unbound) {
    return el('tr', { 'data-ref': d.ref },
      el('td', null, nodeLink(d.id, d.ref), el('div', { class: 'muted' }, d.source)),
      el('td', null, d.name, d.infra ? el('span', { class: 'badge' }, 'infrastructure') : null, el('div', null, tagChips(d.id, d.tags, false))),
      unbound
        ? el('td', null, matchCell(d))
        : el('td', null, d.identity ? nodeLink(d.identity.id, d.identity.name) : el('span', { class: 'muted' }, '—'), d.boundBy ? el('span', { class: 'badge' }, d.boundBy) : null),
      el('td', null, unbound ? bindControls(d) : (d.boundBy === 'explicit' ? unbindButton(d) : (d.infra ? null : bindControls(d)))));
  }

  function viewDevices(main) {
    return gql('query($n: Int) { unbound(first: $n) { totalCount nodes { ...D } } devices(first: $n) { totalCount nodes { ...D } } } ' + DEVICE, { n: PAGE }).then(function (data) {
      var unbound = data.unbound.nodes;
      var ids = {};
      unbound.forEach(function (d) { ids[d.id] = true; });
      var rest = data.devices.nodes.filter(function (d) { return !ids[d.id]; });
      rest.sort(function (a, b) { return (a.infra - b.infra) || a.ref.localeCompare(b.ref); });
      clear(main);
      add(main, [
        el('h2', null, 'Unbound devices ', el('span', { class: 'muted' }, '(' + data.unbound.totalCount + ')')),
        el('p', { class: 'muted' }, 'Present devices without a binding or a high, unambiguous match, each with its best candidate and why.'),
        unbound.length ? el('table', { id: 'unbound' },
          el('thead', null, el('tr', null, el('th', null, 'Ref'), el('th', null, 'Name'), el('th', null, 'Best candidate'), el('th', null, 'Bind'))),
          el('tbody', null, unbound.map(function (d) { return deviceRow(d, true); })))
          : el('p', { class: 'card' }, 'Every present device is recognised.'),
        data.unbound.totalCount > unbound.length ? el('p', { class: 'muted' }, 'Showing the first ' + unbound.length + ' of ' + data.unbound.totalCount + '.') : null,
        el('h2', null, 'Recognised and other present devices ', el('span', { class: 'muted' }, '(' + rest.length + ')')),
        el('table', { id: 'bound' },
          el('thead', null, el('tr', null, el('th', null, 'Ref'), el('th', null, 'Name'), el('th', null, 'Identity'), el('th', null, ''))),
          el('tbody', null, rest.map(function (d) { return deviceRow(d, false); }))),
        data.devices.totalCount > data.devices.nodes.length ? el('p', { class: 'muted' }, 'Showing the first ' + data.devices.nodes.length + ' of ' + data.devices.totalCount + ' present devices.') : null
      ]);
    });
  }

  // ---- identities ----------------------------------------------------------------

  var idState = { name: '', cursors: [null] };

  function viewIdentities(main) {
    var after = idState.cursors[idState.cursors.length - 1];
    var filter = idState.name ? { name: idState.name } : null;
    return gql('query($n: Int, $after: String, $f: IdentityFilter) { identities(first: $n, after: $after, filter: $f) { totalCount pageInfo { endCursor hasNextPage } nodes { id slug name tags { name } devices { ref present } } } }',
      { n: 50, after: after, f: filter }).then(function (data) {
      var c = data.identities;
      clear(main);
      var search = form([{ name: 'name', placeholder: 'name starts with…', label: 'name filter', value: idState.name }], 'Filter', function (v) {
        idState = { name: v.name, cursors: [null] };
        route();
      });
      add(main, [
        el('h2', null, 'Identities ', el('span', { class: 'muted' }, '(' + c.totalCount + ')')),
        search,
        el('table', { id: 'identities' },
          el('thead', null, el('tr', null, el('th', null, 'Name'), el('th', null, 'Id'), el('th', null, 'Tags'), el('th', null, 'Devices'))),
          el('tbody', null, c.nodes.map(function (i) {
            return el('tr', { 'data-id': i.id },
              el('td', null, nodeLink(i.id, i.name)),
              el('td', null, el('code', null, i.id)),
              el('td', null, tagChips(i.id, i.tags, false)),
              el('td', null, i.devices.map(function (d) { return el('span', { class: 'badge' + (d.present ? ' high' : '') }, d.ref); })));
          }))),
        el('div', { class: 'pager' },
          el('button', { type: 'button', disabled: idState.cursors.length < 2, onclick: function () { idState.cursors.pop(); route(); } }, '← Previous'),
          el('span', { class: 'muted' }, 'page ' + idState.cursors.length),
          el('button', { type: 'button', disabled: !c.pageInfo.hasNextPage, onclick: function () { idState.cursors.push(c.pageInfo.endCursor); route(); } }, 'Next →'))
      ]);
    });
  }

  // ---- one node ------------------------------------------------------------------

  var NAMED = 'fragment N on Node { id ... on Identity { name } ... on Device { name } ... on Client { name } }';
  var REL = 'fragment R on Relation { id type observed obsSource: source fromId toId fromPort toPort attrs author from { ...N } to { ...N } }';
  var NODE = 'query($id: ID!) { relationTypes { type reserved } node(id: $id) { id __typename ' +
    '... on Identity { name slug tags { name } hints { kind value class } devices { id ref name present } notes(first: 100) { totalCount nodes { id kind body author time } } relations(first: 100) { totalCount nodes { ...R } } } ' +
    '... on Device { name ref present source boundBy infra identity { id name } tags { name } fingerprints { kind value } match { score confidence summary ambiguous identityId name explanation { kind value note weight } } notes(first: 100) { totalCount nodes { id kind body author time } } relations(first: 100) { totalCount nodes { ...R } } } ' +
    '... on Client { name source relations(first: 100) { totalCount nodes { ...R } } } ' +
    '... on Relation { ...R } } } ' + NAMED + ' ' + REL;

  function end(n, id, port) {
    return el('span', null, nodeLink(id, n && n.name ? n.name : id), port ? el('span', { class: 'badge' }, port) : null);
  }

  function relationRows(rels) {
    return rels.map(function (r) {
      var attrs = Object.keys(r.attrs || {}).map(function (k) { return k + '=' + r.attrs[k]; }).join(', ');
      return el('tr', { 'data-rel': r.id, 'data-type': r.type },
        el('td', null, el('b', null, r.type), ' ', r.observed ? el('span', { class: 'badge observed' }, 'observed · ' + r.obsSource) : el('span', { class: 'badge' }, 'declared')),
        el('td', null, end(r.from, r.fromId, r.fromPort), ' → ', end(r.to, r.toId, r.toPort)),
        el('td', { class: 'mono' }, attrs),
        el('td', null, r.observed ? null : el('button', {
          type: 'button', class: 'danger', 'data-action': 'unrelate',
          onclick: function () { write('mutation($id: ID!) { unrelate(id: $id) { action } }', { id: r.id }, 'Removed ' + r.type + ' ' + r.id); }
        }, 'Remove')));
    });
  }

  function relateForm(from, types) {
    var declarable = types.filter(function (t) { return !t.reserved; }).map(function (t) { return t.type; });
    var f = form([
      { name: 'fromPort', placeholder: 'from port (e.g. MIDI OUT)', size: 16 },
      { name: 'type', options: declarable, label: 'relation type' },
      { name: 'to', placeholder: 'to (e.g. jdxi)', size: 14, label: 'to node' },
      { name: 'toPort', placeholder: 'to port (e.g. MIDI IN)', size: 16 },
      { name: 'attrs', placeholder: 'kind=midi-din, length=1.5m', size: 24, label: 'attributes' }
    ], 'Relate', function (v) {
      var attrs = {};
      v.attrs.split(',').forEach(function (kv) {
        var i = kv.indexOf('=');
        if (i > 0) attrs[kv.slice(0, i).trim()] = kv.slice(i + 1).trim();
      });
      var input = { from: from, type: v.type, to: v.to, fromPort: v.fromPort || null, toPort: v.toPort || null, attrs: attrs };
      write('mutation($in: RelateInput!) { relate(input: $in) { action relation { id } } }', { in: input },
        function (d) { return d.relate.action === 'none' ? 'That relation exists already' : 'Added ' + v.type + ' ' + d.relate.relation.id; });
    }, 'relate-form');
    return f;
  }

  function notesBlock(target, notes) {
    return [
      el('h3', null, 'Notes ', el('span', { class: 'muted' }, '(' + notes.totalCount + ')')),
      el('div', { id: 'notes' }, notes.nodes.map(function (n) {
        return el('div', { class: 'note ' + n.kind, 'data-note': n.id },
          el('div', { class: 'meta' }, n.kind + ' · ' + n.author + ' · ' + fmtTime(n.time)),
          el('pre', { class: 'body' }, n.body)); // the markdown is shown as text, never as HTML
      })),
      form([{ name: 'kind', options: ['info', 'success', 'warning', 'danger'], label: 'note kind' }, { name: 'body', area: true, placeholder: 'Leave a note (markdown, shown as text)', label: 'note' }], 'Add note', function (v) {
        if (!v.body) return;
        write('mutation($t: ID!, $k: String, $b: String!) { addNote(target: $t, kind: $k, body: $b) { id } }', { t: target, k: v.kind, b: v.body }, 'Note added to ' + target);
      }, 'note-form')
    ];
  }

  function viewNode(main, id) {
    return gql(NODE, { id: id }).then(function (data) {
      var n = data.node;
      clear(main);
      if (!n) {
        add(main, el('p', { class: 'card' }, 'Nothing has the id ' + id + '.'));
        return;
      }
      var kind = n.__typename;
      add(main, [
        el('h2', null, n.name || n.type || n.id, ' ', el('span', { class: 'badge' }, kind.toLowerCase())),
        el('p', null, el('code', null, n.id), ' · ', el('a', { href: '#graph/' + encodeURIComponent(n.id) }, 'show in the graph'))
      ]);
      if (kind === 'Relation') {
        add(main, el('table', null, el('tbody', null, relationRows([n]))));
        return;
      }
      if (kind === 'Identity' || kind === 'Device') {
        add(main, [el('h3', null, 'Tags'), el('div', { id: 'tags' }, tagChips(n.id, n.tags, true)), tagForm(n.id)]);
      }
      if (kind === 'Identity') {
        add(main, [
          el('h3', null, 'Devices'),
          n.devices.length ? el('ul', null, n.devices.map(function (d) { return el('li', null, nodeLink(d.id, d.ref), ' ', d.name, ' ', el('span', { class: 'badge' + (d.present ? ' high' : '') }, d.present ? 'present' : 'offline')); })) : el('p', { class: 'muted' }, 'None bound.'),
          el('h3', null, 'Hints'),
          el('ul', null, n.hints.map(function (h) { return el('li', null, el('code', null, h.kind + ' ' + h.value), ' ', el('span', { class: 'muted' }, h.class)); }))
        ]);
      }
      if (kind === 'Device') {
        add(main, [
          el('p', null, n.present ? 'Present' : 'Offline', ' · ', n.source, ' · ',
            n.identity ? ['bound to ', nodeLink(n.identity.id, n.identity.name), ' (' + n.boundBy + ')'] : 'unbound'),
          el('h3', null, 'Best candidate'), matchCell(n),
          el('div', null, n.boundBy === 'explicit' ? unbindButton(n) : (n.infra ? null : bindControls(n))),
          el('h3', null, 'Fingerprints'),
          el('ul', null, n.fingerprints.map(function (f) { return el('li', null, el('code', null, f.kind + ' ' + f.value)); }))
        ]);
      }
      if (n.notes) add(main, notesBlock(n.id, n.notes));
      add(main, [
        el('h3', null, 'Relations ', el('span', { class: 'muted' }, '(' + n.relations.totalCount + ', declared and observed)')),
        el('table', { id: 'relations' },
          el('thead', null, el('tr', null, el('th', null, 'Type'), el('th', null, 'From → to'), el('th', null, 'Attributes'), el('th', null, ''))),
          el('tbody', null, relationRows(n.relations.nodes))),
        kind === 'Client' ? null : [el('h3', null, 'Relate'), relateForm(n.id, data.relationTypes)]
      ]);
    });
  }

  // ---- the graph -----------------------------------------------------------------

  var cy = null;
  var graphState = { around: '', depth: 2, types: '' };

  function viewGraph(main, around) {
    if (around !== undefined) graphState.around = around;
    var types = graphState.types.split(',').map(function (x) { return x.trim(); }).filter(Boolean);
    var vars = { around: graphState.around || null, depth: graphState.around ? graphState.depth : null, types: types.length ? types : null };
    return gql('query($around: ID, $depth: Int, $types: [String!]) { subgraph(around: $around, depth: $depth, types: $types) { around depth truncated truncatedBy visited nodes { id kind name depth devices } edges { id from to type observed source fromPort toPort } } }', vars).then(function (data) {
      var g = data.subgraph;
      // Past MAX_DRAWN, keep the nearest and, among those as near, the best connected,
      // so what is drawn hangs together.
      degree = {};
      g.edges.forEach(function (e) { degree[e.from] = (degree[e.from] || 0) + 1; degree[e.to] = (degree[e.to] || 0) + 1; });
      var order = g.nodes.map(function (v, i) { return { v: v, i: i }; });
      order.sort(function (a, b) { return (a.v.depth - b.v.depth) || ((degree[b.v.id] || 0) - (degree[a.v.id] || 0)) || (a.i - b.i); });
      var nodes = order.slice(0, MAX_DRAWN).map(function (x) { return x.v; });
      var keep = {};
      nodes.forEach(function (v) { keep[v.id] = true; });
      var edges = g.edges.filter(function (e) { return keep[e.from] && keep[e.to]; });
      var left = g.nodes.length - nodes.length;
      depthOf = {};
      nodes.forEach(function (v) { depthOf[v.id] = v.depth; });
      clear(main);
      var controls = form([
        { name: 'around', placeholder: 'around (e.g. jdxi; empty: everything)', size: 30, label: 'around node', value: graphState.around },
        { name: 'depth', options: ['1', '2', '3', '4'], label: 'depth' },
        { name: 'types', placeholder: 'types (e.g. cable, via; empty: all)', size: 26, label: 'relation types', value: graphState.types }
      ], 'Draw', function (v) {
        graphState.depth = parseInt(v.depth, 10) || 2;
        graphState.types = v.types;
        location.hash = v.around ? '#graph/' + encodeURIComponent(v.around) : '#graph';
        if (v.around === graphState.around) route();
      }, 'graph-form');
      controls.querySelector('select').value = String(graphState.depth);
      var summary = 'Drawing ' + nodes.length + ' nodes and ' + edges.length + ' relations' +
        (g.around ? ' within ' + g.depth + ' hops of ' + g.around : ' (the whole graph)') + '. ';
      if (left > 0) summary += left + ' more were left out (at most ' + MAX_DRAWN + ' are drawn); choose a node to draw around. ';
      if (g.truncated) summary += 'The traversal stopped at its ' + g.truncatedBy + ' bound, so more may exist. ';
      var side = el('div', { class: 'graphside card', id: 'graph-side' }, el('p', { class: 'muted' }, 'Click a node to see it.'));
      add(main, [
        el('h2', null, 'Graph'), controls,
        el('p', { id: 'graph-summary', class: 'muted', 'data-left-out': left }, summary),
        el('div', { class: 'row' }, el('div', { class: 'grow' }, el('div', { id: 'cy' })), side),
        el('p', { class: 'muted' }, 'Identities are blue, devices grey, applications purple; observed relations are dashed, cables orange. Scroll to zoom, drag to pan.')
      ]);
      if (typeof window.cytoscape !== 'function') {
        add(main, el('p', { class: 'error' }, 'cytoscape.js did not load.'));
        return;
      }
      if (cy) cy.destroy();
      cy = window.cytoscape({
        container: document.getElementById('cy'),
        elements: nodes.map(function (v) {
          return { data: { id: v.id, name: v.name, kind: v.kind, start: v.id === g.around ? 1 : 0 } };
        }).concat(edges.map(function (e) {
          return { data: { id: e.id, source: e.from, target: e.to, type: e.type, observed: e.observed ? 1 : 0 } };
        })),
        style: [
          { selector: 'node', style: { 'label': 'data(name)', 'font-size': 10, 'text-valign': 'bottom', 'text-margin-y': 3, 'background-color': '#98a2b3', 'width': 18, 'height': 18, 'color': '#1d2330', 'text-wrap': 'ellipsis', 'text-max-width': 120 } },
          { selector: 'node[kind = "identity"]', style: { 'background-color': '#2f6fdf', 'shape': 'round-rectangle', 'width': 24, 'height': 24 } },
          { selector: 'node[kind = "client"]', style: { 'background-color': '#7a5af8', 'shape': 'diamond' } },
          { selector: 'node[start = 1]', style: { 'border-width': 3, 'border-color': '#f79009' } },
          { selector: 'node:selected', style: { 'border-width': 3, 'border-color': '#1d2330' } },
          { selector: 'edge', style: { 'width': 1.5, 'line-color': '#98a2b3', 'target-arrow-color': '#98a2b3', 'target-arrow-shape': 'triangle', 'arrow-scale': 0.8, 'curve-style': 'bezier', 'label': 'data(type)', 'font-size': 8, 'color': '#667085', 'text-rotation': 'autorotate' } },
          { selector: 'edge[observed = 1]', style: { 'line-style': 'dashed', 'line-color': '#a4bcfd', 'target-arrow-color': '#a4bcfd' } },
          { selector: 'edge[type = "cable"]', style: { 'width': 3, 'line-color': '#f79009', 'target-arrow-color': '#f79009' } }
        ],
        layout: layoutFor(nodes),
        minZoom: 0.1, maxZoom: 4
      });
      cy.on('tap', 'node', function (ev) { showSide(side, ev.target.id(), ev.target.data('kind')); });
    });
  }

  // A force layout reads best but costs seconds past a hundred nodes; a big drawing is
  // laid out in rings by hops from the start instead.
  function layoutFor(nodes) {
    if (nodes.length <= 1) return { name: 'grid' };
    if (nodes.length <= 100) return { name: 'cose', animate: false, nodeDimensionsIncludeLabels: true, padding: 20 };
    var deepest = 0;
    nodes.forEach(function (v) { deepest = Math.max(deepest, v.depth || 0); });
    return {
      name: 'concentric', animate: false, padding: 20, minNodeSpacing: 12,
      // Around a node: rings by hops. The whole graph: the best connected in the middle.
      concentric: function (n) { return deepest > 0 ? deepest - (depthOf[n.id()] || 0) : (degree[n.id()] || 0); },
      levelWidth: function () { return 1; }
    };
  }
  var depthOf = {}, degree = {};

  function showSide(side, id, kind) {
    clear(side);
    add(side, el('p', { class: 'muted' }, 'Loading ' + id + '…'));
    gql('query($id: ID!) { node(id: $id) { id __typename ... on Identity { name tags { name } devices { ref present } notes(first: 3) { totalCount nodes { kind body } } relations(first: 20) { totalCount nodes { ...R } } } ' +
      '... on Device { name ref present tags { name } relations(first: 20) { totalCount nodes { ...R } } } ... on Client { name source relations(first: 20) { totalCount nodes { ...R } } } } } ' + NAMED + ' ' + REL, { id: id }).then(function (d) {
      var n = d.node;
      clear(side);
      if (!n) { add(side, el('p', null, id + ' is gone.')); return; }
      add(side, [
        el('h3', { id: 'side-name' }, n.name || n.id),
        el('p', null, el('span', { class: 'badge' }, kind), ' ', el('code', null, n.id)),
        n.tags ? el('div', null, tagChips(n.id, n.tags, false)) : null,
        n.devices ? el('p', null, 'Devices: ', n.devices.map(function (x) { return el('span', { class: 'badge' + (x.present ? ' high' : '') }, x.ref); })) : null,
        n.notes && n.notes.totalCount ? el('p', { class: 'muted' }, n.notes.totalCount + ' notes') : null,
        el('p', null, n.relations.totalCount + ' relations:'),
        el('ul', null, n.relations.nodes.map(function (r) {
          return el('li', null, r.type, r.observed ? ' (observed)' : '', ': ', end(r.from, r.fromId, r.fromPort), ' → ', end(r.to, r.toId, r.toPort));
        })),
        el('p', null, el('a', { href: '#node/' + encodeURIComponent(n.id) }, 'Open'), ' · ', el('a', { href: '#graph/' + encodeURIComponent(n.id) }, 'Draw around it'))
      ]);
    }).catch(function (e) { clear(side); add(side, el('p', { class: 'error' }, e.message)); });
  }

  // ---- changelog -----------------------------------------------------------------

  var logState = { filter: {}, cursors: [null] };

  function viewChangelog(main) {
    var f = logState.filter;
    var filter = {};
    ['since', 'until', 'actor', 'action', 'target'].forEach(function (k) { if (f[k]) filter[k] = f[k]; });
    var after = logState.cursors[logState.cursors.length - 1];
    return gql('query($n: Int, $after: String, $f: EventFilter) { changelog(first: $n, after: $after, filter: $f) { totalCount pageInfo { endCursor hasNextPage } nodes { seq time actor action targetId message requestId } } }',
      { n: 50, after: after, f: filter }).then(function (data) {
      var c = data.changelog;
      clear(main);
      var filters = el('form', { class: 'filters', id: 'changelog-filter' });
      var inputs = {};
      [['since', 'since (24h or RFC 3339)'], ['until', 'until'], ['actor', 'actor (e.g. http:*)'], ['action', 'action (e.g. device.*)'], ['target', 'target id']].forEach(function (p) {
        inputs[p[0]] = el('input', { name: p[0], placeholder: p[1], size: 16, value: f[p[0]] || '' });
        filters.appendChild(el('label', null, p[0], inputs[p[0]]));
      });
      filters.appendChild(el('button', { type: 'submit', class: 'primary' }, 'Filter'));
      filters.appendChild(el('button', { type: 'button', onclick: function () { logState = { filter: {}, cursors: [null] }; route(); } }, 'Clear'));
      filters.addEventListener('submit', function (ev) {
        ev.preventDefault();
        var nf = {};
        Object.keys(inputs).forEach(function (k) { nf[k] = inputs[k].value.trim(); });
        logState = { filter: nf, cursors: [null] };
        route();
      });
      add(main, [
        el('h2', null, 'Changelog', c.totalCount !== null ? el('span', { class: 'muted' }, ' (' + c.totalCount + ' events)') : null),
        filters,
        el('table', { id: 'changelog' },
          el('thead', null, el('tr', null, el('th', null, 'Seq'), el('th', null, 'Time (UTC)'), el('th', null, 'Actor'), el('th', null, 'Action'), el('th', null, 'Target'), el('th', null, 'Why'))),
          el('tbody', null, c.nodes.map(function (ev) {
            return el('tr', { 'data-seq': ev.seq, 'data-action': ev.action, 'data-actor': ev.actor, 'data-target': ev.targetId },
              el('td', { class: 'mono' }, ev.seq), el('td', { class: 'mono' }, fmtTime(ev.time)), el('td', null, ev.actor),
              el('td', null, el('code', null, ev.action)), el('td', null, nodeLink(ev.targetId)), el('td', null, ev.message || ''));
          }))),
        c.nodes.length ? null : el('p', { class: 'card' }, 'No events match.'),
        el('div', { class: 'pager' },
          el('button', { type: 'button', disabled: logState.cursors.length < 2, onclick: function () { logState.cursors.pop(); route(); } }, '← Newer'),
          el('span', { class: 'muted' }, 'page ' + logState.cursors.length),
          el('button', { type: 'button', id: 'older', disabled: !c.pageInfo.hasNextPage, onclick: function () { logState.cursors.push(c.pageInfo.endCursor); route(); } }, 'Older →'))
      ]);
    });
  }

  // ---- routing -------------------------------------------------------------------

  function route() {
    var main = document.getElementById('main');
    var h = location.hash.replace(/^#/, '') || 'devices';
    var slash = h.indexOf('/');
    var view = slash < 0 ? h : h.slice(0, slash);
    var arg = slash < 0 ? undefined : h.slice(slash + 1);
    if (arg !== undefined) {
      try { arg = decodeURIComponent(arg); } catch (e) { arg = null; }
    }
    document.querySelectorAll('header nav a[data-view]').forEach(function (a) {
      a.classList.toggle('active', a.getAttribute('data-view') === (view === 'node' ? '' : view));
    });
    var p;
    if (arg === null) p = Promise.reject(new Error('that link is broken: its id is not valid URL encoding'));
    else if (view === 'devices') p = viewDevices(main);
    else if (view === 'identities') p = viewIdentities(main);
    else if (view === 'graph') p = viewGraph(main, arg === undefined ? '' : arg);
    else if (view === 'changelog') p = viewChangelog(main);
    else if (view === 'node' && arg) p = viewNode(main, arg);
    else p = Promise.reject(new Error('no such page: #' + h));
    document.body.setAttribute('data-loading', '1');
    p.catch(function (e) {
      clear(main);
      add(main, el('p', { class: 'card error', id: 'load-error' }, e.message));
    }).then(function () {
      document.body.removeAttribute('data-loading');
      document.body.setAttribute('data-view', view);
    });
  }

  function init() {
    var actor = document.body.getAttribute('data-actor') || '';
    document.getElementById('actor').textContent = actor ? 'acting as ' + actor : '';
    var out = document.getElementById('logout');
    if (actor && actor !== 'http:local') {
      out.hidden = false;
      out.addEventListener('click', function () {
        fetch('/logout', { method: 'POST', credentials: 'same-origin', headers: { 'Content-Type': 'application/json' }, body: '{}' })
          .then(function () { location.assign('/login'); });
      });
    }
    window.addEventListener('hashchange', route);
    route();
  }

  // For tests and the curious: the drawn graph.
  window.devgraph = { graph: function () { return cy; } };
  init();
})();
