package mcptools

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/devgraph/devgraph/graph"
)

// subscriptions tracks which session reads which resource and tells it
// (notifications/resources/updated) when that changes. Subscriptions arrive through
// resources/subscribe in the 2025-11-25 era and through subscriptions/listen in the
// 2026-07-28 era; mcp-go's own sessions do not record them, so hooks do, uniformly
// for every transport.
//
// Each subscribed URI is reduced to a key (node:<id>, robot:<ref>, changelog, schema)
// when it is subscribed, so "devgraph://node/jdxi" and
// "devgraph://node/identity:jdxi" hear about the same node. Changes are coalesced and
// sent at most once per interval per URI: a driving robot changes state at the tick
// rate, far faster than any reader needs.
type subscriptions struct {
	srv *Server

	mu       sync.Mutex
	sessions map[server.ClientSession]*sessionSubs
	pending  map[string]bool // keys changed since the last flush
}

type sessionSubs struct {
	uris     map[string]string // uri → key
	listenID any               // the subscriptions/listen request id (2026-07-28 era)
	listen   map[string]bool   // uris that came with the listen stream
}

func newSubscriptions(s *Server) *subscriptions {
	return &subscriptions{srv: s, sessions: map[server.ClientSession]*sessionSubs{}, pending: map[string]bool{}}
}

func (su *subscriptions) install(h *server.Hooks) {
	h.AddAfterSubscribe(func(ctx context.Context, _ any, msg *mcp.SubscribeRequest, _ *mcp.EmptyResult) {
		su.add(ctx, server.ClientSessionFromContext(ctx), msg.Params.URI, nil)
	})
	h.AddAfterUnsubscribe(func(ctx context.Context, _ any, msg *mcp.UnsubscribeRequest, _ *mcp.EmptyResult) {
		su.remove(server.ClientSessionFromContext(ctx), msg.Params.URI)
	})
	h.AddBeforeSubscriptionsListen(func(ctx context.Context, id any, msg *mcp.SubscriptionsListenRequest) {
		sess := server.ClientSessionFromContext(ctx)
		for _, uri := range msg.Params.Notifications.ResourceSubscriptions {
			su.add(ctx, sess, uri, id)
		}
	})
	h.AddAfterSubscriptionsListen(func(ctx context.Context, _ any, _ *mcp.SubscriptionsListenRequest, _ *mcp.SubscriptionsListenResult) {
		su.endListen(server.ClientSessionFromContext(ctx))
	})
	h.AddOnError(func(ctx context.Context, _ any, method mcp.MCPMethod, _ any, _ error) {
		if method == mcp.MethodSubscriptionsListen {
			su.endListen(server.ClientSessionFromContext(ctx))
		}
	})
	h.AddOnUnregisterSession(func(_ context.Context, sess server.ClientSession) {
		su.mu.Lock()
		delete(su.sessions, sess)
		su.mu.Unlock()
	})
}

func (su *subscriptions) add(ctx context.Context, sess server.ClientSession, uri string, listenID any) {
	if sess == nil || uri == "" {
		return
	}
	key := su.srv.resourceKey(ctx, uri)
	su.mu.Lock()
	defer su.mu.Unlock()
	ss := su.sessions[sess]
	if ss == nil {
		ss = &sessionSubs{uris: map[string]string{}, listen: map[string]bool{}}
		su.sessions[sess] = ss
	}
	ss.uris[uri] = key
	if listenID != nil {
		ss.listenID = listenID
		ss.listen[uri] = true
	}
}

func (su *subscriptions) remove(sess server.ClientSession, uri string) {
	su.mu.Lock()
	defer su.mu.Unlock()
	if ss := su.sessions[sess]; ss != nil {
		delete(ss.uris, uri)
	}
}

func (su *subscriptions) endListen(sess server.ClientSession) {
	su.mu.Lock()
	defer su.mu.Unlock()
	ss := su.sessions[sess]
	if ss == nil {
		return
	}
	for uri := range ss.listen {
		delete(ss.uris, uri)
	}
	ss.listen = map[string]bool{}
	ss.listenID = nil
	if len(ss.uris) == 0 {
		delete(su.sessions, sess)
	}
}

// count reports how many subscriptions are held (tests wait on it).
func (su *subscriptions) count() int {
	su.mu.Lock()
	defer su.mu.Unlock()
	n := 0
	for _, ss := range su.sessions {
		n += len(ss.uris)
	}
	return n
}

// onEvents marks what committed events changed: each target node, the nodes a note,
// tag or binding hangs on, and the recent changelog.
func (su *subscriptions) onEvents(evs []*graph.Event) {
	su.mu.Lock()
	defer su.mu.Unlock()
	if len(su.sessions) == 0 {
		return // nobody listens: skip reading the bodies (an import brings thousands)
	}
	su.pending[keyChangelog] = true
	for _, ev := range evs {
		su.pending[nodeKey(ev.Target)] = true
		for _, body := range []json.RawMessage{ev.Before, ev.After} {
			for _, id := range relatedIDs(body) {
				su.pending[nodeKey(id)] = true
			}
		}
		if strings.HasPrefix(ev.Action, "robot.") {
			var d struct {
				Ref string `json:"ref"`
			}
			for _, body := range []json.RawMessage{ev.After, ev.Before} {
				if json.Unmarshal(body, &d) == nil && d.Ref != "" {
					su.pending[robotKey(d.Ref)] = true
				}
			}
		}
	}
}

// markAll marks every subscribed resource changed: after missed changes nobody can say
// which, so every subscriber re-reads.
func (su *subscriptions) markAll() {
	su.mu.Lock()
	defer su.mu.Unlock()
	for _, ss := range su.sessions {
		for _, key := range ss.uris {
			su.pending[key] = true
		}
	}
}

// relatedIDs pulls the ids a node's JSON body points at (a note's target, a device's
// identity, a tag's node, a relation's two ends).
func relatedIDs(body json.RawMessage) []string {
	if len(body) == 0 {
		return nil
	}
	var d struct {
		Target     string   `json:"target"`
		IdentityID string   `json:"identity_id"`
		Node       string   `json:"node"`
		ID         string   `json:"id"`
		Ref        string   `json:"ref"`
		Aliases    []string `json:"aliases"`
		From       string   `json:"from"`
		To         string   `json:"to"`
	}
	if json.Unmarshal(body, &d) != nil {
		return nil
	}
	var out []string
	for _, id := range append([]string{d.Target, d.IdentityID, d.Node, d.ID, d.Ref, d.From, d.To}, d.Aliases...) {
		if id != "" {
			out = append(out, id)
		}
	}
	return out
}

func (su *subscriptions) onRobot(ref string) {
	su.mu.Lock()
	if len(su.sessions) > 0 {
		su.pending[robotKey(ref)] = true
	}
	su.mu.Unlock()
}

// run flushes pending changes to subscribers every interval until done closes.
func (su *subscriptions) run(done <-chan struct{}, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case <-t.C:
			su.flush()
		}
	}
}

func (su *subscriptions) flush() {
	su.mu.Lock()
	if len(su.pending) == 0 {
		su.mu.Unlock()
		return
	}
	pending := su.pending
	su.pending = map[string]bool{}
	type delivery struct {
		sess     server.ClientSession
		uri      string
		listenID any
	}
	var out []delivery
	for sess, ss := range su.sessions {
		for uri, key := range ss.uris {
			if pending[key] {
				var id any
				if ss.listen[uri] {
					id = ss.listenID
				}
				out = append(out, delivery{sess, uri, id})
			}
		}
	}
	su.mu.Unlock()
	for _, d := range out {
		n := mcp.JSONRPCNotification{
			JSONRPC: mcp.JSONRPC_VERSION,
			Notification: mcp.Notification{
				Method: string(mcp.MethodNotificationResourceUpdated),
				Params: mcp.NotificationParams{AdditionalFields: map[string]any{"uri": d.uri}},
			},
		}
		if d.listenID != nil {
			n.Params.Meta = map[string]any{mcp.MetaKeySubscriptionID: d.listenID}
		}
		// Never block the fan-out on a slow reader: a full channel drops this one
		// notification, and the next change brings another.
		select {
		case d.sess.NotificationChannel() <- n:
		default:
			su.srv.log.Debug("resource notification dropped: channel full", "uri", d.uri, "session", d.sess.SessionID())
		}
	}
}

const (
	keyChangelog = "changelog"
	keySchema    = "schema"
)

func nodeKey(id string) string   { return "node:" + id }
func robotKey(ref string) string { return "robot:" + ref }
