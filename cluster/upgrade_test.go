package cluster

import "testing"

// P/schema holds a version, or "N>M" while a migration from N to M is under way;
// anything else is not devgraph's.
func TestParseSchema(t *testing.T) {
	for in, want := range map[string]schemaState{"4": {v: 4}, "3>4": {v: 3, to: 4}, "1>4": {v: 1, to: 4}} {
		got, ok := parseSchema(in)
		if !ok || got != want || got.String() != in {
			t.Errorf("parseSchema(%q) = %+v %v, want %+v", in, got, ok, want)
		}
	}
	for _, in := range []string{"", "x", "0", "-1", "4>3", "4>4", "3>", ">4", "3>x"} {
		if got, ok := parseSchema(in); ok {
			t.Errorf("parseSchema(%q) = %+v, want refused", in, got)
		}
	}
}
