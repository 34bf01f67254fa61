package cluster

import (
	"strings"
	"testing"

	"github.com/devgraph/devgraph/graph"
)

// ParseStore reads the --store forms and refuses the rest with one line naming the flag.
func TestParseStore(t *testing.T) {
	t.Parallel()
	tg, err := ParseStore("etcd://h1:2379,h2:2379,10.0.0.3:2379/lab/a/")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(tg.Endpoints, " ") != "h1:2379 h2:2379 10.0.0.3:2379" || tg.Prefix != "/lab/a" || tg.TLS != nil {
		t.Fatalf("parsed %+v", tg)
	}
	if tg, _ := ParseStore("etcd://h1:2379"); tg.Prefix != DefaultPrefix {
		t.Fatalf("default prefix %q", tg.Prefix)
	}
	for in, want := range map[string]string{
		"h1:2379":                             "not an etcd URL",
		"http://h1:2379":                      "not an etcd URL",
		"etcd://":                             "an empty endpoint",
		"etcd://h1:2379,,h2:2379":             "an empty endpoint",
		"etcd://h1":                           `endpoint "h1" needs a host and a port`,
		"etcd://:2379":                        `endpoint ":2379" needs a host and a port`,
		"etcd://h1:2379?cacert=ca.pem":        "query parameters are for etcds:// (TLS) only",
		"etcds://h1:2379?ca=ca.pem":           `unknown parameter "ca" (cacert, cert, key)`,
		"etcds://h1:2379?key=k.pem":           "cert and key go together",
		"etcds://h1:2379?cacert=/nope/ca.pem": "TLS: open /nope/ca.pem: no such file or directory",
	} {
		_, err := ParseStore(in)
		if err == nil || graph.ErrorCode(err) != graph.EINVALID || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "write etcd://host:2379") {
			t.Errorf("ParseStore(%q): %v, want EINVALID with %q and the forms", in, err, want)
		}
	}
}

// Names tells a front end's cluster name as one of this target's prefix.
func TestTarget_Names(t *testing.T) {
	t.Parallel()
	tg, _ := ParseStore("etcd://h1:2379/lab")
	for name, want := range map[string]bool{
		"etcd:6e72e0fcc717e728/lab":   true,
		"etcd:6e72e0fcc717e728/lab2":  false,
		"etcd:6e72e0fcc717e728/x/lab": false,
		"etcd:/lab":                   false,
		"etcd:zz/lab":                 false,
		"":                            false,
		"/tmp/studio.db":              false,
	} {
		if got := tg.Names(name); got != want {
			t.Errorf("Names(%q) = %v, want %v", name, got, want)
		}
	}
}
