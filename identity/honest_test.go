package identity_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/identity"
)

// countActions counts the events of each action since the first seq > after.
func actionsSince(t testing.TB, ctx context.Context, svc *identity.Service, after int) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, e := range events(t, ctx, svc)[after:] {
		out[e.Action]++
	}
	return out
}

// TestService_BindRetry: the same bind twice answers already_bound the second time, with
// no event and no second identity, whether it named the identity or a new name; two or
// more identical binds racing all succeed with one set of events.
func TestService_BindRetry(t *testing.T) {
	t.Parallel()
	svc, _, ctx := newService(t)
	if _, err := svc.Unbound(ctx); err != nil { // observe the rig
		t.Fatal(err)
	}

	t.Run("NewName", func(t *testing.T) {
		in := graph.BindInput{Ref: "usb:3-3.2", NewName: "Roland JD-Xi", Slug: "jdxi"}
		first := mustBind(t, ctx, svc, in)
		if !first.Created || first.AlreadyBound {
			t.Fatalf("first bind: created=%v already_bound=%v", first.Created, first.AlreadyBound)
		}
		before := eventCount(t, ctx, svc)
		again := mustBind(t, ctx, svc, in)
		if !again.AlreadyBound || again.Created || again.Identity == nil || again.Identity.ID != "identity:jdxi" {
			t.Fatalf("retried bind: %+v, want already_bound to identity:jdxi", again)
		}
		if after := eventCount(t, ctx, svc); after != before {
			t.Errorf("a retried bind wrote %d events", after-before)
		}
		// Without the slug, the same name is the same binding too.
		if r := mustBind(t, ctx, svc, graph.BindInput{Ref: "usb:3-3.2", NewName: "Roland JD-Xi"}); !r.AlreadyBound {
			t.Errorf("retry without the slug: %+v", r)
		}
		ids, total, _, err := svc.FindIdentities(ctx, graph.IdentityFilter{})
		if err != nil || total != 1 || ids[0].ID != "identity:jdxi" {
			t.Errorf("identities after the retries: %d (%v)", total, err)
		}
	})
	t.Run("Identity", func(t *testing.T) {
		mustBind(t, ctx, svc, graph.BindInput{Ref: "usb:3-3.1", NewName: "Focusrite Scarlett", Slug: "scarlett"})
		before := eventCount(t, ctx, svc)
		for _, id := range []string{"scarlett", "identity:scarlett"} {
			if r := mustBind(t, ctx, svc, graph.BindInput{Ref: "usb:3-3.1", IdentityID: id}); !r.AlreadyBound {
				t.Errorf("bind to %s again: %+v, want already_bound", id, r)
			}
		}
		if after := eventCount(t, ctx, svc); after != before {
			t.Errorf("retried binds wrote %d events", after-before)
		}
	})
	t.Run("NotARetry", func(t *testing.T) {
		// Another name for a bound device is a new identity, not a retry.
		r := mustBind(t, ctx, svc, graph.BindInput{Ref: "usb:3-3.1", NewName: "Scarlett Two", Slug: "scarlett2", Move: true})
		if r.AlreadyBound || !r.Created {
			t.Errorf("bind to a new name: %+v", r)
		}
	})
	t.Run("Racing", func(t *testing.T) {
		start := len(events(t, ctx, svc))
		const n = 6
		var wg sync.WaitGroup
		res := make([]*graph.BindResult, n)
		errs := make([]error, n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				res[i], errs[i] = svc.Bind(ctx, graph.BindInput{Ref: "usb:3-4.1", NewName: "Arturia BeatStep"})
			}()
		}
		wg.Wait()
		created, already := 0, 0
		for i := range n {
			if errs[i] != nil {
				t.Fatalf("racing bind %d: %v", i, errs[i])
			}
			if res[i].Created {
				created++
			}
			if res[i].AlreadyBound {
				already++
			}
		}
		if created != 1 || already != n-1 {
			t.Errorf("racing binds: %d created, %d already bound; want 1 and %d", created, already, n-1)
		}
		acts := actionsSince(t, ctx, svc, start)
		if acts[graph.ActIdentityCreate] != 1 || acts[graph.ActDeviceBind] != 1 {
			t.Errorf("racing binds wrote %v; want one identity.create and one device.bind", acts)
		}
	})
}

// TestService_BindContradiction: a device whose model or unit contradicts the identity's
// hints is refused with the contradiction explained (a dry run lists it), unless forced.
func TestService_BindContradiction(t *testing.T) {
	t.Parallel()
	svc, _, ctx := newService(t)
	if _, err := svc.Unbound(ctx); err != nil {
		t.Fatal(err)
	}
	mustBind(t, ctx, svc, graph.BindInput{Ref: "usb:3-3.2", NewName: "Roland JD-Xi", Slug: "jdxi"})

	t.Run("ErrModel", func(t *testing.T) {
		before := eventCount(t, ctx, svc)
		_, err := svc.Bind(ctx, graph.BindInput{Ref: "usb:3-3.1", IdentityID: "jdxi"})
		if graph.ErrorCode(err) != graph.ECONFLICT || graph.ErrorField(err) != "identity" {
			t.Fatalf("err=%v (%s), want CONFLICT on identity", err, graph.ErrorCode(err))
		}
		msg := graph.ErrorMessage(err)
		for _, w := range []string{"usb:3-3.1", "identity:jdxi", "usb_id 1235:8210", "0582:01a9", "another model"} {
			if !strings.Contains(msg, w) {
				t.Errorf("message %q lacks %q", msg, w)
			}
		}
		if !hasForceStep(err) {
			t.Errorf("steps %+v lack binding with force", graph.ErrorSteps(err))
		}
		if after := eventCount(t, ctx, svc); after != before {
			t.Errorf("a refused bind wrote %d events", after-before)
		}
	})
	t.Run("DryRun", func(t *testing.T) {
		before := eventCount(t, ctx, svc)
		r := mustBind(t, ctx, svc, graph.BindInput{Ref: "usb:3-3.1", IdentityID: "jdxi", DryRun: true})
		if !strings.Contains(strings.Join(r.Conflicts, "\n"), "another model") {
			t.Errorf("dry run conflicts %q lack the contradiction", r.Conflicts)
		}
		if after := eventCount(t, ctx, svc); after != before {
			t.Errorf("a dry run wrote %d events", after-before)
		}
	})
	t.Run("ErrUnit", func(t *testing.T) {
		if _, err := svc.CreateIdentity(ctx, graph.IdentityCreate{Name: "Robot base", Slug: "base", Hints: []graph.Fingerprint{
			{Kind: graph.FPUSBID, Value: "0403:6001"}, {Kind: graph.FPUSBSerial, Value: "0403:6001:OTHER1"}}}); err != nil {
			t.Fatal(err)
		}
		_, err := svc.Bind(ctx, graph.BindInput{Ref: "usb:3-7", IdentityID: "base"})
		if graph.ErrorCode(err) != graph.ECONFLICT || !strings.Contains(graph.ErrorMessage(err), "another unit") ||
			!strings.Contains(graph.ErrorMessage(err), "0403:6001:A50285BI") || strings.Contains(graph.ErrorMessage(err), "another model") {
			t.Fatalf("err=%v, want a conflict naming the other unit only", err)
		}
	})
	t.Run("Force", func(t *testing.T) {
		r := mustBind(t, ctx, svc, graph.BindInput{Ref: "usb:3-3.1", IdentityID: "jdxi", Force: true})
		if r.AlreadyBound || r.Identity.ID != "identity:jdxi" || len(r.HintsAdded) == 0 {
			t.Errorf("forced bind: %+v", r)
		}
	})
	t.Run("SameModelNoSerial", func(t *testing.T) {
		// Twins without serials do not contradict: the model agrees.
		mustBind(t, ctx, svc, graph.BindInput{Ref: "usb:3-1", NewName: "nanoKONTROL2 left", Slug: "nk-left"})
		if _, err := svc.Bind(ctx, graph.BindInput{Ref: "usb:3-2", IdentityID: "nk-left", DryRun: true}); err != nil {
			t.Errorf("a twin of the same model: %v", err)
		}
	})
}

func hasForceStep(err error) bool {
	for _, s := range graph.ErrorSteps(err) {
		if s.Do == graph.StepBind && s.Arg == "force" && s.Value == "true" {
			return true
		}
	}
	return false
}
