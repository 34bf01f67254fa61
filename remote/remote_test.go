package remote_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/identity"
	"github.com/devgraph/devgraph/remote"
	"github.com/devgraph/devgraph/sources"
	"github.com/devgraph/devgraph/sources/robot"
	"github.com/devgraph/devgraph/store"
	"github.com/devgraph/devgraph/store/storetest"
)

// served is a real identity.Service over a real store, the demo rig and a simulated
// robot, served by the remote handler on a real unix socket.
type served struct {
	svc    *identity.Service
	client *remote.Client
	sock   string
}

func newServed(t *testing.T) *served {
	t.Helper()
	st := storetest.MustOpen(t)
	live, err := sources.NewDemo(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	live.ShareWindow = -1
	fleet, err := robot.NewFleet(robot.Options{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	if err := fleet.AddSim("scout", 0, 0); err != nil {
		t.Fatal(err)
	}
	if err := fleet.Open(); err != nil {
		t.Fatal(err)
	}
	live.Extra = append(live.Extra, fleet)
	svc := identity.New(st, live, fleet)
	if err := svc.Open(); err != nil {
		t.Fatal(err)
	}
	s := &served{svc: svc}
	s.sock, s.client = serve(t, svc, remote.Options{DB: "test.db"})
	t.Cleanup(func() {
		s.client.Close()
		svc.Close()
		fleet.Close()
	})
	return s
}

// serve serves svc on a fresh socket and returns its path and a client.
func serve(t testing.TB, svc graph.Service, opts remote.Options) (string, *remote.Client) {
	t.Helper()
	sock := filepath.Join(shortDir(t), "devgraph.sock")
	ln, err := remote.Listen(sock)
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: remote.NewHandler(svc, opts), ConnContext: remote.ConnContext}
	go hs.Serve(ln)
	t.Cleanup(func() { hs.Close(); ln.Close() })
	return sock, remote.NewClient(sock)
}

// shortDir is a temp dir with a path short enough for a unix socket.
func shortDir(t testing.TB) string {
	t.Helper()
	d, err := os.MkdirTemp("", "dgr")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

func caller(actor, rid, msg string) context.Context {
	ctx := graph.WithActor(context.Background(), actor)
	ctx = graph.WithRequestID(ctx, rid)
	if msg != "" {
		ctx = graph.WithMessage(ctx, msg)
	}
	return ctx
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestClient_SameResultsAndEvents(t *testing.T) {
	t.Parallel()
	s := newServed(t)
	ctx := caller("mcp:alice", "req-create", "a new synth")
	id, err := s.client.CreateIdentity(ctx, graph.IdentityCreate{Name: "Roland JD-Xi", Tags: []string{"role:synth"},
		Hints: []graph.Fingerprint{{Kind: graph.FPUSBID, Value: "0582:01a9"}}})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := id.ID, "identity:roland-jd-xi"; got != want {
		t.Fatalf("id=%q, want %q", got, want)
	}
	note, err := s.client.AddNote(caller("mcp:alice", "req-note", ""), graph.NoteCreate{Target: id.ID, Kind: "warning", Body: "fan is loud"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.client.UpdateTags(caller("mcp:bob", "req-tag", ""), "roland-jd-xi", []string{"location:studio"}, []string{"role:synth"}); err != nil {
		t.Fatal(err)
	}

	// Reads through the socket answer exactly what the service answers in-process.
	bg := context.Background()
	parts := graph.IdentityParts{Notes: true, Devices: true}
	direct, err := s.svc.FindIdentityByID(bg, "roland-jd-xi", parts)
	if err != nil {
		t.Fatal(err)
	}
	viaSock, err := s.client.FindIdentityByID(bg, "roland-jd-xi", parts)
	if err != nil {
		t.Fatal(err)
	}
	if a, b := mustJSON(t, direct), mustJSON(t, viaSock); a != b {
		t.Errorf("FindIdentityByID differs:\n direct %s\n socket %s", a, b)
	}
	di, dt, dn, _ := s.svc.FindIdentities(bg, graph.IdentityFilter{First: 1})
	ci, ct, cn, err := s.client.FindIdentities(bg, graph.IdentityFilter{First: 1})
	if err != nil || mustJSON(t, di) != mustJSON(t, ci) || dt != ct || dn != cn {
		t.Errorf("FindIdentities differs: %v %d %q vs %d %q", err, dt, dn, ct, cn)
	}
	dtags, _ := s.svc.FindTags(bg, graph.TagFilter{InUse: true})
	ctags, err := s.client.FindTags(bg, graph.TagFilter{InUse: true})
	if err != nil || mustJSON(t, dtags) != mustJSON(t, ctags) {
		t.Errorf("FindTags differs: %v", err)
	}
	holders, err := s.client.FindHintHolders(bg, []graph.Fingerprint{{Kind: graph.FPUSBID, Value: "0582:01a9"}})
	if err != nil || len(holders[graph.Fingerprint{Kind: graph.FPUSBID, Value: "0582:01a9"}]) != 1 {
		t.Errorf("FindHintHolders: %v %v", holders, err)
	}
	dnote, err := s.svc.FindNoteByID(bg, note.ID)
	if err != nil {
		t.Fatal(err)
	}
	cnote, err := s.client.FindNoteByID(bg, note.ID)
	if err != nil || mustJSON(t, dnote) != mustJSON(t, cnote) || cnote.Body != "fan is loud" || cnote.Target != id.ID {
		t.Errorf("FindNoteByID through the socket: %s (%v), in-process %s", mustJSON(t, cnote), err, mustJSON(t, dnote))
	}
	if r, err := s.client.ResolveID(bg, "roland-jd-xi"); err != nil || r != id.ID {
		t.Errorf("ResolveID=%q %v", r, err)
	}

	// Live parts: devices, unbound and a bind through the socket.
	if _, err := s.client.Unbound(bg); err != nil {
		t.Fatal(err)
	}
	res, err := s.client.Bind(caller("mcp:alice", "req-bind", "plugged in"), graph.BindInput{Ref: "usb:3-3.2", IdentityID: "roland-jd-xi"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Device == nil || res.Device.IdentityID != id.ID {
		t.Fatalf("bind result %s", mustJSON(t, res))
	}
	dv, err := s.client.Device(bg, "usb:3-3.2")
	if err != nil || dv.BoundTo != id.ID || dv.Match == nil || dv.Match.Confidence != graph.High {
		t.Errorf("device after bind: %s %v", mustJSON(t, dv), err)
	}
	ddevs, dtotal, _, _ := s.svc.Devices(bg, graph.DeviceFilter{All: true})
	cdevs, ctotal, _, err := s.client.Devices(bg, graph.DeviceFilter{All: true})
	if err != nil || dtotal != ctotal || len(ddevs) != len(cdevs) {
		t.Errorf("Devices: %d vs %d (%v)", dtotal, ctotal, err)
	}
	for i := range ddevs {
		if i < len(cdevs) && (ddevs[i].ID != cdevs[i].ID || ddevs[i].BoundTo != cdevs[i].BoundTo) {
			t.Errorf("device %d: %s→%s vs %s→%s", i, ddevs[i].ID, ddevs[i].BoundTo, cdevs[i].ID, cdevs[i].BoundTo)
		}
	}
	srcs, err := s.client.Sources(bg)
	if err != nil || len(srcs) < 3 {
		t.Errorf("Sources: %v %v", srcs, err)
	}

	// The events carry the caller's actor, request id and message.
	evs, _, err := s.svc.FindEvents(bg, graph.EventFilter{Actor: "mcp:*", First: 100})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, e := range evs {
		switch e.RequestID {
		case "req-create":
			if e.Actor != "mcp:alice" || e.Message != "a new synth" {
				t.Errorf("create event %s: actor %q message %q", e.Action, e.Actor, e.Message)
			}
		case "req-tag":
			if e.Actor != "mcp:bob" || e.Message != "" {
				t.Errorf("tag event %s: actor %q message %q", e.Action, e.Actor, e.Message)
			}
		case "req-bind":
			if e.Actor != "mcp:alice" || e.Message != "plugged in" {
				t.Errorf("bind event %s: actor %q message %q", e.Action, e.Actor, e.Message)
			}
		}
		seen[e.RequestID+" "+e.Action] = true
	}
	for _, want := range []string{"req-create identity.create", "req-note note.add", "req-tag tag.add", "req-tag tag.remove", "req-bind device.bind"} {
		if !seen[want] {
			t.Errorf("no event %q among %v", want, seen)
		}
	}
	cevs, cnext, err := s.client.FindEvents(bg, graph.EventFilter{Actor: "mcp:*", First: 100})
	if err != nil || mustJSON(t, cevs) != mustJSON(t, evs) || cnext != "" {
		t.Errorf("FindEvents through the socket differs (%v)", err)
	}
	rep, err := s.client.VerifyChangelog(bg)
	if err != nil || !rep.OK {
		t.Errorf("verify: %+v %v", rep, err)
	}
}

func TestClient_ErrorsKeepTheirCode(t *testing.T) {
	t.Parallel()
	s := newServed(t)
	ctx := caller("mcp:alice", "", "")
	if _, err := s.client.CreateIdentity(ctx, graph.IdentityCreate{Name: "Korg Minilogue"}); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		call func(svc graph.Service) error
		code string
	}{
		{"NotFound", func(svc graph.Service) error {
			_, err := svc.FindIdentityByID(ctx, "korg-minilog", graph.IdentityParts{})
			return err
		}, graph.ENOTFOUND},
		{"NoteNotFound", func(svc graph.Service) error {
			_, err := svc.FindNoteByID(ctx, "note:0190f000-0000-7000-8000-000000000000")
			return err
		}, graph.ENOTFOUND},
		{"Conflict", func(svc graph.Service) error {
			_, err := svc.CreateIdentity(ctx, graph.IdentityCreate{Name: "Korg Minilogue"})
			return err
		}, graph.ECONFLICT},
		{"Invalid", func(svc graph.Service) error {
			_, err := svc.UpdateTags(ctx, "korg-minilogue", []string{"no colon"}, nil)
			return err
		}, graph.EINVALID},
		{"UnknownRobot", func(svc graph.Service) error {
			_, err := svc.RobotArm(ctx, "robot:nobody")
			return err
		}, graph.ENOTFOUND},
		{"BadGoal", func(svc graph.Service) error {
			_, err := svc.RobotNavigate(ctx, "robot:scout", graph.Goal{X: 1e9, Y: 0}, nil)
			return err
		}, graph.EINVALID},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			direct := c.call(s.svc)
			via := c.call(s.client)
			var ge *graph.Error
			if !errors.As(via, &ge) {
				t.Fatalf("socket error %T %v is not a *graph.Error", via, via)
			}
			if got, want := graph.ErrorCode(via), c.code; got != want {
				t.Errorf("code=%q, want %q (%v)", got, want, via)
			}
			if got, want := graph.ErrorCode(via), graph.ErrorCode(direct); got != want {
				t.Errorf("code=%q, in-process %q", got, want)
			}
			if got, want := graph.ErrorMessage(via), graph.ErrorMessage(direct); got != want {
				t.Errorf("message=%q, in-process %q", got, want)
			}
			if got, want := graph.ErrorField(via), graph.ErrorField(direct); got != want {
				t.Errorf("field=%q, in-process %q", got, want)
			}
		})
	}
}

func TestClient_Streams(t *testing.T) {
	t.Parallel()
	s := newServed(t)
	ctx := caller("mcp:alice", "", "")
	for _, name := range []string{"Alpha", "Beta", "Gamma"} {
		if _, err := s.client.CreateIdentity(ctx, graph.IdentityCreate{Name: name, Tags: []string{"role:synth"}}); err != nil {
			t.Fatal(err)
		}
	}
	bg := context.Background()

	t.Run("Backup", func(t *testing.T) {
		var buf bytes.Buffer
		n, err := s.client.Backup(bg, &buf)
		if err != nil {
			t.Fatal(err)
		}
		if n != int64(buf.Len()) || n == 0 {
			t.Fatalf("backup reported %d bytes, wrote %d", n, buf.Len())
		}
		path := filepath.Join(t.TempDir(), "copy.db")
		if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
			t.Fatal(err)
		}
		db, err := store.Open(path, store.Options{NoBackup: true})
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if _, total, _, err := db.FindIdentities(bg, graph.IdentityFilter{}); err != nil || total != 3 {
			t.Errorf("the backup holds %d identities (%v), want 3", total, err)
		}
	})

	t.Run("ExportImport", func(t *testing.T) {
		var direct, via bytes.Buffer
		if err := s.svc.Export(bg, &direct); err != nil {
			t.Fatal(err)
		}
		if err := s.client.Export(bg, &via); err != nil {
			t.Fatal(err)
		}
		// The header line carries the export's time; every record after it is the same.
		_, dbody, _ := bytes.Cut(direct.Bytes(), []byte("\n"))
		_, vbody, _ := bytes.Cut(via.Bytes(), []byte("\n"))
		if len(vbody) == 0 || !bytes.Equal(dbody, vbody) {
			t.Fatalf("export through the socket differs: %d vs %d bytes", direct.Len(), via.Len())
		}
		// Import into an empty database served on another socket: the chain is kept.
		empty := identity.New(storetest.MustOpen(t), nil, nil)
		_, client2 := serve(t, empty, remote.Options{})
		defer client2.Close()
		var calls atomic.Int64
		st, err := client2.Import(ctx, bytes.NewReader(via.Bytes()), func(int, int) { calls.Add(1) })
		if err != nil {
			t.Fatal(err)
		}
		if !st.KeptLog || st.Records == 0 {
			t.Errorf("import stats %+v, want the log kept", st)
		}
		a, _ := s.svc.VerifyChangelog(bg)
		b, err := client2.VerifyChangelog(bg)
		if err != nil || !b.OK || a.HeadHash != b.HeadHash || a.HeadSeq != b.HeadSeq {
			t.Errorf("imported chain head %+v, original %+v (%v)", b, a, err)
		}
	})

	t.Run("NavigateProgress", func(t *testing.T) {
		rctx := caller("mcp:alice", "req-nav", "drive")
		if _, err := s.client.RobotArm(rctx, "robot:scout"); err != nil {
			t.Fatal(err)
		}
		var progress []graph.NavProgress
		res, err := s.client.RobotNavigate(rctx, "robot:scout", graph.Goal{X: 1.5, Y: 0, TimeoutS: 30}, func(p graph.NavProgress) {
			progress = append(progress, p)
		})
		if err != nil {
			t.Fatal(err)
		}
		if res.Status != graph.NavArrived {
			t.Fatalf("navigate: %+v", res)
		}
		if len(progress) == 0 {
			t.Fatal("no progress frames arrived")
		}
		if first, last := progress[0].DistanceRemaining, progress[len(progress)-1].DistanceRemaining; !(last < first) {
			t.Errorf("distance remaining went %g → %g", first, last)
		}
		evs, _, err := s.svc.FindEvents(bg, graph.EventFilter{Action: "robot.navigate.*", First: 10})
		if err != nil {
			t.Fatal(err)
		}
		var actions []string
		for _, e := range evs {
			if e.RequestID == "req-nav" && e.Actor == "mcp:alice" {
				actions = append(actions, e.Action)
			}
		}
		if strings.Join(actions, ",") != "robot.navigate.end,robot.navigate.start" {
			t.Errorf("navigation events by mcp:alice/req-nav: %v", actions)
		}
	})

	t.Run("NavigateCancel", func(t *testing.T) {
		rctx, cancel := context.WithCancel(caller("mcp:alice", "", ""))
		defer cancel()
		if _, err := s.client.RobotArm(rctx, "robot:scout"); err != nil {
			t.Fatal(err)
		}
		_, err := s.client.RobotNavigate(rctx, "robot:scout", graph.Goal{X: -5, Y: 5, TimeoutS: 50}, func(graph.NavProgress) { cancel() })
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled navigate returned %v", err)
		}
		// Closing the connection cancels the navigation on the server, which stops the robot.
		deadline := time.Now().Add(10 * time.Second)
		for {
			st, err := s.svc.Robot(bg, "robot:scout")
			if err != nil {
				t.Fatal(err)
			}
			if st.State != graph.RobotNavigating {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the robot still navigates after the client went away: %+v", st)
			}
			time.Sleep(20 * time.Millisecond)
		}
	})
}

func TestHandler_ReadOnly(t *testing.T) {
	t.Parallel()
	svc := identity.New(storetest.MustOpen(t), nil, nil)
	_, client := serve(t, svc, remote.Options{ReadOnly: true})
	defer client.Close()
	ctx := caller("mcp:alice", "", "")
	_, err := client.CreateIdentity(ctx, graph.IdentityCreate{Name: "X"})
	if graph.ErrorCode(err) != graph.EINVALID || !strings.Contains(graph.ErrorMessage(err), "read-only") {
		t.Fatalf("create on a read-only server: %v", err)
	}
	// The refusal speaks of what the user did, not of internal method names.
	_, err = client.UpdateTags(ctx, "identity:x", []string{"role:synth"}, nil)
	if got, want := graph.ErrorMessage(err), "this server is read-only (--read-only): tagging is refused; ask its owner or use a server without --read-only"; got != want {
		t.Fatalf("tag on a read-only server: %q, want %q", got, want)
	}
	if _, _, _, err := client.FindIdentities(ctx, graph.IdentityFilter{}); err != nil {
		t.Fatalf("read on a read-only server: %v", err)
	}
	if _, err := client.FindNoteByID(ctx, "note:0190f000-0000-7000-8000-000000000000"); graph.ErrorCode(err) != graph.ENOTFOUND {
		t.Fatalf("note lookup on a read-only server: %v (want NOT_FOUND, a read it answers)", err)
	}
	if _, total, _, _ := svc.FindIdentities(ctx, graph.IdentityFilter{}); total != 0 {
		t.Fatalf("a read-only server created %d identities", total)
	}
}

func TestClient_NoServer(t *testing.T) {
	t.Parallel()
	sock := filepath.Join(shortDir(t), "none.sock")
	_, _, err := remote.Dial(context.Background(), sock, time.Second)
	if graph.ErrorCode(err) != graph.EUNAVAILABLE {
		t.Fatalf("dial with nobody listening: %v", err)
	}
}

// TestHandler_PingLeaseLoss: a fleet front end's ping says while its host lease is lost,
// and since when and who holds the name (doctor's "host lease" row), and nothing once the
// host holds its name again.
func TestHandler_PingLeaseLoss(t *testing.T) {
	t.Parallel()
	svc := identity.New(storetest.MustOpen(t), nil, nil)
	var mu sync.Mutex
	var loss *graph.LeaseLoss
	_, client := serve(t, svc, remote.Options{LeaseLoss: func() *graph.LeaseLoss {
		mu.Lock()
		defer mu.Unlock()
		return loss
	}})
	defer client.Close()
	ctx := context.Background()
	p, err := client.Ping(ctx)
	if err != nil || p.LeaseLoss != nil {
		t.Fatalf("ping while the host holds its name: %+v %v", p, err)
	}
	since := time.Date(2026, 11, 28, 14, 0, 0, 0, time.UTC)
	mu.Lock()
	loss = &graph.LeaseLoss{Host: "studio-a", Since: since, HeldBy: "machine-42", HeldSince: since.Add(time.Second)}
	mu.Unlock()
	p, err = client.Ping(ctx)
	if err != nil || p.LeaseLoss == nil || !p.LeaseLoss.Since.Equal(since) || p.LeaseLoss.HeldBy != "machine-42" {
		t.Fatalf("ping while the lease is lost: %+v %v", p, err)
	}
	want := "this host (studio-a) lost its cluster lease at 2026-11-28T14:00:00Z; claiming its name again (held by another machine, machine-42, since 2026-11-28T14:00:01Z)"
	if got := p.LeaseLoss.String(); got != want {
		t.Errorf("doctor's line: %q\nwant %q", got, want)
	}
}
