package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/remote"
)

// Streaming verbs (`changelog --follow`, `devices --watch`) read changes as they are
// written, through a running server's /watch (remote.Client.Watch); the store's change
// notifications live in the server, so without one they say to start it.

// streamClient is the running server's client for the database, or the error that says
// to start one.
func (e *env) streamClient(ctx context.Context, c *common, verb string) (*remote.Client, error) {
	if c.store != "" {
		// The cluster's front end on this host: only it hears the changes.
		s, err := e.openStore(ctx, c, openServer)
		if err != nil {
			return nil, err
		}
		return s.client, nil
	}
	db := e.dbPath(c)
	if cl := dialServer(ctx, db); cl != nil {
		return cl, nil
	}
	return nil, graph.Errorf(graph.EUNAVAILABLE, "%s streams changes through a running server, and none is running for %s; start one with `devgraph serve%s` (in another terminal, or as a service) and run this again", verb, db, demoHint(c))
}

// streamTable prints rows as they come, each padded to the column widths of its header
// (wider cells push the next column out rather than break the line); on a terminal the
// line is cut to its width with "…".
type streamTable struct {
	w      io.Writer
	widths []int
}

func newStreamTable(w io.Writer, widths []int, header ...string) *streamTable {
	t := &streamTable{w: w, widths: widths}
	t.row(toAny(header)...)
	return t
}

func (t *streamTable) row(cells ...any) {
	var sb strings.Builder
	for i, c := range cells {
		v, ok := c.(cell)
		if !ok {
			v = cell{full: fmt.Sprint(c)}
		}
		s := cleanCell(v.full)
		if cols := columnsOf(t.w); cols > 0 && cols < 100 && v.short != "" {
			s = cleanCell(v.short)
		}
		sb.WriteString(s)
		if i < len(cells)-1 {
			pad := 2
			if i < len(t.widths) {
				pad = max(t.widths[i]-width(s), 0) + 2
			}
			sb.WriteString(strings.Repeat(" ", pad))
		}
	}
	line := strings.TrimRight(sb.String(), " ")
	if cols := columnsOf(t.w); cols > 0 && width(line) > cols {
		line = clipKeep(line, cols)
	}
	fmt.Fprintln(t.w, line)
}

// clipKeep cuts s to n runes with an ellipsis, keeping its spaces (clip folds them).
func clipKeep(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// followChangelog prints the newest first events matching f (oldest first), then each
// new one as it is written, until ctx ends (Ctrl-C: exit 0). With asJSON every event is
// one JSON line.
func (e *env) followChangelog(ctx context.Context, c *common, f graph.EventFilter, first int, asJSON bool, out io.Writer) error {
	cl, err := e.streamClient(ctx, c, "changelog --follow")
	if err != nil {
		return err
	}
	defer cl.Close()
	if f.Target != "" && f.Target != graph.ChangelogTarget {
		id, err := cl.ResolveID(ctx, f.Target)
		if err != nil {
			if graph.ErrorCode(err) != graph.ENOTFOUND || graph.KindOf(f.Target) == "" {
				return err
			}
			id = f.Target // deleted nodes still have history
		}
		f.Target = id
	}
	var t *streamTable
	if !asJSON {
		t = newStreamTable(out, []int{5, 20, 14, 18, 30}, "SEQ", "TIME", "ACTOR", "ACTION", "TARGET", "MESSAGE")
	}
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	return cl.Watch(ctx, f, first, func(ev *graph.Event) error {
		switch {
		case ev == nil:
			return nil
		case asJSON:
			return enc.Encode(ev)
		}
		t.row(ev.Seq, fmtTime(ev.Time), ev.Actor, ev.Action, idCell(ev.Target), clip(ev.Message, 50))
		return nil
	})
}

// watchDevices prints the devices table, then a line for each device that appears,
// disappears, is bound or unbound, as it happens, until ctx ends (exit 0). With asJSON
// every change is one JSON line: {"action", "time", "device"}.
func (e *env) watchDevices(ctx context.Context, c *common, all, asJSON bool, out io.Writer) error {
	cl, err := e.streamClient(ctx, c, "devices --watch")
	if err != nil {
		return err
	}
	defer cl.Close()
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	var t *streamTable
	// The listing is read once the stream is live, so a change after it is never lost.
	list := func() error {
		devs, _, _, err := cl.Devices(ctx, graph.DeviceFilter{All: all, First: graph.MaxPageSize})
		if err != nil {
			return err
		}
		if asJSON {
			for _, d := range devs {
				if err := enc.Encode(deviceChange{Action: "listed", Device: d}); err != nil {
					return err
				}
			}
			return nil
		}
		t = newStreamTable(out, []int{9, 13, 26, 22}, "EVENT", "REF", "NAME", "IDENTITY", "MATCH")
		for _, d := range devs {
			t.row("present", d.Ref, clip(d.Name, 26), identityCell(d), fmtScore(d.Match))
		}
		return nil
	}
	return cl.Watch(ctx, graph.EventFilter{Action: "device.*"}, 0, func(ev *graph.Event) error {
		if ev == nil {
			return list()
		}
		d, err := cl.Device(ctx, ev.Target)
		if err != nil {
			return err
		}
		action := strings.TrimPrefix(ev.Action, "device.")
		if asJSON {
			return enc.Encode(deviceChange{Action: action, Time: fmtTime(ev.Time), Device: d})
		}
		t.row(action, d.Ref, clip(d.Name, 26), identityCell(d), fmtScore(d.Match))
		return nil
	})
}

// deviceChange is one line of `devices --watch --json`.
type deviceChange struct {
	Action string            `json:"action"` // listed (the first listing), appear, disappear, bind, unbind
	Time   string            `json:"time,omitempty"`
	Device *graph.DeviceView `json:"device"`
}

// identityCell is a device's IDENTITY column: its identity (slug when narrow), "(hub)"
// for infrastructure, "-" for none; "(match)" marks a binding by match.
func identityCell(d *graph.DeviceView) cell {
	switch {
	case d.Infra:
		return cell{full: "(hub)"}
	case d.BoundTo == "":
		return cell{full: "-"}
	}
	c := idCell(d.BoundTo)
	if d.BoundBy == "match" {
		c.full += " (match)"
		if c.short != "" {
			c.short += " (match)"
		}
	}
	return c
}
