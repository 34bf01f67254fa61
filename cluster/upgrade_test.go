package cluster

import (
	"strconv"
	"strings"
	"testing"
)

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

// The fleet's hosts: every live claim is online (with its devices, maybe none); a host
// the graph's devices name without a claim is offline; devices without a host (records
// older than hosts) name none.
func TestFleetHosts(t *testing.T) {
	got := fleetHosts([]LiveHost{{Name: "b", Version: "v2", Schema: 4}, {Name: "a", Schema: 4}}, map[string]int{"a": 2, "c": 5, "": 1}, "")
	want := []string{"a online 2", "b online 0", "c offline 5"}
	if len(got) != len(want) {
		t.Fatalf("%+v", got)
	}
	for i, h := range got {
		s := h.Name + " " + okIf(h.Online, "online", "offline") + " " + strconv.Itoa(h.Devices)
		if s != want[i] {
			t.Errorf("host %d: %s, want %s", i, s, want[i])
		}
	}
	// A host whose lease is lost is offline, whoever claims its name meanwhile, and
	// listed even without devices (GraphQL's hosts and doctor's rows alike).
	for lost, want := range map[string][]string{"a": {"a offline 2", "b online 0", "c offline 5"}, "z": {"a online 2", "b online 0", "c offline 5", "z offline 0"}} {
		got := fleetHosts([]LiveHost{{Name: "b", Version: "v2", Schema: 4}, {Name: "a", Schema: 4}}, map[string]int{"a": 2, "c": 5}, lost)
		var hosts []string
		for _, h := range got {
			hosts = append(hosts, h.Name+" "+okIf(h.Online, "online", "offline")+" "+strconv.Itoa(h.Devices))
		}
		if strings.Join(hosts, ", ") != strings.Join(want, ", ") {
			t.Errorf("hosts with %s's lease lost: %v, want %v", lost, hosts, want)
		}
	}
	for in, want := range map[string]string{"http://127.0.0.1:2379": "127.0.0.1:2379", "https://m1.lab:2379/": "m1.lab:2379", "m1:2379": "m1:2379"} {
		if got := hostPort(in); got != want {
			t.Errorf("hostPort(%q) = %q, want %q", in, got, want)
		}
	}
}
