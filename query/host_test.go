package query_test

import (
	"testing"

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
