package cluster

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/devgraph/devgraph/graph"
)

// flakyRobots is a robot store the cluster can be cut off from.
type flakyRobots struct {
	mu    sync.Mutex
	down  bool
	fails int
	saved []string // action robot, in the order written
}

func (f *flakyRobots) FindRobotRecords(ctx context.Context) ([]*graph.RobotRecord, error) {
	return nil, nil
}

func (f *flakyRobots) SaveRobot(ctx context.Context, rec *graph.RobotRecord, action string, before, after any) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.down {
		f.fails++
		return graph.Errorf(graph.EUNAVAILABLE, "etcd did not answer")
	}
	f.saved = append(f.saved, action+" "+rec.Ref+" "+graph.ActorFrom(ctx))
	return nil
}

func (f *flakyRobots) set(down bool) {
	f.mu.Lock()
	f.down = down
	f.mu.Unlock()
}

func (f *flakyRobots) failures() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.fails
}

func (f *flakyRobots) written() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.saved...)
}

// TestRobotWriter_Outage: while the cluster does not answer, a stop is answered at once and
// kept, arming is refused, and once the cluster is back the kept events are written in
// order, with their callers' actors, before anything after them.
func TestRobotWriter_Outage(t *testing.T) {
	st := &flakyRobots{}
	w := newRobotWriter(st, quiet, func() bool { return false })
	ctx, cancel := context.WithCancel(context.Background())
	go w.run(ctx)
	defer func() { cancel(); <-w.done }()
	scout := &graph.RobotRecord{Ref: "robot:scout"}
	as := func(actor string) context.Context { return graph.WithActor(context.Background(), actor) }

	if err := w.SaveRobot(as("mcp:a"), scout, graph.ActRobotArm, nil, nil); err != nil {
		t.Fatalf("arm with the cluster up: %v", err)
	}
	st.set(true)
	w.degrade() // the lease is lost
	if err := w.SaveRobot(as("robot:scout"), scout, graph.ActRobotStop, nil, nil); err != nil {
		t.Fatalf("stop while cut off: %v; want it kept", err)
	}
	if err := w.SaveRobot(as("mcp:b"), scout, graph.ActRobotNavEnd, nil, nil); err != nil {
		t.Fatalf("navigation end while cut off: %v; want it kept", err)
	}
	if err := w.SaveRobot(as("mcp:b"), scout, graph.ActRobotArm, nil, nil); graph.ErrorCode(err) != graph.EUNAVAILABLE {
		t.Fatalf("arm while cut off: %v; want EUNAVAILABLE", err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for st.failures() < 2 { // the writer tries the stop again and again while the cluster is down
		if time.Now().After(deadline) {
			t.Fatal("the kept stop was not tried again")
		}
		time.Sleep(20 * time.Millisecond)
	}
	st.set(false)
	for len(st.written()) < 3 {
		if time.Now().After(deadline) {
			t.Fatalf("kept events not written after the cluster came back: %v", st.written())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := w.SaveRobot(as("mcp:b"), scout, graph.ActRobotArm, nil, nil); err != nil {
		t.Fatalf("arm after the cluster came back: %v", err)
	}
	want := []string{"robot.arm robot:scout mcp:a", "robot.stop robot:scout robot:scout", "robot.navigate.end robot:scout mcp:b", "robot.arm robot:scout mcp:b"}
	got := st.written()
	if len(got) != len(want) {
		t.Fatalf("written %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("written %v, want %v", got, want)
		}
	}
}
