//go:build slow

package main

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// demoStudio sets up the demo rig with an identity, tags, a long note and a cable, so
// every table has wide cells to fit.
func demoStudio(t *testing.T) *cliEnv {
	t.Helper()
	c := newCLI(t)
	c.ok("--demo", "bind", "usb:3-3.2", "--new", "Roland JD-Xi")
	c.ok("--demo", "bind", "usb:3-4.1", "--new", "Arturia BeatStep")
	c.ok("--demo", "tag", "roland-jd-xi", "+role:synth", "+location:desk-left", "+manufacturer:roland")
	c.ok("--demo", "note", "add", "roland-jd-xi", "The JD-Xi drops MIDI clock when the USB hub it hangs off is also charging the phone; keep it on the rear port.")
	c.ok("--demo", "relate", "arturia-beatstep", "cable", "roland-jd-xi", "--from-port", "MIDI OUT", "--to-port", "MIDI IN", "--attr", "kind=midi-din", "--attr", "colour=black")
	return c
}

// tableVerbs are every verb that prints a table (or a traversal), as run on demoStudio.
var tableVerbs = [][]string{
	{"devices"}, {"devices", "--all"}, {"unbound"}, {"identities"}, {"show", "roland-jd-xi"},
	{"show", "usb:3-3.2"}, {"show", "usb:3-6"}, {"show", "client:alsa:Bitwig Studio"}, {"tags"},
	{"notes", "roland-jd-xi"}, {"changelog"}, {"changelog", "verify"}, {"relations", "roland-jd-xi"},
	{"relations", "usb:3-3.2"}, {"relations", "--types"}, {"trace", "arturia-beatstep"},
	{"path", "arturia-beatstep", "usb:usb3"}, {"doctor"},
}

// TestTables: on an 80-column terminal no line of any table verb is longer, while in a
// pipe lines stay whole (longer than 80 here); goldens for tables at 80 columns and with
// -o wide; --json the same bytes on a terminal as in a pipe.
func TestTables(t *testing.T) {
	c := demoStudio(t)
	for _, args := range tableVerbs {
		args = append([]string{"--demo"}, args...)
		c.cols = 80
		out := c.ok(args...)
		for _, l := range strings.Split(out, "\n") {
			if n := utf8.RuneCountInString(l); n > 80 {
				t.Errorf("devgraph %s at 80 columns: a line of %d:\n%s", strings.Join(args, " "), n, l)
			}
		}
	}
	c.cols = 0
	for _, args := range [][]string{{"unbound"}, {"relations", "roland-jd-xi"}, {"trace", "arturia-beatstep"}} {
		longest := 0
		for _, l := range strings.Split(c.ok(append([]string{"--demo"}, args...)...), "\n") {
			longest = max(longest, utf8.RuneCountInString(l))
		}
		if longest <= 80 {
			t.Errorf("devgraph %s in a pipe: no line longer than 80; the data does not exercise fitting", strings.Join(args, " "))
		}
	}
	for _, g := range []struct {
		name string
		cols int
		args []string
	}{
		{"fit-devices-80", 80, []string{"devices"}},
		{"fit-unbound-80", 80, []string{"unbound"}},
		{"fit-unbound-wide", 80, []string{"unbound", "-o", "wide"}},
		{"fit-devices-wide", 80, []string{"devices", "-o", "wide"}},
		{"fit-identities-80", 80, []string{"identities"}},
		{"fit-trace-80", 80, []string{"trace", "arturia-beatstep"}},
		{"fit-path-80", 80, []string{"path", "arturia-beatstep", "usb:usb3"}},
	} {
		c.cols = g.cols
		golden(t, g.name, c.ok(append([]string{"--demo"}, g.args...)...))
	}
	// -o wide is the piped table, whatever the terminal
	c.cols = 0
	pipe := c.ok("--demo", "devices", "-o", "wide")
	c.cols = 80
	if wide := c.ok("--demo", "devices", "-o", "wide"); wide != pipe {
		t.Errorf("devices -o wide on a terminal differs from the piped table:\n%s\nvs\n%s", wide, pipe)
	}
	// --json is the same bytes as -o json, on a terminal or not
	for _, args := range [][]string{{"devices"}, {"unbound"}, {"identities"}, {"tags"}, {"relations", "roland-jd-xi"}} {
		args = append([]string{"--demo"}, args...)
		c.cols = 0
		want := c.ok(append(args, "--json")...)
		c.cols = 80
		for _, form := range [][]string{{"--json"}, {"-o", "json"}} {
			if got := c.ok(append(args, form...)...); got != want {
				t.Errorf("devgraph %s %s on a terminal differs from --json in a pipe", strings.Join(args, " "), strings.Join(form, " "))
			}
		}
	}
}
