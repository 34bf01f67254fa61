package http_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	devhttp "github.com/devgraph/devgraph/http"
)

// liveness is the generous bound within which the server must drop a stalled client;
// the timeouts under test are a fraction of a second.
const liveness = 20 * time.Second

// TestServer_Timeouts: with short timeouts, a client that stalls in its headers, in its
// body (on /mcp; /graphql's handler sets the same 30 s bound itself), or idles between
// requests is disconnected; an MCP event stream outlives the
// write timeout, even on a kept-alive connection a GraphQL request used first.
func TestServer_Timeouts(t *testing.T) {
	const events = 8
	mcp := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			io.ReadAll(r.Body)
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		for i := 0; i < events; i++ {
			fmt.Fprintf(w, "data: %d\n\n", i)
			w.(http.Flusher).Flush()
			select {
			case <-time.After(250 * time.Millisecond): // the stream lasts 2 s
			case <-r.Context().Done():
				return
			}
		}
	})
	s := &devhttp.Server{Addr: "127.0.0.1:0", Options: devhttp.Options{
		GraphQL: &fakeExec{}, MCP: mcp, Loopback: true,
		Timeouts: devhttp.Timeouts{ReadHeader: 200 * time.Millisecond, Body: 200 * time.Millisecond, Write: 300 * time.Millisecond, Idle: 200 * time.Millisecond},
	}}
	if err := s.Open(); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	addr := strings.TrimPrefix(s.URL(), "http://")
	dial := func(t *testing.T, addr string) net.Conn {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	// dropped reads until the server closes the connection.
	dropped := func(t *testing.T, c net.Conn, what string) {
		t.Helper()
		c.SetReadDeadline(time.Now().Add(liveness))
		_, err := io.Copy(io.Discard, c)
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			t.Fatalf("%s: the server kept the connection for %s", what, liveness)
		}
	}

	t.Run("HalfHeader", func(t *testing.T) {
		c := dial(t, addr)
		io.WriteString(c, "POST /graphql HTTP/1.1\r\nHost: "+addr+"\r\nContent-Ty")
		dropped(t, c, "a client stalled in its headers")
	})
	t.Run("Silent", func(t *testing.T) {
		dropped(t, dial(t, addr), "a client that sent nothing")
	})
	t.Run("SlowMCPBody", func(t *testing.T) {
		c := dial(t, addr)
		io.WriteString(c, "POST /mcp HTTP/1.1\r\nHost: "+addr+"\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"jsonrpc\":")
		dropped(t, c, "an MCP client stalled in its body")
	})
	t.Run("Idle", func(t *testing.T) {
		c := dial(t, addr)
		io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: "+addr+"\r\n\r\n")
		br := bufio.NewReader(c)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("healthz: %s", resp.Status)
		}
		dropped(t, c, "an idle kept-alive connection")
	})
	t.Run("StreamOutlivesWriteTimeout", func(t *testing.T) {
		// A server of its own, whose write timeout (1 s) a stream outlives and whose
		// other timeouts a test slowed by a loaded machine cannot hit: only the write
		// timeout is under test here.
		ls := &devhttp.Server{Addr: "127.0.0.1:0", Options: devhttp.Options{
			GraphQL: &fakeExec{}, MCP: mcp, Loopback: true,
			Timeouts: devhttp.Timeouts{ReadHeader: liveness, Body: liveness, Write: time.Second, Idle: liveness},
		}}
		if err := ls.Open(); err != nil {
			t.Fatal(err)
		}
		defer ls.Close()
		addr := strings.TrimPrefix(ls.URL(), "http://")
		c := dial(t, addr)
		br := bufio.NewReader(c)
		body := `{"query":"{ stats { identities } }"}`
		fmt.Fprintf(c, "POST /graphql HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", addr, len(body), body)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("graphql: %s", resp.Status)
		}
		// The same connection now streams for longer than the write timeout, on GET and
		// on a POST answered as a stream.
		for _, req := range []string{
			"GET /mcp HTTP/1.1\r\nHost: " + addr + "\r\nAccept: text/event-stream\r\n\r\n",
			"POST /mcp HTTP/1.1\r\nHost: " + addr + "\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}",
		} {
			io.WriteString(c, req)
			c.SetReadDeadline(time.Now().Add(liveness))
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatal(err)
			}
			b, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if got := strings.Count(string(b), "data: "); got != events || err != nil {
				t.Fatalf("%s: %d of %d events (%v): %q", strings.Fields(req)[0], got, events, err, b)
			}
		}
	})
}
