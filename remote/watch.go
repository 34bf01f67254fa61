package remote

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path"
	"slices"
	"strconv"
	"sync"

	"github.com/devgraph/devgraph/graph"
)

// WatchRequest is the argument of POST /watch: the changelog filter to follow, and how
// many of the newest matching events to send first (the first page; 0 sends none).
type WatchRequest struct {
	Filter graph.EventFilter `json:"filter"`
	First  int               `json:"first,omitempty"`
}

// watchFrame is one line of /watch's answer: an event, the mark that the first page is
// out, or the error that ended the stream.
type watchFrame struct {
	Event *graph.Event `json:"event,omitempty"`
	Live  bool         `json:"live,omitempty"` // the first page is out
	Error *wireError   `json:"error,omitempty"`
}

// watchHandler serves POST /watch: the first page of the changelog under the filter,
// oldest first, then every matching event as its write commits, until the caller hangs
// up or the server closes. The subscription to the store's change notifications is
// made before the first page is read, and only events newer than the last one sent go
// out, so nothing is missed or sent twice between the page and the stream. A reader the
// store drops for falling behind, and a filter on a target (events are filed under
// every node they touch, which only the store's index knows), are caught up from the
// changelog itself.
type watchHandler struct {
	ctx      context.Context // ends every stream on Close
	log      logger
	changes  graph.ChangelogService
	notifier graph.Notifier
}

type logger interface {
	Error(msg string, args ...any)
}

func (h *watchHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		writeJSON(w, http.StatusMethodNotAllowed, errorBody{Error: toWire(graph.Errorf(graph.EINVALID, "use POST for /watch"))})
		return
	}
	ctx, err := CallerContext(r)
	if err == nil {
		var req WatchRequest
		if err = decodeArgs(r, &req); err == nil {
			err = h.serve(ctx, w, req)
		}
	}
	if err != nil && ctx != nil && ctx.Err() != nil {
		return // the caller hung up
	}
	if err != nil {
		if graph.ErrorCode(err) == graph.EINTERNAL {
			h.log.Error("watch failed", "err", err)
		}
		writeJSON(w, statusOf(graph.ErrorCode(err)), errorBody{Error: toWire(err)})
	}
}

// serve streams; an error returned before the first byte is answered as a refusal, one
// after it ends the stream as an error frame.
func (h *watchHandler) serve(ctx context.Context, w http.ResponseWriter, req WatchRequest) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(h.ctx, cancel)
	defer stop()

	f := req.Filter
	f.After, f.First = "", 0
	for field, glob := range map[string]string{"actor": f.Actor, "action": f.Action} {
		if _, err := path.Match(glob, ""); err != nil {
			return graph.FieldErrorf(graph.EINVALID, field, "%s glob %q is malformed; want e.g. mcp:* or hint.*", field, glob)
		}
	}
	var (
		mu      sync.Mutex
		pending []*graph.Event
		dropped bool
	)
	wake := make(chan struct{}, 1)
	subscribe := func() func() {
		return h.notifier.Subscribe(func(evs []*graph.Event) {
			mu.Lock()
			if evs == nil {
				dropped = true
			} else {
				pending = append(pending, evs...)
			}
			mu.Unlock()
			select {
			case wake <- struct{}{}:
			default:
			}
		})
	}
	unsubscribe := subscribe()
	defer func() { unsubscribe() }()

	// The head is read after subscribing: every event above it reaches us as a
	// notification, every one at or below it is the first page's.
	head, _, err := h.changes.FindEvents(ctx, graph.EventFilter{First: 1})
	if err != nil {
		return err
	}
	var last uint64
	if len(head) > 0 {
		last = head[0].Seq
	}
	var first []*graph.Event
	if req.First > 0 {
		pf := f
		pf.First = req.First
		pf.After = strconv.FormatUint(last+1, 10)
		if first, _, err = h.changes.FindEvents(ctx, pf); err != nil {
			return err
		}
	}
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	enc := json.NewEncoder(w)
	send := func(fr watchFrame) bool {
		return enc.Encode(fr) == nil && rc.Flush() == nil
	}
	for i := len(first) - 1; i >= 0; i-- {
		if !send(watchFrame{Event: first[i]}) {
			return nil
		}
	}
	if !send(watchFrame{Live: true}) { // the first page is out; what follows is live
		return nil
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-wake:
		}
		mu.Lock()
		evs, lost := pending, dropped
		pending, dropped = nil, false
		mu.Unlock()
		if lost {
			unsubscribe()
			unsubscribe = subscribe()
		}
		var out []*graph.Event
		if lost || f.Target != "" {
			newest := last
			for _, e := range evs {
				newest = max(newest, e.Seq)
			}
			if !lost && newest == last {
				continue
			}
			if out, err = h.since(ctx, f, last); err != nil {
				if ctx.Err() == nil {
					send(watchFrame{Error: toWire(err)})
				}
				return nil
			}
			if len(out) == 0 {
				last = newest
			}
		} else {
			for _, e := range evs {
				if e.Seq > last && matches(f, e) {
					out = append(out, e)
				}
			}
			if n := len(evs); n > 0 && evs[n-1].Seq > last && len(out) == 0 {
				last = evs[n-1].Seq
			}
		}
		for _, e := range out {
			if e.Seq <= last {
				continue
			}
			if !send(watchFrame{Event: e}) {
				return nil
			}
			last = e.Seq
		}
	}
}

// since reads the events matching f above seq last from the changelog, oldest first.
func (h *watchHandler) since(ctx context.Context, f graph.EventFilter, last uint64) ([]*graph.Event, error) {
	var out []*graph.Event
	f.First = 500
	for {
		evs, next, err := h.changes.FindEvents(ctx, f)
		if err != nil {
			return nil, err
		}
		for _, e := range evs {
			if e.Seq <= last {
				slices.Reverse(out)
				return out, nil
			}
			out = append(out, e)
		}
		if next == "" {
			slices.Reverse(out)
			return out, nil
		}
		f.After = next
	}
}

// matches reports whether e passes f's time range and actor and action globs, as the
// store's FindEvents reads them (a target filter is the store's to apply).
func matches(f graph.EventFilter, e *graph.Event) bool {
	if !f.Since.IsZero() && e.Time.Before(f.Since) {
		return false
	}
	if !f.Until.IsZero() && e.Time.After(f.Until) {
		return false
	}
	if f.Actor != "" {
		if ok, _ := path.Match(f.Actor, e.Actor); !ok {
			return false
		}
	}
	if f.Action != "" {
		if ok, _ := path.Match(f.Action, e.Action); !ok {
			return false
		}
	}
	return true
}

// Watch follows the changelog through the server's POST /watch: fn is called with the
// newest first events matching f (oldest of them first), then with nil once (what
// follows is live), then with each matching event as its write commits, with no gap and
// no repeat. It returns when ctx ends (nil), fn returns an error (that error), or the
// server goes away (EUNAVAILABLE). A server that predates /watch is EUNAVAILABLE with
// the advice to restart it.
func (c *Client) Watch(ctx context.Context, f graph.EventFilter, first int, fn func(*graph.Event) error) error {
	b, err := encodeArgs(WatchRequest{Filter: f, First: first})
	if err != nil {
		return err
	}
	resp, err := c.post(ctx, "/watch", "watch", bytes.NewReader(b))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 256<<10), 64<<20)
	for sc.Scan() {
		var fr watchFrame
		if err := json.Unmarshal(sc.Bytes(), &fr); err != nil {
			return c.unavailable(fmt.Errorf("decode a watch frame: %w", err))
		}
		switch {
		case fr.Error != nil:
			return fr.Error.toGraph()
		case fr.Event != nil:
			if err := fn(fr.Event); err != nil {
				return err
			}
		case fr.Live:
			if err := fn(nil); err != nil {
				return err
			}
		}
	}
	if ctx.Err() != nil {
		return nil
	}
	return graph.Errorf(graph.EUNAVAILABLE, "the devgraph server on %s stopped; start it again with `devgraph serve` and rerun", c.path)
}
