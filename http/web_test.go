package http_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/devgraph/devgraph/graph"
	devhttp "github.com/devgraph/devgraph/http"
	"github.com/devgraph/devgraph/internal/headless"
	"github.com/devgraph/devgraph/query"
)

// serveReal serves h on a real loopback listener (the browser needs one) until the test
// ends and returns its origin.
func serveReal(t *testing.T, h http.Handler) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String()
}

// page is a browser on the web page with helpers that fail the test with what the page
// showed.
type page struct {
	t      *testing.T
	b      *headless.Browser
	origin string
}

// js evaluates expr (a function body's worth of JavaScript in an IIFE) and returns its value.
func (p *page) js(expr string) any {
	p.t.Helper()
	v, err := p.b.Eval("(function(){" + expr + "})()")
	if err != nil {
		p.t.Fatalf("%v\nin: %s", err, expr)
	}
	return v
}

// open goes to a view and waits until it has rendered.
func (p *page) open(hash, view string) {
	p.t.Helper()
	p.js(fmt.Sprintf(`location.hash = %q; return true`, hash))
	p.settle(view)
}

// settle waits until the page shows view with nothing loading, and fails on a load error.
func (p *page) settle(view string) {
	p.t.Helper()
	p.b.Poll("view "+view, fmt.Sprintf(`document.body.getAttribute('data-view') === %q && !document.body.hasAttribute('data-loading') && !!document.querySelector('main h2, #load-error')`, view))
	if e := p.js(`var e = document.getElementById('load-error'); return e ? e.textContent : ''`); e != "" {
		p.t.Fatalf("view %s failed to load: %v", view, e)
	}
}

// submit fills the named fields of the first form matching sel and submits it, then
// waits for the page's answer (a flash) and the view to settle again; it returns the
// flash's text, failing on an error flash.
func (p *page) submit(sel string, fields map[string]string, view string) string {
	p.t.Helper()
	p.js(`document.getElementById('flash').textContent = ''; return true`)
	b, _ := json.Marshal(fields)
	p.js(fmt.Sprintf(`var f = document.querySelector(%q); if (!f) throw new Error('no form %s');
		var v = %s; Object.keys(v).forEach(function (k) { var i = f.querySelector('[name="' + k + '"]'); if (!i) throw new Error('no field ' + k); i.value = v[k]; });
		f.querySelector('button[type=submit]').click(); return true`, sel, sel, b))
	return p.flash(view)
}

func (p *page) click(sel, view string) string {
	p.t.Helper()
	p.js(`document.getElementById('flash').textContent = ''; return true`)
	p.js(fmt.Sprintf(`var b = document.querySelector(%q); if (!b) throw new Error('nothing matches %s'); b.click(); return true`, sel, sel))
	return p.flash(view)
}

func (p *page) flash(view string) string {
	p.t.Helper()
	kind := p.b.Poll("the page's answer", `(function(){ var d = document.querySelector('#flash [data-flash]'); return d ? d.getAttribute('data-flash') : ''; })()`)
	text := p.js(`return document.querySelector('#flash [data-flash]').textContent`).(string)
	if kind != "ok" {
		p.t.Fatalf("the page answered an error: %s", text)
	}
	p.settle(view)
	return text
}

// checkRequests fails the test if the page asked for anything but this server.
func checkRequests(t *testing.T, b *headless.Browser, origin string) {
	t.Helper()
	reqs := b.Requests()
	if len(reqs) == 0 {
		t.Fatal("no network requests seen")
	}
	for _, u := range reqs {
		switch {
		case strings.HasPrefix(u, origin+"/"), strings.HasPrefix(u, "data:"), u == "about:blank":
		default:
			t.Errorf("the page requested %s, outside the server", u)
		}
	}
}

// TestWebPage drives the web page at / in headless Chromium with every other host
// unreachable: devices with the unbound ones first, a bind typed on the page, a tag, a
// note and a cable, the drawn graph of the demo rig, the changelog with its filters
// and paging. Every write lands in the changelog as http:local.
func TestWebPage(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Second)
	defer cancel()
	b := headless.Launch(ctx, t)
	b.SetViewport(1400, 1000)

	e := newEnv(t, query.Options{})
	e.seed()
	e.SeedCable()
	origin := serveReal(t, devhttp.NewHandler(devhttp.Options{GraphQL: e.exec, Loopback: true}))
	p := &page{t: t, b: b, origin: origin}

	b.Navigate(origin + "/")
	p.settle("devices")
	if got := p.js(`return document.body.getAttribute('data-actor')`); got != "http:local" {
		t.Errorf("data-actor=%v, want http:local", got)
	}

	t.Run("devices, unbound first", func(t *testing.T) {
		p.t = t
		want := e.ok(`{ unbound(first: 100) { totalCount nodes { ref match { identityId } } } }`, nil)
		refs := getList(want, "unbound.nodes")
		if len(refs) == 0 {
			t.Fatal("the demo rig has no unbound device")
		}
		got := p.js(`return Array.from(document.querySelectorAll('#unbound tbody tr')).map(function (r) { return r.getAttribute('data-ref'); }).join(' ')`)
		var wantRefs []string
		for _, r := range refs {
			wantRefs = append(wantRefs, get(r, "ref").(string))
		}
		if got != strings.Join(wantRefs, " ") {
			t.Errorf("unbound rows %q, want %q", got, strings.Join(wantRefs, " "))
		}
		if p.js(`var u = document.getElementById('unbound'), b = document.getElementById('bound'); return !!(u && b && (u.compareDocumentPosition(b) & Node.DOCUMENT_POSITION_FOLLOWING))`) != true {
			t.Error("the unbound table does not come first")
		}
		if p.js(`return document.querySelector('#bound tr[data-ref="usb:3-3.2"]') !== null`) != true {
			t.Error("the bound JD-Xi is not listed")
		}
		if p.js(`return document.querySelectorAll('#unbound .why li').length > 0 && document.querySelectorAll('#unbound .badge').length > 0`) != true {
			t.Error("no candidate with its score and why is shown")
		}
		b.Screenshot("devices")
	})

	var bound string
	t.Run("bind from the page", func(t *testing.T) {
		p.t = t
		// A typo is refused with the server's own words, and nothing is written.
		first := p.js(`return document.querySelector('#unbound tbody tr').getAttribute('data-ref')`).(string)
		before, _, _ := e.svc.FindEvents(e.ctx, graph.EventFilter{First: 1})
		p.js(fmt.Sprintf(`document.getElementById('flash').textContent = ''; var f = document.querySelector('#unbound tr[data-ref=%q] form.bind-identity'); f.querySelector('input').value = 'jdx1'; f.querySelector('button').click(); return true`, first))
		p.b.Poll("the refusal", `(function(){ var d = document.querySelector('#flash [data-flash=err]'); return d ? d.textContent : ''; })()`)
		if msg := p.js(`return document.querySelector('#flash [data-flash=err]').textContent`).(string); !strings.Contains(msg, "jdx1") || !strings.Contains(msg, "identity:jdxi") {
			t.Errorf("refusal %q: want it to name jdx1 and suggest identity:jdxi", msg)
		}
		if after, _, _ := e.svc.FindEvents(e.ctx, graph.EventFilter{First: 1}); after[0].Seq != before[0].Seq {
			t.Errorf("a refused bind wrote %s", after[0].Action)
		}
		bound = p.js(`return document.querySelector('#unbound tbody tr').getAttribute('data-ref')`).(string)
		msg := p.submit(fmt.Sprintf(`#unbound tr[data-ref=%q] form.bind-new`, bound), map[string]string{"newName": "Desk Gadget"}, "devices")
		if !strings.Contains(msg, "identity:desk-gadget") {
			t.Errorf("flash %q", msg)
		}
		evs, _, err := e.svc.FindEvents(e.ctx, graph.EventFilter{Action: "device.bind", First: 5})
		if err != nil || len(evs) == 0 {
			t.Fatalf("no device.bind event: %v", err)
		}
		if evs[0].Actor != "http:local" || !strings.Contains(string(evs[0].After), "desk-gadget") {
			t.Errorf("newest device.bind: actor %q after %s", evs[0].Actor, evs[0].After)
		}
		if p.js(fmt.Sprintf(`return document.querySelector('#unbound tr[data-ref=%q]') === null && document.querySelector('#bound tr[data-ref=%q]') !== null`, bound, bound)) != true {
			t.Error("the bound device did not move out of the unbound table")
		}
		// …and the page's changelog shows it, filtered by action.
		p.open("#changelog", "changelog")
		p.submit2("#changelog-filter", map[string]string{"action": "device.bind", "actor": "http:*"}, "changelog")
		rows := p.js(`return Array.from(document.querySelectorAll('#changelog tbody tr')).map(function (r) { return r.getAttribute('data-action') + ' ' + r.getAttribute('data-actor') + ' ' + r.getAttribute('data-target'); })`).([]any)
		if len(rows) != 1 || !strings.HasPrefix(rows[0].(string), "device.bind http:local device:") {
			t.Errorf("changelog rows for device.bind by http:*: %v", rows)
		}
		// Bind the Scarlett to its best candidate with one click.
		p.open("#devices", "devices")
		p.click(`#unbound tr[data-ref="usb:3-3.1"] [data-action=bind-candidate]`, "devices")
		if evs, _, _ := e.svc.FindEvents(e.ctx, graph.EventFilter{Action: "device.bind", First: 1}); len(evs) != 1 || evs[0].Actor != "http:local" || !strings.Contains(string(evs[0].After), "identity:scarlett") {
			t.Errorf("bind to the candidate: %+v", evs)
		}
		// Unbind it again from the page.
		p.open("#devices", "devices")
		p.click(fmt.Sprintf(`#bound tr[data-ref=%q] [data-action=unbind]`, bound), "devices")
		if evs, _, _ := e.svc.FindEvents(e.ctx, graph.EventFilter{Action: "device.unbind", First: 1}); len(evs) != 1 || evs[0].Actor != "http:local" {
			t.Errorf("no device.unbind by http:local: %v", evs)
		}
	})

	t.Run("tag, note and cable", func(t *testing.T) {
		p.t = t
		p.open("#node/"+"identity%3Ajdxi", "node")
		p.submit("form.tag-form", map[string]string{"tag": "Status: On Loan"}, "node")
		if p.js(`return document.querySelector('#tags [data-tag="status:on-loan"]') !== null`) != true {
			t.Error("the new tag is not shown")
		}
		p.click(`#tags [data-tag="role:synth"] button`, "node")
		tags := get(e.ok(`{ identity(id: "jdxi") { tags { name } } }`, nil), "identity.tags")
		if s := fmt.Sprint(tags); !strings.Contains(s, "status:on-loan") || strings.Contains(s, "role:synth") {
			t.Errorf("tags after the page's edits: %s", s)
		}
		body := "<b>not bold</b> <img src=x onerror=alert(1)> **markdown**"
		p.submit("form.note-form", map[string]string{"kind": "warning", "body": body}, "node")
		if got := p.js(`var n = document.querySelector('#notes .note'); return n.querySelector('.body').textContent + '|' + n.querySelectorAll('b, img').length`); got != body+"|0" {
			t.Errorf("newest note shows %q, want the text as typed and no elements", got)
		}
		p.submit("form.relate-form", map[string]string{"fromPort": "MIDI OUT", "type": "cable", "to": "scarlett", "toPort": "MIDI IN", "attrs": "kind=midi-din, colour=red"}, "node")
		rels := e.ok(`{ relations(filter: {node: "jdxi", type: ["cable"], direction: "out"}) { nodes { id author toId fromPort attrs } } }`, nil)
		var cable map[string]any
		for _, r := range getList(rels, "relations.nodes") {
			if get(r, "toId") == "identity:scarlett" {
				cable = r.(map[string]any)
			}
		}
		if cable == nil || cable["author"] != "http:local" || get(cable, "attrs.kind") != "midi-din" || get(cable, "attrs.colour") != "red" {
			t.Fatalf("the cable from the page: %v", rels)
		}
		if p.js(fmt.Sprintf(`return document.querySelector('#relations tr[data-rel=%q]') !== null`, cable["id"])) != true {
			t.Error("the new cable is not listed")
		}
		b.Screenshot("identity")
		p.click(fmt.Sprintf(`#relations tr[data-rel=%q] [data-action=unrelate]`, cable["id"]), "node")
		for _, a := range []string{"tag.add", "tag.remove", "note.add", "relation.add", "relation.remove"} {
			evs, _, err := e.svc.FindEvents(e.ctx, graph.EventFilter{Action: a, Actor: "http:local", First: 1})
			if err != nil || len(evs) != 1 {
				t.Errorf("no %s event by http:local: %v", a, err)
			}
		}
	})

	t.Run("identities", func(t *testing.T) {
		p.t = t
		p.open("#identities", "identities")
		if n := p.js(`return document.querySelectorAll('#identities tbody tr').length`); n != float64(50) {
			t.Errorf("first page: %v rows, want 50", n)
		}
		p.js(`Array.from(document.querySelectorAll('.pager button')).filter(function (b) { return b.textContent.indexOf('Next') === 0; })[0].click(); return true`)
		p.b.Poll("the second page", `!document.body.hasAttribute('data-loading') && (document.querySelector('.pager span') || {}).textContent === 'page 2'`)
		p.submit2("main form", map[string]string{"name": "Roland"}, "identities")
		rows := p.js(`return Array.from(document.querySelectorAll('#identities tbody tr')).map(function (r) { return r.getAttribute('data-id') + ' ' + r.textContent; })`).([]any)
		if len(rows) != 1 || !strings.HasPrefix(rows[0].(string), "identity:jdxi ") || !strings.Contains(rows[0].(string), "manufacturer:roland") {
			t.Errorf("identities named Roland…: %v", rows)
		}
		b.Screenshot("identities")
	})

	t.Run("graph", func(t *testing.T) {
		p.t = t
		// More than 300 things: the drawing keeps 300 and says how many it left out.
		if _, err := e.svc.CreateIdentity(e.ctx, graph.IdentityCreate{Name: "Rack", Slug: "rack"}); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 320; i++ {
			id, err := e.svc.CreateIdentity(e.ctx, graph.IdentityCreate{Name: fmt.Sprintf("Module %03d", i)})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := e.svc.Relate(e.ctx, graph.RelationCreate{From: id.ID, Type: "mounted_on", To: "identity:rack"}); err != nil {
				t.Fatal(err)
			}
		}
		p.open("#graph", "graph")
		p.b.Poll("the graph to be drawn", `!!(window.devgraph.graph() && window.devgraph.graph().nodes().length)`)
		whole := e.ok(`{ subgraph { nodes { id } } }`, nil)
		all := getList(whole, "subgraph.nodes")
		drawn := int(p.js(`return window.devgraph.graph().nodes().length`).(float64))
		if want := min(len(all), 300); drawn != want {
			t.Errorf("drawn %d nodes, want %d (of %d)", drawn, want, len(all))
		}
		if len(all) <= 300 {
			t.Fatalf("the whole graph has %d nodes; the test wants more than 300", len(all))
		}
		{
			if got := p.js(`return document.getElementById('graph-summary').getAttribute('data-left-out')`); got != fmt.Sprint(len(all)-300) {
				t.Errorf("left out %v, want %d", got, len(all)-300)
			}
		}
		b.Screenshot("graph-whole")
		// Around the JD-Xi: the demo rig's devices, the cable and the observed links.
		p.open("#graph/jdxi", "graph")
		p.b.Poll("the graph around the JD-Xi", `!!(window.devgraph.graph() && window.devgraph.graph().getElementById('identity:jdxi').length)`)
		sub := e.ok(`{ subgraph(around: "jdxi", depth: 2) { nodes { id } edges { id type observed } } }`, nil)
		for _, n := range getList(sub, "subgraph.nodes") {
			id := get(n, "id").(string)
			if p.js(fmt.Sprintf(`return window.devgraph.graph().getElementById(%q).length`, id)) != float64(1) {
				t.Errorf("node %s is not drawn", id)
			}
		}
		var cable, observed bool
		for _, ed := range getList(sub, "subgraph.edges") {
			cable = cable || get(ed, "type") == "cable"
			observed = observed || get(ed, "observed") == true
		}
		if !cable || !observed {
			t.Errorf("around the JD-Xi: cable %v, observed %v: %v", cable, observed, sub)
		}
		if got := p.js(`return window.devgraph.graph().edges().length`); got != float64(len(getList(sub, "subgraph.edges"))) {
			t.Errorf("drawn %v edges, want %d", got, len(getList(sub, "subgraph.edges")))
		}
		// Only cables: the JD-Xi and the BeatStep.
		p.submit2("form.graph-form", map[string]string{"types": "cable"}, "graph")
		p.b.Poll("the cables only", `!!(window.devgraph.graph() && window.devgraph.graph().nodes().length === 2)`)
		if got := p.js(`return window.devgraph.graph().nodes().map(function (n) { return n.id(); }).sort().join(' ')`); got != "identity:beatstep identity:jdxi" {
			t.Errorf("around the JD-Xi by cable: %v", got)
		}
		p.submit2("form.graph-form", map[string]string{"types": ""}, "graph")
		p.b.Poll("everything again", `!!(window.devgraph.graph() && window.devgraph.graph().nodes().length > 2)`)
		// Click a node to see it.
		p.js(`window.devgraph.graph().getElementById('identity:beatstep').emit('tap'); return true`)
		p.b.Poll("the clicked node's panel", `(document.getElementById('side-name') || {}).textContent === 'Arturia BeatStep'`)
		b.Screenshot("graph")
	})

	t.Run("changelog paging", func(t *testing.T) {
		p.t = t
		p.open("#changelog", "changelog")
		p.js(`Array.from(document.querySelectorAll('#changelog-filter button')).filter(function (b) { return b.textContent === 'Clear'; })[0].click(); return true`)
		p.b.Poll("the first page", `document.querySelectorAll('#changelog tbody tr').length === 50 && !document.body.hasAttribute('data-loading')`)
		first := p.js(`return document.querySelector('#changelog tbody tr').getAttribute('data-seq')`)
		p.js(`document.getElementById('older').click(); return true`)
		p.b.Poll("the second page", `(function(){ var r = document.querySelector('#changelog tbody tr'); return !document.body.hasAttribute('data-loading') && r && r.getAttribute('data-seq') !== `+fmt.Sprintf("%q", first)+`; })()`)
		second := p.js(`return document.querySelector('#changelog tbody tr').getAttribute('data-seq')`)
		var a, b2 int
		fmt.Sscan(first.(string), &a)
		fmt.Sscan(second.(string), &b2)
		if b2 != a-50 {
			t.Errorf("second page starts at seq %d, want %d", b2, a-50)
		}
		b.Screenshot("changelog")
	})

	t.Run("a bad link says so", func(t *testing.T) {
		p.t = t
		p.js(`location.hash = '#node/%E0%A4%A'; return true`)
		p.b.Poll("the error", `(document.getElementById('load-error') || {}).textContent || ''`)
	})

	checkRequests(t, b, origin)
	if ex := b.Exceptions(); len(ex) > 0 {
		t.Errorf("the page threw: %v", ex)
	}
}

// submit2 is submit for a form whose answer is a re-render, not a flash.
func (p *page) submit2(sel string, fields map[string]string, view string) {
	p.t.Helper()
	b, _ := json.Marshal(fields)
	p.js(fmt.Sprintf(`var f = document.querySelector(%q); var v = %s; Object.keys(v).forEach(function (k) { f.querySelector('[name="' + k + '"]').value = v[k]; });
		document.body.setAttribute('data-loading', '1'); f.querySelector('button[type=submit]').click(); return true`, sel, b))
	p.settle(view)
}

// TestWebLogin opens the page on a loopback server with a token file: the browser is
// sent to /login, a wrong token is refused on the page, the right one opens the page
// (an HttpOnly, SameSite=Strict session cookie), a tag typed on it is recorded as
// http:<token name>, GraphiQL opens too, and logging out ends the session.
func TestWebLogin(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	b := headless.Launch(ctx, t)
	b.SetViewport(1200, 800)

	e := newEnv(t, query.Options{})
	e.seed()
	tokFile := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(tokFile, []byte("ana 0123456789abcdef0123456789\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tokens, err := devhttp.LoadTokens(tokFile)
	if err != nil {
		t.Fatal(err)
	}
	origin := serveReal(t, devhttp.NewHandler(devhttp.Options{GraphQL: e.exec, Loopback: true, Tokens: tokens}))
	p := &page{t: t, b: b, origin: origin}

	b.Navigate(origin + "/#changelog")
	b.Poll("the login page", `location.pathname === '/login' && !document.getElementById('submit').disabled`)
	b.Screenshot("login")
	login := func(tok string) {
		t.Helper()
		p.js(fmt.Sprintf(`document.getElementById('token').value = %q; document.getElementById('submit').click(); return true`, tok))
	}
	login("wrong-token-wrong-token")
	b.Poll("the refusal", `document.getElementById('error').textContent.indexOf('not one of this server') >= 0`)
	login("  0123456789abcdef0123456789 ")
	b.Poll("the page", `location.pathname === '/' && document.body.getAttribute('data-actor') === 'http:ana'`)
	p.settle("changelog")

	var cookies struct {
		Cookies []struct {
			Name     string
			HTTPOnly bool `json:"httpOnly"`
			SameSite string
			Secure   bool
		}
	}
	b.Call("Network.getCookies", map[string]any{"urls": []string{origin + "/"}}, &cookies)
	// Named by port: browsers send a localhost cookie to every port, and two servers on
	// one machine must not share a session.
	if len(cookies.Cookies) != 1 || !cookies.Cookies[0].HTTPOnly || cookies.Cookies[0].SameSite != "Strict" || cookies.Cookies[0].Name != "devgraph_session_"+origin[strings.LastIndex(origin, ":")+1:] {
		t.Errorf("session cookie: %+v", cookies.Cookies)
	}

	p.open("#node/identity%3Abeatstep", "node")
	p.submit("form.tag-form", map[string]string{"tag": "location:rack-2"}, "node")
	if evs, _, _ := e.svc.FindEvents(e.ctx, graph.EventFilter{Action: "tag.add", First: 1}); len(evs) != 1 || evs[0].Actor != "http:ana" {
		t.Errorf("tag.add from the logged-in page: %+v", evs)
	}

	// GraphiQL opens with the same login.
	b.Call("Network.setExtraHTTPHeaders", map[string]any{"headers": map[string]string{"Accept": "text/html"}}, nil)
	b.Navigate(origin + "/graphql")
	b.Poll("GraphiQL", `location.pathname === '/graphql' && !!document.querySelector('.graphiql-execute-button')`)
	b.Call("Network.setExtraHTTPHeaders", map[string]any{"headers": map[string]string{}}, nil)
	// In the browser: the page's JSON POST rides the cookie, a GET query does not.
	post := p.js(`return fetch('/graphql', {method: 'POST', headers: {'Content-Type': 'application/json'}, body: JSON.stringify({query: '{ stats { identities } }'})}).then(function (r) { return r.status; })`)
	getq := p.js(`return fetch('/graphql?query=' + encodeURIComponent('{ stats { identities } }'), {headers: {'Accept': 'application/json'}}).then(function (r) { return r.status; })`)
	if post != float64(200) || getq != float64(401) {
		t.Errorf("with the session cookie: POST %v (want 200), GET query %v (want 401)", post, getq)
	}

	b.Navigate(origin + "/")
	p.settle("devices")
	p.js(`document.getElementById('logout').click(); return true`)
	b.Poll("the login page after logout", `location.pathname === '/login'`)
	b.Navigate(origin + "/")
	b.Poll("the login page again", `location.pathname === '/login' && location.search === '?next=%2F'`)
	checkRequests(t, b, origin)
	if ex := b.Exceptions(); len(ex) > 0 {
		t.Errorf("the pages threw: %v", ex)
	}
}

// TestWeb_Assets: the page's assets are embedded and served from /assets/ with their
// notices; they are revalidated (ETag, 304) so an upgraded server never runs an old
// script; the HTML pages are only served by their routes.
func TestWeb_Assets(t *testing.T) {
	t.Parallel()
	h := devhttp.NewHandler(devhttp.Options{GraphQL: &fakeExec{}, Loopback: true})
	get := func(path, etag string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, "http://127.0.0.1:8080"+path, nil)
		if etag != "" {
			req.Header.Set("If-None-Match", etag)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		return w.Result()
	}
	for _, a := range []string{"app.js", "app.css", "login.js", "cytoscape.min.js", "cytoscape.LICENSE", "NOTICE"} {
		resp := get("/assets/"+a, "")
		if resp.StatusCode != 200 || resp.Header.Get("ETag") == "" || resp.Header.Get("Cache-Control") != "no-cache" || resp.ContentLength == 0 {
			t.Errorf("/assets/%s: %d %v", a, resp.StatusCode, resp.Header)
			continue
		}
		if again := get("/assets/"+a, resp.Header.Get("ETag")); again.StatusCode != http.StatusNotModified {
			t.Errorf("/assets/%s with its ETag: %d, want 304", a, again.StatusCode)
		}
	}
	notice, _ := io.ReadAll(get("/assets/NOTICE", "").Body)
	if !strings.Contains(string(notice), "cytoscape 3.35.0") || !strings.Contains(string(notice), "058a81a7534777ea68dc737e9b77bd5b701e00acd9bee246245a576eeeac32e6") {
		t.Errorf("NOTICE lacks cytoscape's version and tarball sha256:\n%s", notice)
	}
	for _, p := range []string{"/assets/index.html", "/assets/login.html", "/graphql/assets/graphiql.html", "/nope"} {
		if resp := get(p, ""); resp.StatusCode != 404 {
			t.Errorf("%s: %d, want 404", p, resp.StatusCode)
		}
	}
}
