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

// TestResolveID_Forms: every form a person or a model may type reaches the node — any letter
// case, a bare robot name, any ref a merged device answers to (its ALSA card, sequencer
// client and PipeWire names, a former ref), a twin's own card id — and a ref several
// devices answer to is refused with each of them named.
func TestResolveID_Forms(t *testing.T) {
	db := storetest.MustOpen(t)
	ctx := ctxActor("cli:t")
	if _, err := db.CreateIdentity(ctx, graph.IdentityCreate{Name: "JD-Xi", Slug: "jdxi"}); err != nil {
		t.Fatal(err)
	}
	synth := dev("path:0582:01a9:3-3.2", "usb:3-3.2", fp("usb_id", "0582:01a9"), fp("alsa_card_id", "JDXi"),
		fp("midi_client", "JD-Xi"), fp("pipewire_device", "alsa_card.usb-Roland_JD-Xi-00"))
	synth.Attrs = map[string]string{"alsa_id": "JDXi"}
	twin := func(key, ref, card string) *graph.ObservedDevice {
		d := dev(key, ref, fp("usb_id", "0944:0117"), fp("alsa_card_id", "nanoKONTROL2"), fp("midi_client", "nanoKONTROL2"))
		d.Attrs = map[string]string{"alsa_id": card}
		return d
	}
	serial := dev("sn:0403:6001:A50285BI", "usb:3-7", fp("usb_serial", "0403:6001:A50285BI"))
	observe(t, db, synth, twin("path:0944:0117:3-1", "usb:3-1", "nanoKONTROL2"),
		twin("path:0944:0117:3-2", "usb:3-2", "nanoKONTROL2_1"), serial, dev("robot:SCOUT1", "robot:scout"))
	// the FTDI adapter moves: usb:3-7 stays a former ref of it
	observe(t, db, synth, twin("path:0944:0117:3-1", "usb:3-1", "nanoKONTROL2"),
		twin("path:0944:0117:3-2", "usb:3-2", "nanoKONTROL2_1"),
		dev("sn:0403:6001:A50285BI", "usb:3-8", fp("usb_serial", "0403:6001:A50285BI")), dev("robot:SCOUT1", "robot:scout"))
	n, err := db.AddNote(ctx, graph.NoteCreate{Target: "jdxi", Body: "x"})
	if err != nil {
		t.Fatal(err)
	}
	const jdxi = "device:path:0582:01a9:3-3.2"
	for _, c := range []struct {
		in    string
		kinds []graph.Kind
		want  string
	}{
		{"JDXI", nil, "identity:jdxi"},
		{"Identity:JdXi", []graph.Kind{graph.KindIdentity}, "identity:jdxi"},
		{"USB:3-3.2", nil, jdxi},
		{"alsa:card:JDXi", nil, jdxi},
		{"alsa:card:jdxi", []graph.Kind{graph.KindDevice}, jdxi},
		{"alsa:seq:JD-Xi", nil, jdxi},
		{"pipewire:alsa_card.usb-Roland_JD-Xi-00", nil, jdxi},
		{"pipewire:midi:JD-Xi", nil, jdxi},
		{"DEVICE:PATH:0582:01A9:3-3.2", nil, jdxi},
		{"alsa:card:nanoKONTROL2", nil, "device:path:0944:0117:3-1"},
		{"alsa:card:nanoKONTROL2_1", nil, "device:path:0944:0117:3-2"},
		{"usb:3-7", nil, "device:sn:0403:6001:A50285BI"},
		{"scout", nil, "device:robot:SCOUT1"},
		{"Scout", []graph.Kind{graph.KindIdentity, graph.KindDevice}, "device:robot:SCOUT1"},
		{"ROBOT:scout", nil, "device:robot:SCOUT1"},
		{strings.ToUpper(n.ID), nil, n.ID},
	} {
		got, err := db.ResolveID(ctx, c.in, c.kinds...)
		if err != nil || got != c.want {
			t.Fatalf("ResolveID(%q)=%q, %v; want %q", c.in, got, err, c.want)
		}
	}
	t.Run("ErrAmbiguous", func(t *testing.T) {
		_, err := db.ResolveID(ctx, "alsa:seq:nanoKONTROL2")
		mustCode(t, err, graph.EINVALID)
		for _, want := range []string{"ambiguous", "2 devices", "usb:3-1", "usb:3-2"} {
			if !strings.Contains(err.Error(), want) {
				t.Fatalf("ambiguous ref: %q lacks %q", err, want)
			}
		}
		// the same refusal reaches the device lookups every edge uses
		if _, err := db.FindDeviceByID(ctx, "alsa:seq:nanokontrol2"); graph.ErrorCode(err) != graph.EINVALID {
			t.Fatalf("FindDeviceByID: %v", err)
		}
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		_, err := db.ResolveID(ctx, "alsa:card:Nope")
		mustCode(t, err, graph.ENOTFOUND)
		// a bare robot name is a device: an identity-only lookup does not reach it
		_, err = db.ResolveID(ctx, "scout", graph.KindIdentity)
		mustCode(t, err, graph.ENOTFOUND)
	})
}
