package store_test

import (
	"context"
	"testing"

	"devgraph/graph"
	"devgraph/store/storetest"
)

func TestSmoke(t *testing.T) {
	db := storetest.MustOpen(t)
	ctx := graph.WithActor(context.Background(), "cli:test")
	id, err := db.CreateIdentity(ctx, graph.IdentityCreate{Name: "Roland JD-Xi", Hints: []graph.Fingerprint{{Kind: "usb_id", Value: "0582:01A9"}}, Tags: []string{"Role:Synth"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", id)
	evs, next, err := db.FindEvents(ctx, graph.EventFilter{})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range evs {
		t.Logf("%d %s %s %s %s", e.Seq, e.Action, e.Target, e.After, e.Hash[:8])
	}
	t.Log(next)
	r, err := db.VerifyChangelog(ctx)
	t.Logf("%+v %v", r, err)
	_, err = db.ResolveID(ctx, "roland-jd-x")
	t.Log(err)
}
