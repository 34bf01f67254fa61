package cluster

import (
	"crypto/tls"
	"fmt"
	"net"
	"net/url"
	"strings"

	"github.com/devgraph/devgraph/graph"

	"go.etcd.io/etcd/client/pkg/v3/transport"
)

// Target is where a fleet's graph lives: etcd endpoints, the key prefix under which
// devgraph keeps everything, and TLS for etcds://.
type Target struct {
	Endpoints []string // host:port
	Prefix    string   // "/devgraph" unless the URL names one; never ends in "/"
	TLS       *tls.Config
	url       string
}

// DefaultPrefix is the key prefix of a --store URL that names none.
const DefaultPrefix = "/devgraph"

// ParseStore reads a --store value: etcd://h1:2379,h2:2379,h3:2379[/prefix], or
// etcds://…?cacert=FILE&cert=FILE&key=FILE for TLS.
func ParseStore(s string) (*Target, error) {
	bad := func(format string, args ...any) error {
		return graph.FieldErrorf(graph.EINVALID, "store", "--store %q: "+format+"; write etcd://host:2379,host2:2379[/prefix] or etcds://…?cacert=ca.pem&cert=client.pem&key=client-key.pem", append([]any{s}, args...)...)
	}
	scheme, rest, ok := strings.Cut(s, "://")
	if !ok || (scheme != "etcd" && scheme != "etcds") {
		return nil, bad("not an etcd URL")
	}
	// The authority holds a comma-separated list, which net/url does not parse: split it off first.
	auth, tail := rest, ""
	if i := strings.IndexAny(rest, "/?"); i >= 0 {
		auth, tail = rest[:i], rest[i:]
	}
	u, err := url.Parse("x://h" + tail)
	if err != nil {
		return nil, bad("%v", err)
	}
	t := &Target{Prefix: DefaultPrefix, url: s}
	for _, ep := range strings.Split(auth, ",") {
		if ep == "" {
			return nil, bad("an empty endpoint")
		}
		host, port, err := net.SplitHostPort(ep)
		if err != nil || host == "" || port == "" {
			return nil, bad("endpoint %q needs a host and a port (host:2379)", ep)
		}
		t.Endpoints = append(t.Endpoints, ep)
	}
	if p := strings.TrimRight(u.Path, "/"); p != "" {
		if strings.ContainsAny(p, "\x00") || len(p) > 128 {
			return nil, bad("the prefix must be a path of at most 128 bytes")
		}
		t.Prefix = p
	}
	q := u.Query()
	if scheme == "etcd" {
		if len(q) > 0 {
			return nil, bad("query parameters are for etcds:// (TLS) only")
		}
		return t, nil
	}
	for k := range q {
		if k != "cacert" && k != "cert" && k != "key" {
			return nil, bad("unknown parameter %q (cacert, cert, key)", k)
		}
	}
	info := transport.TLSInfo{TrustedCAFile: q.Get("cacert"), CertFile: q.Get("cert"), KeyFile: q.Get("key")}
	if (info.CertFile == "") != (info.KeyFile == "") {
		return nil, bad("cert and key go together")
	}
	cfg, err := info.ClientConfig()
	if err != nil {
		return nil, bad("TLS: %v", err)
	}
	t.TLS = cfg
	return t, nil
}

// String returns the URL as given.
func (t *Target) String() string { return t.url }

// endpointList names the endpoints for messages.
func (t *Target) endpointList() string { return strings.Join(t.Endpoints, ", ") }

func (t *Target) key(parts ...string) string {
	return t.Prefix + "/" + strings.Join(parts, "/")
}

// dataPrefix is where the graph's records live: dataPrefix + bucket + "/" + key.
func (t *Target) dataPrefix() string { return t.Prefix + "/d/" }

func (t *Target) dataKey(bucket, key []byte) string {
	return t.dataPrefix() + string(bucket) + "/" + string(key)
}

// splitDataKey is dataKey's inverse.
func (t *Target) splitDataKey(k []byte) (bucket, key []byte, err error) {
	p := t.dataPrefix()
	if !strings.HasPrefix(string(k), p) {
		return nil, nil, fmt.Errorf("key %q is not under %s", k, p)
	}
	rest := k[len(p):]
	for i, c := range rest {
		if c == '/' {
			return rest[:i], rest[i+1:], nil
		}
	}
	return nil, nil, fmt.Errorf("key %q names no bucket", k)
}

// Names reports whether a front end's cluster name (FrontEnd.Name, a replica's
// ReplicaOf: "etcd:<cluster id><prefix>") is a graph under this target's prefix; which
// cluster the endpoints reach is not asked.
func (t *Target) Names(name string) bool {
	rest, ok := strings.CutPrefix(name, "etcd:")
	if !ok {
		return false
	}
	i := strings.IndexByte(rest, '/')
	if i <= 0 {
		return false
	}
	for _, c := range rest[:i] {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return rest[i:] == t.Prefix
}
