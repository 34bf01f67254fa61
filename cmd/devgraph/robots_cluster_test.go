//go:build cluster

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/internal/etcdtest"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// mcpAgent is a real MCP client over streamable HTTP, keeping the progress it hears.
type mcpAgent struct {
	t  *testing.T
	c  *client.Client
	mu sync.Mutex
	// progress by token
	progress map[string][]map[string]any
}

func newMCPAgent(t *testing.T, ctx context.Context, base, name string) *mcpAgent {
	t.Helper()
	c, err := client.NewStreamableHttpClient(base + "/mcp")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	a := &mcpAgent{t: t, c: c, progress: map[string][]map[string]any{}}
	c.OnNotification(func(n mcp.JSONRPCNotification) {
		if n.Method != "notifications/progress" {
			return
		}
		tok := fmt.Sprint(n.Params.AdditionalFields["progressToken"])
		a.mu.Lock()
		a.progress[tok] = append(a.progress[tok], n.Params.AdditionalFields)
		a.mu.Unlock()
	})
	startClient(t, ctx, c, name)
	return a
}

// tools lists the tools the server offers the agent, sorted.
func (a *mcpAgent) tools(ctx context.Context) []string {
	a.t.Helper()
	list, err := a.c.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		a.t.Fatal(err)
	}
	var names []string
	for _, tool := range list.Tools {
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	return names
}

func (a *mcpAgent) heard(token string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.progress[token])
}

// call calls a tool; token, when not "", asks for progress.
func (a *mcpAgent) call(ctx context.Context, tool string, args map[string]any, token string) (*mcp.CallToolResult, error) {
	req := mcp.CallToolRequest{}
	req.Params.Name = tool
	req.Params.Arguments = args
	if token != "" {
		req.Params.Meta = &mcp.Meta{ProgressToken: token}
	}
	return a.c.CallTool(ctx, req)
}

// ok calls a tool that must succeed and returns its structured result.
func (a *mcpAgent) ok(ctx context.Context, tool string, args map[string]any) map[string]any {
	a.t.Helper()
	res, err := a.call(ctx, tool, args, "")
	if err != nil || res.IsError {
		a.t.Fatalf("%s %v: %v %s", tool, args, err, resultText(res))
	}
	return structuredOf(a.t, res)
}

func resultText(res *mcp.CallToolResult) string {
	if res == nil {
		return ""
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func structuredOf(t *testing.T, res *mcp.CallToolResult) map[string]any {
	t.Helper()
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("structured content %s: %v", b, err)
	}
	return m
}

// robotField is a field of the one robot a result carries (robot, or robots' first).
func robotField(m map[string]any, field string) any {
	r, _ := m["robot"].(map[string]any)
	if rs, ok := m["robots"].([]any); ok && len(rs) == 1 {
		r, _ = rs[0].(map[string]any)
	}
	return r[field]
}

// startClient starts c and initializes it as name (the 2025-11-25 era, which both
// clients here speak).
func startClient(t *testing.T, ctx context.Context, c *client.Client, name string) {
	t.Helper()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = "2025-11-25"
	init.Params.ClientInfo = mcp.Implementation{Name: name, Version: "1"}
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatalf("initialize %s: %v", name, err)
	}
}

// resourceWatcher is a real MCP client over streamable HTTP subscribed to one resource,
// counting the notifications/resources/updated it hears for it.
type resourceWatcher struct {
	mu      sync.Mutex
	updates int
}

func watchResource(t *testing.T, ctx context.Context, base, name, uri string) *resourceWatcher {
	t.Helper()
	//lint:ignore SA1019 the 2025-11-25 era's standalone GET stream is served, so it is tested
	c, err := client.NewStreamableHttpClient(base+"/mcp", transport.WithContinuousListening())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	w := &resourceWatcher{}
	c.OnNotification(func(n mcp.JSONRPCNotification) {
		if n.Method == string(mcp.MethodNotificationResourceUpdated) && n.Params.AdditionalFields["uri"] == uri {
			w.mu.Lock()
			w.updates++
			w.mu.Unlock()
		}
	})
	startClient(t, ctx, c, name)
	//lint:ignore SA1019 resources/subscribe is the 2025-11-25 era's, which is served
	if err := c.Subscribe(ctx, mcp.SubscribeRequest{Params: mcp.SubscribeParams{URI: uri}}); err != nil {
		t.Fatalf("subscribe %s: %v", uri, err)
	}
	return w
}

func (w *resourceWatcher) count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.updates
}

// storeURL is the --store URL of c under prefix.
func storeURL(t *testing.T, c *etcdtest.Cluster, prefix string) string {
	t.Helper()
	var hosts []string
	for _, ep := range c.Endpoints() {
		u, err := url.Parse(ep)
		if err != nil {
			t.Fatal(err)
		}
		hosts = append(hosts, u.Host)
	}
	return "etcd://" + strings.Join(hosts, ",") + prefix
}

// serveHost starts `devgraph serve --store` as host name with its own fixture rig, serving
// HTTP; it returns the child, its base URL, and the environment and --db flag a CLI
// command on that host uses.
func serveHost(t *testing.T, store, name string, extra ...string) (*child, string, []string, []string) {
	t.Helper()
	env := append(procEnv(t), "DEVGRAPH_MACHINE_ID=machine-"+name)
	db := []string{"--db", filepath.Join(t.TempDir(), name+".db")}
	args := append(append([]string{"--store", store, "--host-name", name, "--http", "127.0.0.1:0"}, db...), newTestRig(t).flags()...)
	srv := startServe(t, env, append(args, extra...)...)
	line := srv.waitLine("MCP: ")
	return srv, strings.TrimSuffix(strings.TrimPrefix(line, "MCP: "), "/mcp"), env, db
}

// TestCluster_RobotsAcrossHosts: two `devgraph serve --store` front ends on a real
// 3-member etcd cluster; host a drives a simulated robot, and an agent on host b (a real
// MCP client over HTTP) drives it as it would a local one: the same answers and errors as
// host a gives, navigate with progress, cancel, arm and disarm, robot_stop mid-drive; when
// host a is killed mid-navigation b's call ends with a clear error, not a hang. b's
// events on a's robot carry b's agent as their actor ("mcp:agent-on-b@b") and its why; an
// MCP client on b subscribed to a's robot hears it move when a drives it, and reads its
// pose as it goes; host c, serving --read-only, refuses b's navigate as it refuses its own
// CLI's, and takes b's robot_stop.
func TestCluster_RobotsAcrossHosts(t *testing.T) {
	c := etcdtest.Start(t, 3)
	store := storeURL(t, c, "/robots")
	srvA, baseA, _, _ := serveHost(t, store, "a", "--sim-robot", "scout@1,1")
	_, baseB, envB, dbB := serveHost(t, store, "b")
	_, _, envC, dbC := serveHost(t, store, "c", "--read-only", "--sim-robot", "ranger@3,3")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	onA := newMCPAgent(t, ctx, baseA, "agent-on-a")
	onB := newMCPAgent(t, ctx, baseB, "agent-on-b")
	scout := map[string]any{"robot": "robot:scout"}

	st := onB.ok(ctx, "robot_status", scout)
	if robotField(st, "ref") != "robot:scout" || robotField(st, "state") != graph.RobotIdle {
		t.Fatalf("robot_status from b: %v", st)
	}

	// Refused the same way on both hosts, with the same advice.
	goal := map[string]any{"robot": "robot:scout", "x": 2.0, "y": 1.0}
	ra, _ := onA.call(ctx, "robot_navigate", goal, "")
	rb, _ := onB.call(ctx, "robot_navigate", goal, "")
	if !ra.IsError || !rb.IsError || resultText(ra) != resultText(rb) || !strings.Contains(resultText(rb), "robot_arm") {
		t.Fatalf("navigate an unarmed robot:\n on a: %s\n on b: %s", resultText(ra), resultText(rb))
	}

	if st := onB.ok(ctx, "robot_arm", scout); robotField(st, "armed") != true {
		t.Fatalf("robot_arm from b: %v", st)
	}
	res, err := onB.call(ctx, "robot_navigate", map[string]any{"robot": "robot:scout", "x": 2.0, "y": 1.0, "why": "fetch the sample"}, "to-goal")
	if err != nil || res.IsError {
		t.Fatalf("robot_navigate from b: %v %s", err, resultText(res))
	}
	if out := structuredOf(t, res); out["status"] != graph.NavArrived {
		t.Fatalf("robot_navigate from b: %v", out)
	}
	if onB.heard("to-goal") == 0 {
		t.Fatal("no progress notifications on b while host a drove the robot")
	}
	// Who asked, from where, and why: on every host's changelog.
	for _, on := range []*mcpAgent{onA, onB} {
		cl := on.ok(ctx, "graph_changelog", map[string]any{"action": "robot.navigate.end", "limit": 1, "bodies": true})
		evs, _ := cl["events"].([]any)
		ev, _ := evs[0].(map[string]any)
		if ev["actor"] != "mcp:agent-on-b@b" || ev["message"] != "fetch the sample" {
			t.Fatalf("the navigation's end event: %v; want actor mcp:agent-on-b@b, message \"fetch the sample\"", ev)
		}
	}

	t.Run("Stream", func(t *testing.T) {
		// An agent on a drives the robot: a client on b subscribed to it hears it move,
		// and robot_status and GraphQL's Robot.pose on b follow it.
		uri := "devgraph://robot/robot:scout/state"
		watcher := watchResource(t, ctx, baseB, "watcher-on-b", uri)
		done := make(chan *mcp.CallToolResult, 1)
		go func() {
			res, _ := onA.call(ctx, "robot_navigate", map[string]any{"robot": "robot:scout", "x": 4.0, "y": 1.0}, "")
			done <- res
		}()
		poses, gqlPoses := map[string]bool{}, map[string]bool{}
		var res *mcp.CallToolResult
	drive:
		for {
			select {
			case res = <-done:
				break drive
			case <-time.After(100 * time.Millisecond):
			}
			if st := onB.ok(ctx, "robot_status", scout); robotField(st, "state") == graph.RobotNavigating {
				poses[fmt.Sprint(robotField(st, "pose"))] = true
			}
			code, body := postGraphQL(t, baseB+"/graphql", `{ robot(id: "robot:scout") { state pose { x y heading } } }`)
			data, _ := body["data"].(map[string]any)
			if r, _ := data["robot"].(map[string]any); code != 200 || r == nil {
				t.Fatalf("GraphQL robot on b: %d %v", code, body)
			} else if r["state"] == graph.RobotNavigating {
				gqlPoses[fmt.Sprint(r["pose"])] = true
			}
		}
		if res == nil || res.IsError || structuredOf(t, res)["status"] != graph.NavArrived {
			t.Fatalf("robot_navigate on a: %s", resultText(res))
		}
		heard := watcher.count()
		t.Logf("b's subscriber heard %d updates of %s; robot_status on b read %d poses on the move, GraphQL %d", heard, uri, len(poses), len(gqlPoses))
		if heard < 5 || len(poses) < 2 || len(gqlPoses) < 2 {
			t.Fatalf("while a drove its robot, b's subscriber heard %d updates, robot_status on b read %d poses and GraphQL %d; want it followed", heard, len(poses), len(gqlPoses))
		}
		// At rest as a has it, once a's last streamed state (sent at once on a change of
		// state) has reached b.
		waitUntil(t, "robot_status on b at rest at the goal", 5*time.Second, func() bool {
			st := onB.ok(ctx, "robot_status", scout)
			p, _ := robotField(st, "pose").(map[string]any)
			x, _ := p["x"].(float64)
			return robotField(st, "state") == graph.RobotIdle && x > 3.8
		})
	})

	t.Run("Cancel", func(t *testing.T) {
		cctx, stop := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() {
			_, err := onB.call(cctx, "robot_navigate", map[string]any{"robot": "robot:scout", "x": -8.0, "y": 8.0}, "to-cancel")
			done <- err
		}()
		waitUntil(t, "progress before the cancel", 30*time.Second, func() bool { return onB.heard("to-cancel") > 0 })
		stop()
		<-done
		waitUntil(t, "robot.navigate.end cancelled in b's changelog", 30*time.Second, func() bool {
			cl := onB.ok(ctx, "graph_changelog", map[string]any{"action": "robot.navigate.end", "limit": 1, "bodies": true})
			evs, _ := cl["events"].([]any)
			return len(evs) == 1 && strings.Contains(fmt.Sprint(evs[0]), graph.NavCancelled)
		})
		st := onA.ok(ctx, "robot_status", scout)
		if robotField(st, "state") == graph.RobotNavigating {
			t.Fatalf("still navigating after the cancel: %v", st)
		}
	})

	t.Run("StopMidDrive", func(t *testing.T) {
		done := make(chan *mcp.CallToolResult, 1)
		go func() {
			res, _ := onB.call(ctx, "robot_navigate", map[string]any{"robot": "robot:scout", "x": 8.0, "y": -8.0}, "to-stop")
			done <- res
		}()
		waitUntil(t, "progress before the stop", 30*time.Second, func() bool { return onB.heard("to-stop") > 0 })
		st := onB.ok(ctx, "robot_stop", scout)
		if robotField(st, "state") != graph.RobotStopped || robotField(st, "armed") != false {
			t.Fatalf("robot_stop from b: %v", st)
		}
		res := <-done
		if res == nil || res.IsError || structuredOf(t, res)["status"] != graph.NavDisarmed {
			t.Fatalf("the navigation robot_stop ended: %s", resultText(res))
		}
		onB.ok(ctx, "robot_arm", scout)
		if st := onB.ok(ctx, "robot_disarm", scout); robotField(st, "armed") != false {
			t.Fatalf("robot_disarm from b: %v", st)
		}
	})

	t.Run("CLI", func(t *testing.T) {
		// The CLI on host b, through b's socket, reaches a's robot too.
		if out := binOK(t, envB, append([]string{"robot", "status", "scout"}, dbB...)...); !strings.Contains(out, "robot:scout") {
			t.Fatalf("devgraph robot status scout on b:\n%s", out)
		}
	})

	t.Run("ReadOnlyHost", func(t *testing.T) {
		// c's own CLI is refused by c's socket; b's agent and b's CLI by c itself, with
		// the same words; robot_stop from b goes through.
		refused := "is read-only (--read-only): driving a robot is refused"
		nav := []string{"robot", "navigate", "ranger", "1", "1"}
		if _, errOut, code := runBin(t, envC, append(nav, dbC...)...); code == 0 || !strings.Contains(errOut, refused) {
			t.Fatalf("navigate on c itself: exit %d %s", code, errOut)
		}
		if _, errOut, code := runBin(t, envB, append(nav, dbB...)...); code == 0 || !strings.Contains(errOut, "host c, which drives robot:ranger, "+refused) {
			t.Fatalf("navigate c's robot from b's CLI: exit %d %s", code, errOut)
		}
		ranger := map[string]any{"robot": "robot:ranger"}
		for _, tool := range []string{"robot_arm", "robot_navigate"} {
			args := map[string]any{"robot": "robot:ranger", "x": 1.0, "y": 1.0}
			if tool == "robot_arm" {
				args = ranger
			}
			res, err := onB.call(ctx, tool, args, "")
			if err != nil || !res.IsError || !strings.Contains(resultText(res), "host c, which drives robot:ranger, is read-only (--read-only)") || !strings.Contains(resultText(res), "robot_stop") {
				t.Fatalf("%s on c's robot from b: %v %s", tool, err, resultText(res))
			}
		}
		if st := onB.ok(ctx, "robot_stop", ranger); robotField(st, "state") != graph.RobotStopped {
			t.Fatalf("robot_stop on c's robot from b: %v", st)
		}
	})

	t.Run("NothingLeftBehind", func(t *testing.T) {
		cli := c.Client(t)
		resp, err := cli.Get(ctx, "/robots/robot/", clientv3.WithPrefix(), clientv3.WithKeysOnly())
		if err != nil {
			t.Fatal(err)
		}
		var keys []string
		for _, kv := range resp.Kvs {
			if k := string(kv.Key); strings.Contains(k, "/cmd/") || strings.Contains(k, "/out/") {
				keys = append(keys, k)
			}
		}
		if len(keys) > 0 {
			t.Fatalf("command keys left after the commands: %v", keys)
		}
	})

	t.Run("DriverKilled", func(t *testing.T) {
		onB.ok(ctx, "robot_arm", scout)
		done := make(chan *mcp.CallToolResult, 1)
		go func() {
			res, _ := onB.call(ctx, "robot_navigate", map[string]any{"robot": "robot:scout", "x": -8.0, "y": -8.0}, "to-kill")
			done <- res
		}()
		waitUntil(t, "progress before the kill", 30*time.Second, func() bool { return onB.heard("to-kill") > 0 })
		onA.c.Close() // its session dies with host a
		srvA.cmd.Process.Kill()
		select {
		case res := <-done:
			if res == nil || !res.IsError || !strings.Contains(resultText(res), "host a, which drives robot:scout, went offline") {
				t.Fatalf("navigate when host a was killed: %s", resultText(res))
			}
		case <-time.After(60 * time.Second):
			t.Fatal("navigate on b hangs after host a was killed")
		}
	})
}

func waitUntil(t *testing.T, what string, limit time.Duration, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up after %s waiting for %s", limit, what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestCluster_RobotsStopOnLeaseLoss: a host cut off from the cluster past its lease (the
// only member paused) stops its robot by itself — the navigation a CLI asked for ends
// disarmed — and records the stop once the cluster is back.
func TestCluster_RobotsStopOnLeaseLoss(t *testing.T) {
	c := etcdtest.Start(t, 1)
	srv, _, env, db := serveHost(t, storeURL(t, c, "/lease"), "a", "--sim-robot", "scout@1,1")
	binOK(t, env, append([]string{"robot", "arm", "scout"}, db...)...)
	type run struct {
		out  string
		code int
	}
	done := make(chan run, 1)
	go func() {
		cmd := exec.Command(binary, append([]string{"robot", "navigate", "scout", "-8", "-8", "--timeout", "120s"}, db...)...)
		cmd.Env = env
		out, _ := cmd.CombinedOutput()
		done <- run{string(out), cmd.ProcessState.ExitCode()}
	}()
	waitUntil(t, "the robot moving", 30*time.Second, func() bool {
		out, _, _ := runBin(t, env, append([]string{"robot", "status", "scout"}, db...)...)
		return strings.Contains(out, "navigating")
	})
	c.Pause(0)
	resumed := false
	defer func() {
		if !resumed {
			c.Resume(0)
		}
	}()
	deadline := time.Now().Add(60 * time.Second)
	for !strings.Contains(srv.log(), "lease lost; robot stopped") {
		if time.Now().After(deadline) {
			t.Fatalf("host a did not stop its robot when its lease was lost:\n%s", srv.log())
		}
		time.Sleep(200 * time.Millisecond)
	}
	select {
	case r := <-done:
		if r.code != 1 || !strings.Contains(r.out, "did not arrive: disarmed") {
			t.Fatalf("the navigation when the lease was lost: exit %d\n%s", r.code, r.out)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the navigation did not end when the lease was lost")
	}
	c.Resume(0)
	resumed = true
	waitUntil(t, "the stop recorded once the cluster is back", 90*time.Second, func() bool {
		out, _, _ := runBin(t, env, append([]string{"changelog"}, db...)...)
		return strings.Contains(out, "host a lost its cluster lease")
	})
	binOK(t, env, append([]string{"changelog", "verify"}, db...)...)
}
