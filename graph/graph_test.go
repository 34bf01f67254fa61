package graph_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/devgraph/devgraph/graph"
)

func TestSlugify(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"Roland JD-Xi", "roland-jd-xi"},
		{"  Focusrite Scarlett 2i2 (3rd gen) ", "focusrite-scarlett-2i2-3rd-gen"},
		{"korg_nano.2", "korg_nano.2"},
		{"---", ""},
		{"Ünïcode", "unicode"},
		{"Café Synth", "cafe-synth"},
		{"Straße Œuvre Łódź", "strasse-oeuvre-lodz"},
		{"日本 synth", "synth"},
		{strings.Repeat("a", 100), strings.Repeat("a", 64)},
	} {
		if got := graph.Slugify(tc.in); got != tc.want {
			t.Errorf("Slugify(%q)=%q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestValidateSlug(t *testing.T) {
	t.Parallel()
	for _, ok := range []string{"a", "jdxi", "roland-jd-xi", "a.b_c-1", strings.Repeat("x", 64)} {
		if err := graph.ValidateSlug(ok); err != nil {
			t.Errorf("ValidateSlug(%q) = %v, want nil", ok, err)
		}
	}
	for _, bad := range []string{"", "-a", "A", "a b", strings.Repeat("x", 65), "é"} {
		err := graph.ValidateSlug(bad)
		if got, want := graph.ErrorCode(err), graph.EINVALID; got != want {
			t.Errorf("ValidateSlug(%q) code=%q, want %q", bad, got, want)
		}
	}
}

func TestNormalizeTag(t *testing.T) {
	t.Parallel()
	t.Run("OK", func(t *testing.T) {
		for _, tc := range []struct{ in, want string }{
			{"role:synth", "role:synth"},
			{"  Role:Synth ", "role:synth"},
			{"location:Studio Desk", "location:studio-desk"},
			{"project:live.set_2", "project:live.set_2"},
			{"Role: Synth", "role:synth"},
			{"Location :  Studio   Desk ", "location:studio-desk"},
		} {
			got, err := graph.NormalizeTag(tc.in)
			if err != nil || got != tc.want {
				t.Errorf("NormalizeTag(%q)=%q,%v want %q", tc.in, got, err, tc.want)
			}
		}
	})
	t.Run("ErrInvalid", func(t *testing.T) {
		for _, in := range []string{"", "synth", ":synth", "role:", "role:-x", "r@le:x",
			strings.Repeat("n", 33) + ":x", "role:" + strings.Repeat("v", 65), "role:\xff", "role:a\x00"} {
			_, err := graph.NormalizeTag(in)
			if graph.ErrorCode(err) != graph.EINVALID || graph.ErrorField(err) != "tag" {
				t.Errorf("NormalizeTag(%q) err=%v, want INVALID on field tag", in, err)
			}
		}
	})
}

func TestNormalizeFingerprint(t *testing.T) {
	t.Parallel()
	t.Run("OK", func(t *testing.T) {
		for _, tc := range []struct {
			kind      graph.FingerprintKind
			in, want  string
			wantClass graph.Class
		}{
			{graph.FPUSBID, "0582:01A9", "0582:01a9", graph.ClassModel},
			{graph.FPUSBSerial, "1235:8210:Y8XXK2V0A1B2C3", "1235:8210:Y8XXK2V0A1B2C3", graph.ClassUnit},
			{graph.FPMAC, "00-1B-44-11-3A-B7", "00:1b:44:11:3a:b7", graph.ClassUnit},
			{graph.FPUSBPath, "3-3.1.2", "3-3.1.2", graph.ClassPlace},
			{graph.FPALSACardID, " JDXi ", "JDXi", graph.ClassName},
			{graph.FPRobotSerial, "SIM-SCOUT-0001", "SIM-SCOUT-0001", graph.ClassUnit},
		} {
			fp, err := graph.NormalizeFingerprint(tc.kind, tc.in)
			if err != nil || fp.Value != tc.want || fp.Class() != tc.wantClass {
				t.Errorf("NormalizeFingerprint(%s,%q)=%+v,%v want %q class %s", tc.kind, tc.in, fp, err, tc.want, tc.wantClass)
			}
		}
	})
	t.Run("ErrInvalid", func(t *testing.T) {
		for _, tc := range []struct {
			kind graph.FingerprintKind
			in   string
		}{
			{"card_number", "1"}, {graph.FPUSBID, "582:1a9"}, {graph.FPUSBID, "zzzz:0000"},
			{graph.FPUSBSerial, "0582:01a9"}, {graph.FPMAC, "00:11"}, {graph.FPUSBPath, "usb3"},
			{graph.FPALSACardID, ""}, {graph.FPALSACardID, "a\x00b"}, {graph.FPMIDIClient, "\xff"},
		} {
			if _, err := graph.NormalizeFingerprint(tc.kind, tc.in); graph.ErrorCode(err) != graph.EINVALID {
				t.Errorf("NormalizeFingerprint(%s,%q) err=%v, want INVALID", tc.kind, tc.in, err)
			}
		}
	})
	t.Run("Parse", func(t *testing.T) {
		fp, err := graph.ParseFingerprint("usb_id=0582:01A9")
		if err != nil || fp != (graph.Fingerprint{Kind: graph.FPUSBID, Value: "0582:01a9"}) {
			t.Fatalf("ParseFingerprint=%+v,%v", fp, err)
		}
		if _, err := graph.ParseFingerprint("usb_id"); !strings.Contains(graph.ErrorMessage(err), "kind=value") {
			t.Fatalf("ParseFingerprint without '=': %v", err)
		}
	})
}

func TestEscapeHardwareText(t *testing.T) {
	t.Parallel()
	if got, want := graph.EscapeHardwareText([]byte("Scarlett 2i2 USB")), "Scarlett 2i2 USB"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got, want := graph.EscapeHardwareText([]byte("Ger\xe4t\x00")), `Ger\xe4t\x00`; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got, want := graph.EscapeHardwareText([]byte("Gerät")), "Gerät"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestErrors(t *testing.T) {
	t.Parallel()
	err := fmt.Errorf("bind: %w", graph.Errorf(graph.ENOTFOUND, "unknown identity %q; did you mean identity:jdxi?", "jdx1"))
	if got, want := graph.ErrorCode(err), graph.ENOTFOUND; got != want {
		t.Fatalf("code=%q, want %q", got, want)
	}
	if got := graph.ErrorMessage(err); !strings.Contains(got, "did you mean identity:jdxi") {
		t.Fatalf("message=%q", got)
	}
	raw := errors.New("bolt: page 12 corrupt")
	if graph.ErrorCode(raw) != graph.EINTERNAL || strings.Contains(graph.ErrorMessage(raw), "bolt") {
		t.Fatalf("internal errors must not leak: %q", graph.ErrorMessage(raw))
	}
	if graph.ErrorCode(nil) != "" || graph.ErrorMessage(nil) != "" {
		t.Fatal("nil error must map to empty code and message")
	}
}

func TestValidateText(t *testing.T) {
	t.Parallel()
	if err := graph.ValidateText("name", "JD-Xi", 1, graph.MaxNameLen); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"", "a\x00", "\xc3\x28", strings.Repeat("n", graph.MaxNameLen+1)} {
		err := graph.ValidateText("name", bad, 1, graph.MaxNameLen)
		if graph.ErrorCode(err) != graph.EINVALID || graph.ErrorField(err) != "name" {
			t.Errorf("ValidateText(%q)=%v, want INVALID naming name", bad, err)
		}
	}
}

func TestIDs(t *testing.T) {
	t.Parallel()
	k, local, ok := graph.SplitID("device:sn:1235:8210:ABC")
	if !ok || k != graph.KindDevice || local != "sn:1235:8210:ABC" {
		t.Fatalf("SplitID=%q %q %v", k, local, ok)
	}
	if _, _, ok := graph.SplitID("jdxi"); ok {
		t.Fatal("bare slug must not split")
	}
	if !graph.IsRef("usb:3-3.2") || !graph.IsRef("alsa:card:PCH") || graph.IsRef("identity:x") || graph.IsRef("usb:") {
		t.Fatal("IsRef misclassifies")
	}
	if got := graph.ClampFirst(0); got != graph.DefaultPageSize {
		t.Fatalf("ClampFirst(0)=%d", got)
	}
	if got := graph.ClampFirst(1 << 30); got != graph.MaxPageSize {
		t.Fatalf("ClampFirst(huge)=%d", got)
	}
}

func TestValidateCoordinate(t *testing.T) {
	t.Parallel()
	nan := 0.0
	nan = nan / nan
	for _, v := range []float64{nan, 1e300, -2e4} {
		if graph.ErrorCode(graph.ValidateCoordinate("x", v)) != graph.EINVALID {
			t.Errorf("ValidateCoordinate(%g) accepted", v)
		}
	}
	if err := graph.ValidateCoordinate("x", 3.5); err != nil {
		t.Fatal(err)
	}
}
