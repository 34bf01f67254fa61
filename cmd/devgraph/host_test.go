package main

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/devgraph/devgraph/graph"
)

// --host-name (else $DEVGRAPH_HOST_NAME, else the OS host name as a slug) names the host
// whose devices the file records; the file holds the name it was first written with, and
// refuses a write under another, saying which name it holds and how to go on.
func TestHostName(t *testing.T) {
	c := newCLI(t)
	db := filepath.Join(c.home, "h.db")
	c.fail(1, `host name "Studio_A"`, "--db", db, "--host-name", "Studio_A", "identity", "create", "Synth")
	c.ok("--db", db, "--host-name", "studio-a", "identity", "create", "Synth")
	errs := c.fail(1, `belongs to host "studio-a"`, "--db", db, "--host-name", "studio-b", "identity", "create", "Other")
	if !strings.Contains(errs, "--host-name studio-a") {
		t.Errorf("the refusal does not say how to go on: %q", errs)
	}
	c.vars["DEVGRAPH_HOST_NAME"] = "studio-b"
	c.fail(1, `belongs to host "studio-a"`, "--db", db, "identity", "create", "Other")
	c.vars["DEVGRAPH_HOST_NAME"] = "studio-a"
	c.ok("--db", db, "identity", "create", "Other")
	if out := c.ok("--db", db, "identities"); !strings.Contains(out, "identity:other") {
		t.Fatalf("identities:\n%s", out)
	}
}

// Devices show their host: a HOST column in -o wide (only there while every device is on
// one host), a host line in show, a host field in JSON.
func TestHostName_Shown(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	if out := c.ok("--demo", "devices"); strings.Contains(out, "HOST") {
		t.Errorf("one host, narrow table with a HOST column:\n%s", out)
	}
	wide := c.ok("--demo", "devices", "-o", "wide")
	if head, _, _ := strings.Cut(wide, "\n"); !strings.Contains(head, "HOST") || !strings.Contains(wide, "usb:3-3.2      studio ") {
		t.Errorf("wide table without its hosts:\n%s", wide)
	}
	if out := c.ok("--demo", "show", "usb:3-3.2"); !strings.Contains(out, "host") || !strings.Contains(out, "studio") {
		t.Errorf("show without the host:\n%s", out)
	}
	var dev struct {
		Host string `json:"host"`
	}
	c.jsonOf(&dev, "--demo", "show", "usb:3-3.2", "--json")
	if dev.Host != "studio" {
		t.Errorf("device JSON host %q, want studio", dev.Host)
	}
}

// Devices on more than one host (a fleet) get the HOST column in the narrow table too.
func TestDeviceTable_ManyHosts(t *testing.T) {
	devs := []*graph.DeviceView{
		{Device: graph.Device{Ref: "studio-a/usb:3-3.2", Host: "studio-a", Name: "JD-Xi", Source: "usb", Present: true}},
		{Device: graph.Device{Ref: "studio-b/usb:1-2", Host: "studio-b", Name: "KeyStep", Source: "usb", Present: true}},
	}
	var b strings.Builder
	if err := printDeviceTable(&b, devs, false, false, time.Now()); err != nil {
		t.Fatal(err)
	}
	head, rest, _ := strings.Cut(b.String(), "\n")
	if !strings.Contains(head, "HOST") || !strings.Contains(rest, "studio-b/usb:1-2    studio-b") {
		t.Errorf("two hosts, no HOST column:\n%s", b.String())
	}
	b.Reset()
	if err := printDeviceTable(&b, devs[:1], false, false, time.Now()); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "HOST") {
		t.Errorf("one host, narrow table with a HOST column:\n%s", b.String())
	}
}
