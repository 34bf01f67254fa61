package graph

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestValidateMessage(t *testing.T) {
	for name, tc := range map[string]struct{ msg, want string }{
		"Empty":    {"", ""},
		"AtLimit":  {strings.Repeat("x", MaxMsgLen), ""},
		"TwoLines": {"first\nsecond", ""},
		"RawByte":  {"\xff", "message is not valid UTF-8; send text as UTF-8"},
		"NUL":      {"a\x00", "message contains a NUL byte; remove it"},
		"TooLong":  {strings.Repeat("x", MaxMsgLen+1), "message is 1025 bytes; the limit is 1024"},
		// Over the limit and invalid: the cheap check answers.
		"TooLongInvalid": {strings.Repeat("\xff", 4096), "message is 4096 bytes; the limit is 1024"},
	} {
		t.Run(name, func(t *testing.T) {
			err := ValidateMessage(tc.msg)
			if got := ErrorMessage(err); got != tc.want {
				t.Fatalf("err=%q, want %q", got, tc.want)
			}
			if err != nil && ErrorField(err) != "message" {
				t.Fatalf("field=%q, want message", ErrorField(err))
			}
		})
	}
}

func TestNormalizeTagOps(t *testing.T) {
	list := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprintf("bulk:%d", i)
		}
		return out
	}
	t.Run("OK", func(t *testing.T) {
		adds, rems, err := NormalizeTagOps([]string{"Role: Synth", "location:desk", "ROLE:synth", "role:synth"}, []string{"status:ok", "Status:OK"})
		if err != nil {
			t.Fatal(err)
		}
		if got, want := strings.Join(adds, " "), "role:synth location:desk"; got != want {
			t.Fatalf("adds=%q, want %q (order kept, duplicates dropped)", got, want)
		}
		if got, want := strings.Join(rems, " "), "status:ok"; got != want {
			t.Fatalf("removes=%q, want %q", got, want)
		}
	})
	t.Run("AtTheCaps", func(t *testing.T) {
		if _, _, err := NormalizeTagOps(list(MaxTagsPerCall), []string{"x:y"}); err != nil {
			t.Fatal(err)
		}
		if _, _, err := NormalizeTagOps(nil, list(MaxTagsPerCall)); err != nil {
			t.Fatal(err)
		}
	})
	for name, tc := range map[string]struct {
		add, remove       []string
		code, field, want string
	}{
		"Add33":      {list(33), nil, ELIMIT, "add", "add has 33 tags; the limit is 32 per call: split the change into several calls"},
		"Remove33":   {nil, list(33), ELIMIT, "remove", "remove has 33 tags; the limit is 32 per call: split the change into several calls"},
		"Add50000":   {list(50000), nil, ELIMIT, "add", "add has 50000 tags; the limit is 32 per call"},
		"Malformed":  {[]string{"synth"}, nil, EINVALID, "tag", `tag "synth": want namespace:value`},
		"BothWays":   {[]string{"role:synth"}, []string{"ROLE:synth"}, EINVALID, "tags", "tag role:synth is both added and removed"},
		"RawByteTag": {[]string{"role:\xff"}, nil, EINVALID, "tag", "tag is not valid UTF-8"},
	} {
		t.Run(name, func(t *testing.T) {
			_, _, err := NormalizeTagOps(tc.add, tc.remove)
			if ErrorCode(err) != tc.code || ErrorField(err) != tc.field || !strings.Contains(ErrorMessage(err), tc.want) {
				t.Fatalf("err=%v (code %s, field %q), want %s %q %q", err, ErrorCode(err), ErrorField(err), tc.code, tc.field, tc.want)
			}
		})
	}
}

// BenchmarkNormalizeTagOps shows de-duplication linear: at the cap, and the 50,000-tag
// call of defect 4 (refused by count before any tag is read).
func BenchmarkNormalizeTagOps(b *testing.B) {
	for _, n := range []int{MaxTagsPerCall, 50000} {
		tags := make([]string, n)
		for i := range tags {
			tags[i] = fmt.Sprintf("bulk:t%06d", i%8)
		}
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for b.Loop() {
				NormalizeTagOps(tags, tags[:min(n, MaxTagsPerCall)/2])
			}
		})
	}
}

func TestNormalizeHints(t *testing.T) {
	fps := make([]Fingerprint, MaxHintsPerCall+1)
	for i := range fps {
		fps[i] = Fingerprint{Kind: FPUSBSerial, Value: fmt.Sprintf("0582:01a9:SN%d", i)}
	}
	if _, err := NormalizeHints(fps[:MaxHintsPerCall]); err != nil {
		t.Fatal(err)
	}
	_, err := NormalizeHints(fps)
	if got, want := ErrorMessage(err), "hints has 33 hints; the limit is 32 per call"; !strings.Contains(got, want) || ErrorField(err) != "hints" || ErrorCode(err) != ELIMIT {
		t.Fatalf("err=%q, want %q", got, want)
	}
	_, err = NormalizeHints([]Fingerprint{{Kind: FPUSBID, Value: "0582:01A9"}, {Kind: FPUSBID, Value: "0582:01a9"}})
	if got, want := ErrorMessage(err), "hint usb_id=0582:01a9 is given twice"; !strings.Contains(got, want) {
		t.Fatalf("err=%q, want %q", got, want)
	}
}

func TestNormalizeMatchFingerprints(t *testing.T) {
	fps := make([]Fingerprint, MaxFingerprintsPerMatch+1)
	for i := range fps {
		fps[i] = Fingerprint{Kind: FPUSBSerial, Value: fmt.Sprintf("0582:01a9:SN%d", i)}
	}
	if _, err := NormalizeMatchFingerprints(fps[:MaxFingerprintsPerMatch]); err != nil {
		t.Fatal(err)
	}
	_, err := NormalizeMatchFingerprints(fps)
	if got, want := ErrorMessage(err), "fingerprints has 65 fingerprints; the limit is 64 per match"; !strings.Contains(got, want) || ErrorField(err) != "fingerprints" {
		t.Fatalf("err=%q, want %q", got, want)
	}
	if _, err := NormalizeMatchFingerprints(nil); ErrorField(err) != "fingerprints" {
		t.Fatalf("none: err=%v", err)
	}
	got, err := NormalizeMatchFingerprints([]Fingerprint{{Kind: FPUSBID, Value: "0582:01A9"}, {Kind: FPUSBID, Value: "0582:01a9"}})
	if err != nil || len(got) != 1 {
		t.Fatalf("repeated fingerprint: %v %v, want it once", got, err)
	}
}

func TestValidateGoal(t *testing.T) {
	for name, tc := range map[string]struct {
		g           Goal
		field, want string
	}{
		"OK":         {Goal{X: 1, Y: -2, TimeoutS: 30}, "", ""},
		"NaNX":       {Goal{X: math.NaN()}, "x", "x is not a finite number"},
		"InfY":       {Goal{Y: math.Inf(-1)}, "y", "y is not a finite number"},
		"FarX":       {Goal{X: 2e4}, "x", "x=20000 is out of range"},
		"NaNTimeout": {Goal{TimeoutS: math.NaN()}, "timeout_s", "timeout_s is not a finite number"},
	} {
		t.Run(name, func(t *testing.T) {
			err := ValidateGoal(tc.g)
			if ErrorField(err) != tc.field || !strings.Contains(ErrorMessage(err), tc.want) {
				t.Fatalf("err=%v, want field %q %q", err, tc.field, tc.want)
			}
		})
	}
}

func TestClipMessage(t *testing.T) {
	long := strings.Repeat("é", MaxMsgLen) // 2 bytes a rune
	got := ClipMessage("auto-bind: " + long)
	if err := ValidateMessage(got); err != nil {
		t.Fatalf("clipped message refused: %v", err)
	}
	if !utf8.ValidString(got) || !strings.HasSuffix(got, "…") {
		t.Fatalf("clipped=%q…", got[len(got)-10:])
	}
	if got := ClipMessage("short"); got != "short" {
		t.Fatalf("short=%q", got)
	}
}
