package query_test

import (
	"context"
	"testing"
	"time"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/query"
)

// Device.host and Robot.host name the machine each is attached to (the store's host name).
func TestSchema_Host(t *testing.T) {
	e := newEnv(t, query.Options{})
	e.seed()
	d := e.ok(`{ device(id: "usb:3-3.2"){ ref host } robots { nodes { ref host device { host } } } }`, nil)
	if got := get(d, "device.host"); got != "studio" {
		t.Errorf("device host %v, want studio", got)
	}
	robots := getList(d, "robots.nodes")
	if len(robots) == 0 {
		t.Fatal("no robots")
	}
	for _, r := range robots {
		if get(r, "host") != "studio" || get(r, "device.host") != "studio" {
			t.Errorf("robot %v: want host studio", r)
		}
	}
}

type fakeHosts []graph.FleetHost

func (f fakeHosts) FleetHosts(context.Context) ([]graph.FleetHost, error) { return f, nil }

// hosts lists a fleet's hosts as the fleet gives them (online with their claim, offline
// with only their devices); on one machine it is empty.
func TestSchema_Hosts(t *testing.T) {
	since := time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)
	e := newEnv(t, query.Options{Hosts: fakeHosts{
		{Name: "studio-a", Online: true, Since: since, Version: "v1.4.0", Schema: 4, Devices: 3},
		{Name: "studio-b", Devices: 2},
	}})
	d := e.ok(`{ hosts { name online since version schema devices } }`, nil)
	hs := getList(d, "hosts")
	if len(hs) != 2 {
		t.Fatalf("hosts: %v", hs)
	}
	a, b := hs[0], hs[1]
	if get(a, "name") != "studio-a" || get(a, "online") != true || get(a, "since") != "2026-11-28T09:00:00Z" || get(a, "version") != "v1.4.0" || get(a, "schema") != float64(4) || get(a, "devices") != float64(3) {
		t.Errorf("online host: %v", a)
	}
	if get(b, "name") != "studio-b" || get(b, "online") != false || get(b, "since") != nil || get(b, "version") != nil || get(b, "schema") != nil || get(b, "devices") != float64(2) {
		t.Errorf("offline host: %v", b)
	}
	one := newEnv(t, query.Options{})
	if hs := getList(one.ok(`{ hosts { name } }`, nil), "hosts"); len(hs) != 0 {
		t.Errorf("hosts on one machine: %v", hs)
	}
}
