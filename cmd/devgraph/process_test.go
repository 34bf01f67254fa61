package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/internal/startgc"
	"github.com/devgraph/devgraph/remote"
	"github.com/devgraph/devgraph/store"
)

// binary is the devgraph binary built once for the process tests.
var binary string

// testHost is the host name every test's CLI runs and files are written under.
const testHost = "studio"

func TestMain(m *testing.M) {
	startgc.Release() // the tests run with the collector as it is
	flag := false
	for _, a := range os.Args[1:] {
		flag = flag || strings.HasPrefix(a, "-test.run") && strings.Contains(a, "Unit")
	}
	dir, err := os.MkdirTemp("", "devgraph-bin")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "devgraph")
	// Every test, in-process (newCLI) or a child process, names this machine "studio":
	// files the one writes the other opens, and tables read the same on every machine.
	os.Setenv("DEVGRAPH_HOST_NAME", testHost)
	if !flag {
		cmd := exec.Command("go", "build", "-o", binary, ".")
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			fmt.Fprintln(os.Stderr, "build devgraph:", err)
			os.RemoveAll(dir)
			os.Exit(1)
		}
	}
	code := m.Run()
	os.RemoveAll(dir)
	if seedDir != "" {
		os.RemoveAll(seedDir)
	}
	os.Exit(code)
}

// procEnv is the environment of the child processes: a home and runtime dir of their own.
func procEnv(t *testing.T) []string {
	t.Helper()
	home := t.TempDir()
	rt, err := os.MkdirTemp("", "dgrt")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(rt) })
	return append(os.Environ(), "HOME="+home, "XDG_DATA_HOME="+filepath.Join(home, "data"),
		"XDG_CACHE_HOME="+filepath.Join(home, "cache"), "XDG_RUNTIME_DIR="+rt, "DEVGRAPH_DB=")
}

// runBin runs the binary to completion.
func runBin(t *testing.T, env []string, args ...string) (string, string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Env = env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatalf("devgraph %s: %v", strings.Join(args, " "), err)
		}
		code = ee.ExitCode()
	}
	return out.String(), errb.String(), code
}

func binOK(t *testing.T, env []string, args ...string) string {
	t.Helper()
	out, errs, code := runBin(t, env, args...)
	if code != 0 {
		t.Fatalf("devgraph %s: exit %d\n%s%s", strings.Join(args, " "), code, out, errs)
	}
	return out
}

// TestProcess_HeldDatabase: a second process opening a database another holds (with no
// server socket to go through) gets the one-line "in use" error quickly, never a hang.
func TestProcess_HeldDatabase(t *testing.T) {
	t.Parallel()
	env := procEnv(t)
	db := filepath.Join(t.TempDir(), "held.db")
	st, err := store.Open(db, store.Options{Host: testHost, NoBackup: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	start := time.Now()
	out, errs, code := runBin(t, env, "identities", "--db", db)
	took := time.Since(start)
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s%s", code, out, errs)
	}
	if !strings.Contains(errs, "in use by another devgraph process") || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
		t.Errorf("stderr %q, want one line saying the database is in use", errs)
	}
	t.Logf("held database refused after %s: %s", took.Round(time.Millisecond), strings.TrimSpace(errs))
	if took > 10*time.Second {
		t.Errorf("refusing took %s; the lock wait is one second", took)
	}
}

// child is a running `devgraph serve`.
type child struct {
	t      *testing.T
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout *bufio.Reader
	mu     sync.Mutex
	stderr bytes.Buffer
	lines  chan string
	done   chan error
}

func startServe(t *testing.T, env []string, args ...string) *child {
	t.Helper()
	c := &child{t: t, cmd: exec.Command(binary, append([]string{"serve"}, args...)...), lines: make(chan string, 100), done: make(chan error, 1)}
	c.cmd.Env = env
	var err error
	if c.stdin, err = c.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	out, err := c.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	c.stdout = bufio.NewReader(out)
	errp, err := c.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(errp)
		for sc.Scan() {
			c.mu.Lock()
			c.stderr.WriteString(sc.Text() + "\n")
			c.mu.Unlock()
			select {
			case c.lines <- sc.Text():
			default:
			}
		}
		c.done <- c.cmd.Wait()
	}()
	t.Cleanup(func() {
		// Not c.cmd.ProcessState: the goroutine above writes it in Wait.
		select {
		case err := <-c.done:
			c.done <- err
		default:
			c.cmd.Process.Kill()
		}
	})
	return c
}

func (c *child) log() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stderr.String()
}

// waitLine waits for a stderr line starting with prefix and returns it.
func (c *child) waitLine(prefix string) string {
	c.t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		select {
		case l := <-c.lines:
			if strings.HasPrefix(l, prefix) {
				return l
			}
		case err := <-c.done:
			c.done <- err
			c.t.Fatalf("serve exited (%v) before printing %q:\n%s", err, prefix, c.log())
		case <-timeout:
			c.t.Fatalf("serve printed no %q line:\n%s", prefix, c.log())
		}
	}
}

// wait waits for the process to end and returns its error.
func (c *child) wait() error {
	c.t.Helper()
	select {
	case err := <-c.done:
		c.done <- err
		return err
	case <-time.After(20 * time.Second):
		c.t.Fatalf("serve did not end:\n%s", c.log())
		return nil
	}
}

// rpc sends one JSON-RPC message on the child's stdin.
func (c *child) send(msg string) {
	c.t.Helper()
	if _, err := io.WriteString(c.stdin, msg+"\n"); err != nil {
		c.t.Fatalf("write to serve: %v", err)
	}
}

// reply reads stdout lines until the response with id arrives.
func (c *child) reply(id int) map[string]any {
	c.t.Helper()
	type res struct {
		m   map[string]any
		err error
	}
	ch := make(chan res, 1)
	go func() {
		for {
			line, err := c.stdout.ReadString('\n')
			if err != nil {
				ch <- res{nil, err}
				return
			}
			var m map[string]any
			if json.Unmarshal([]byte(line), &m) != nil {
				ch <- res{nil, fmt.Errorf("stdout carried a non-JSON line: %q", line)}
				return
			}
			if v, ok := m["id"].(float64); ok && int(v) == id {
				ch <- res{m, nil}
				return
			}
		}
	}()
	select {
	case r := <-ch:
		if r.err != nil {
			c.t.Fatalf("reading reply %d: %v\n%s", id, r.err, c.log())
		}
		return r.m
	case <-time.After(30 * time.Second):
		c.t.Fatalf("no reply %d:\n%s", id, c.log())
		return nil
	}
}

// TestProcess_ServeBeside is the GraphQL issue's "CLI beside a server" proof: a server
// child holds a temp database, once stdio-only and once with --http; the CLI's bind, tag,
// note and changelog go through its socket; a second serve relays an MCP session to it;
// everything stops; the file, opened directly, holds all of it.
func TestProcess_ServeBeside(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"stdio", "http"} {
		t.Run(mode, func(t *testing.T) {
			env := procEnv(t)
			r := newTestRig(t)
			db := filepath.Join(t.TempDir(), "beside.db")
			args := append([]string{"--db", db, "--sim-robot", "scout@1,1", "--poll", "200ms"}, r.flags()...)
			if mode == "http" {
				args = append(args, "--http", "127.0.0.1:0")
			}
			srv := startServe(t, env, args...)
			sock := strings.TrimPrefix(srv.waitLine("socket: "), "socket: ")
			graphiql := ""
			if mode == "http" {
				graphiql = strings.TrimPrefix(srv.waitLine("GraphiQL: "), "GraphiQL: ")
				if l := srv.waitLine("MCP: "); !strings.HasSuffix(l, "/mcp") {
					t.Errorf("MCP line %q", l)
				}
			}
			if fi, err := os.Stat(sock); err != nil || fi.Mode().Perm() != 0o600 {
				t.Fatalf("socket %s: %v", sock, err)
			}

			cli := func(a ...string) string { return binOK(t, env, append(a, "--db", db)...) }
			out := cli("bind", "usb:3-3.2", "--new", "Roland JD-Xi", "-m", "beside the server")
			if !strings.HasPrefix(out, "bound usb:3-3.2 to identity:roland-jd-xi") {
				t.Errorf("bind: %q", out)
			}
			cli("tag", "roland-jd-xi", "+role:synth", "+location:studio")
			cli("note", "add", "roland-jd-xi", "played through the server")
			var evs eventList
			if err := json.Unmarshal([]byte(cli("changelog", "--json", "--actor", "cli:*")), &evs); err != nil {
				t.Fatal(err)
			}
			seen := map[string]bool{}
			for _, e := range evs.Items {
				seen[e.Action] = true
			}
			for _, a := range []string{graph.ActDeviceBind, graph.ActTagAdd, graph.ActNoteAdd, graph.ActIdentityCreate} {
				if !seen[a] {
					t.Errorf("changelog through the server lacks %s: %v", a, seen)
				}
			}
			if out := cli("robot", "status"); !strings.Contains(out, "robot:scout") {
				t.Errorf("robot status through the server: %q", out)
			}
			cli("robot", "arm", "scout")
			nout, nerr, ncode := runBin(t, env, "robot", "navigate", "scout", "3", "1", "--timeout", "20s", "--db", db)
			if ncode != 0 || !strings.HasPrefix(nout, "arrived") {
				t.Errorf("robot navigate: exit %d %q %q", ncode, nout, nerr)
			}
			if !strings.Contains(nerr, "m to go") {
				t.Errorf("robot navigate showed no progress lines: %q", nerr)
			}
			if out := cli("robot", "parameters", "scout", "--set", "max_speed=0.5"); !strings.Contains(out, "0.5 m/s") {
				t.Errorf("robot parameters --set: %q", out)
			}
			if _, errs, code := runBin(t, env, "robot", "parameters", "scout", "--set", "max_speed=99", "--db", db); code != 1 || !strings.Contains(errs, "max_speed") {
				t.Errorf("robot parameters out of range: exit %d %q", code, errs)
			}
			var q struct {
				Data struct {
					Identities struct {
						TotalCount int `json:"totalCount"`
					} `json:"identities"`
				} `json:"data"`
			}
			if err := json.Unmarshal([]byte(cli("query", "{ identities { totalCount } }")), &q); err != nil || q.Data.Identities.TotalCount != 1 {
				t.Errorf("query through the socket: %+v %v", q, err)
			}
			if _, errs, code := runBin(t, env, "compact", "--db", db); code != 1 || !strings.Contains(errs, "stop the devgraph server") {
				t.Errorf("compact beside a server: exit %d %q", code, errs)
			}
			if mode == "http" {
				body := `{"query":"mutation { tag(target: \"identity:roland-jd-xi\", add: [\"status:ok\"]) { tags { id } } }"}`
				resp, err := http.Post(graphiql, "application/json", strings.NewReader(body))
				if err != nil {
					t.Fatal(err)
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), "status:ok") {
					t.Errorf("HTTP GraphQL mutation: %s %s", resp.Status, b)
				}
				resp, err = http.Post(graphiql, "application/json", strings.NewReader(`{"query":"{ identity(id: \"roland-jd-xi\") { name } }"}`))
				if err != nil {
					t.Fatal(err)
				}
				b, _ = io.ReadAll(resp.Body)
				resp.Body.Close()
				if !strings.Contains(string(b), "Roland JD-Xi") {
					t.Errorf("HTTP GraphQL read: %s %s", resp.Status, b)
				}
			}

			if mode == "http" {
				// A second serve with --http on the held database refuses to serve HTTP:
				// its callers' actors (http:<token>, http:local) are the holder's to
				// record, and the socket accepts no http: actor from a caller.
				_, errs, code := runBin(t, env, "serve", "--db", db, "--http", "127.0.0.1:0")
				if code != 1 || !strings.Contains(errs, "cannot serve --http here: the server holding "+db) || !strings.Contains(errs, "start it with --http") {
					t.Errorf("second serve --http: exit %d\n%s", code, errs)
				}
				if !remote.Answering(sock) {
					t.Fatalf("the refused second serve took the first one's socket away")
				}
			}

			// A second serve on the held database relays its stdio MCP to the first.
			relay := startServe(t, env, append([]string{"--db", db}, r.flags()...)...)
			relay.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"relay-test","version":"1.0"}}}`)
			init := relay.reply(1)
			if res, _ := init["result"].(map[string]any); res == nil || res["serverInfo"] == nil {
				t.Fatalf("initialize through the relay: %v", init)
			}
			relay.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
			relay.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"graph_note","arguments":{"target":"identity:roland-jd-xi","body":"noted through the relay"}}}`)
			call := relay.reply(2)
			if res, _ := call["result"].(map[string]any); res == nil || res["isError"] == true {
				t.Fatalf("graph_note through the relay: %v", call)
			}
			if !strings.Contains(relay.log(), "relays to the server at "+sock) {
				t.Errorf("the second serve did not say it relays:\n%s", relay.log())
			}
			relay.stdin.Close()
			if err := relay.wait(); err != nil {
				t.Errorf("relay ended with %v:\n%s", err, relay.log())
			}

			// Stop the server: EOF on stdin (stdio) or SIGTERM (http).
			if mode == "stdio" {
				srv.stdin.Close()
			} else {
				srv.cmd.Process.Signal(syscall.SIGTERM)
			}
			if err := srv.wait(); err != nil {
				t.Errorf("serve ended with %v:\n%s", err, srv.log())
			}
			if _, err := os.Stat(sock); !os.IsNotExist(err) {
				t.Errorf("the socket is still there after shutdown: %v", err)
			}
			if remote.Answering(sock) {
				t.Errorf("something still answers on %s", sock)
			}

			// Open the file directly and find all of it.
			st, err := store.Open(db, store.Options{Host: testHost, Timeout: time.Second})
			if err != nil {
				t.Fatalf("open after shutdown: %v", err)
			}
			defer st.Close()
			ctx := context.Background()
			id, err := st.FindIdentityByID(ctx, "roland-jd-xi", graph.IdentityParts{Notes: true, Devices: true})
			if err != nil {
				t.Fatal(err)
			}
			if !contains(id.Tags, "role:synth") || len(id.Notes) != 2 || len(id.Devices) != 1 {
				t.Errorf("identity on disk: tags %v, %d notes, %d devices", id.Tags, len(id.Notes), len(id.Devices))
			}
			all, _, err := st.FindEvents(ctx, graph.EventFilter{First: 500})
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]bool{}
			for _, e := range all {
				actor := e.Actor
				if strings.HasPrefix(actor, "cli:") {
					actor = "cli:"
				}
				got[actor+" "+e.Action] = true
				if e.Action == graph.ActDeviceBind && e.Message != "beside the server" {
					t.Errorf("bind event message %q", e.Message)
				}
			}
			for _, want := range []string{"cli: device.bind", "cli: tag.add", "cli: note.add", "mcp:relay-test note.add",
				"cli: robot.arm", "cli: robot.navigate.start", "cli: robot.navigate.end", "cli: robot.parameters"} {
				if !got[want] {
					t.Errorf("the file lacks %q: %v", want, got)
				}
			}
			if mode == "http" && !got["http:local tag.add"] {
				t.Errorf("the file lacks the HTTP mutation's tag.add by http:local: %v", got)
			}
			if rep, err := st.VerifyChangelog(ctx); err != nil || !rep.OK {
				t.Errorf("verify after shutdown: %+v %v", rep, err)
			}
		})
	}
}
