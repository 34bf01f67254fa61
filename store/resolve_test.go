package store_test

import (
	"strings"
	"testing"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/store/storetest"
)

func TestResolveID(t *testing.T) {
	db := storetest.MustOpen(t)
	ctx := ctxActor("cli:t")
	if _, err := db.CreateIdentity(ctx, graph.IdentityCreate{Name: "JD-Xi", Slug: "jdxi"}); err != nil {
		t.Fatal(err)
	}
	observe(t, db, dev("sn:0582:01a9:S1", "usb:3-3.2"), dev("robot:SCOUT1", "robot:scout"))
	n, err := db.AddNote(ctx, graph.NoteCreate{Target: "jdxi", Body: "x"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		in    string
		kinds []graph.Kind
		want  string
	}{
		{"identity:jdxi", nil, "identity:jdxi"},
		{"jdxi", nil, "identity:jdxi"},
		{" jdxi ", []graph.Kind{graph.KindIdentity}, "identity:jdxi"},
		{"usb:3-3.2", nil, "device:sn:0582:01a9:S1"},
		{"device:sn:0582:01a9:S1", []graph.Kind{graph.KindDevice}, "device:sn:0582:01a9:S1"},
		{"sn:0582:01a9:S1", nil, "device:sn:0582:01a9:S1"},
		{"robot:scout", nil, "device:robot:SCOUT1"},
		{n.ID, nil, n.ID},
	} {
		got, err := db.ResolveID(ctx, c.in, c.kinds...)
		if err != nil || got != c.want {
			t.Fatalf("ResolveID(%q)=%q, %v; want %q", c.in, got, err, c.want)
		}
	}
	for _, c := range []struct {
		in    string
		kinds []graph.Kind
		code  string
		says  string
	}{
		{"jdx1", nil, graph.ENOTFOUND, "did you mean identity:jdxi?"},
		{"identity:jdx", nil, graph.ENOTFOUND, "did you mean identity:jdxi?"},
		{"usb:3-3.3", nil, graph.ENOTFOUND, "did you mean usb:3-3.2?"},
		{"identity:jdxi", []graph.Kind{graph.KindDevice}, graph.EINVALID, "an identity id; want a device"},
		{"", nil, graph.EINVALID, "no id given"},
		{"bad\xff", nil, graph.EINVALID, "UTF-8"},
		{"zzzzzzzzzzzzzzzzzzzzzz", nil, graph.ENOTFOUND, `unknown identity "zzzzzzzzzzzzzzzzzzzzzz"`},
	} {
		_, err := db.ResolveID(ctx, c.in, c.kinds...)
		mustCode(t, err, c.code)
		if !strings.Contains(err.Error(), c.says) {
			t.Fatalf("ResolveID(%q): %q lacks %q", c.in, err, c.says)
		}
	}
	if _, err := db.ResolveID(ctx, "zzzzzzzzzzzzzzzzzzzzzz"); strings.Contains(err.Error(), "did you mean") {
		t.Fatalf("far-off text got a suggestion: %v", err)
	}
}
