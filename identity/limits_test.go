package identity_test

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/identity"
	"github.com/devgraph/devgraph/sources/robot"
	"github.com/devgraph/devgraph/store/storetest"
)

// untouchable is a fleet any call to which panics: a command refused by the service's
// checks never reaches it.
type untouchable struct{ graph.Fleet }

// TestService_Limits: the service checks what it hands on before anything is read, moved
// or written: 64 fingerprints per match, a robot command's message and goal.
func TestService_Limits(t *testing.T) {
	svc := identity.New(storetest.MustOpen(t), nil, untouchable{})
	ctx := graph.WithActor(context.Background(), "cli:test")
	t.Run("Match65", func(t *testing.T) {
		fps := make([]graph.Fingerprint, graph.MaxFingerprintsPerMatch+1)
		for i := range fps {
			fps[i] = graph.Fingerprint{Kind: graph.FPUSBSerial, Value: fmt.Sprintf("0582:01a9:SN%d", i)}
		}
		_, err := svc.Match(ctx, fps)
		if got, want := graph.ErrorMessage(err), "fingerprints has 65 fingerprints; the limit is 64 per match"; !strings.Contains(got, want) || graph.ErrorCode(err) != graph.ELIMIT {
			t.Fatalf("err=%q, want %q", got, want)
		}
		if _, err := svc.Match(ctx, fps[:64]); err != nil {
			t.Fatalf("64 fingerprints: %v", err)
		}
	})
	t.Run("RobotMessage", func(t *testing.T) {
		bad := graph.WithMessage(ctx, "\xff")
		for name, call := range map[string]func() error{
			"arm": func() error { _, err := svc.RobotArm(bad, "robot:scout"); return err },
			"parameters": func() error {
				_, err := svc.RobotSetParameters(bad, "robot:scout", graph.RobotParamsUpdate{})
				return err
			},
			"navigate": func() error {
				_, err := svc.RobotNavigate(bad, "robot:scout", graph.Goal{X: 1, Y: 1}, nil)
				return err
			},
		} {
			if err := call(); graph.ErrorField(err) != "message" {
				t.Errorf("%s: err=%v, want the message refused", name, err)
			}
		}
	})
	t.Run("RobotGoal", func(t *testing.T) {
		_, err := svc.RobotNavigate(ctx, "robot:scout", graph.Goal{X: math.NaN(), Y: 1}, nil)
		if got, want := graph.ErrorMessage(err), "x is not a finite number"; !strings.Contains(got, want) {
			t.Fatalf("err=%q, want %q", got, want)
		}
	})
}

// TestService_StopDespiteBadMessage: stopping is always allowed. A stop or disarm whose
// change message the changelog cannot take still stops the robot; the event is recorded
// without the message and the caller is told the message was refused.
func TestService_StopDespiteBadMessage(t *testing.T) {
	db := storetest.MustOpen(t)
	clk := robot.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	fleet, err := robot.NewFleet(robot.Options{Store: db, Now: clk.Now, Every: clk.Every})
	if err != nil {
		t.Fatal(err)
	}
	if err := fleet.AddSim("scout", 0, 0); err != nil {
		t.Fatal(err)
	}
	if err := fleet.Open(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fleet.Close() })
	svc := identity.New(db, nil, fleet)
	ctx := graph.WithActor(context.Background(), "cli:test")
	for name, call := range map[string]func(context.Context) (*graph.RobotState, error){
		"stop":   func(ctx context.Context) (*graph.RobotState, error) { return svc.RobotStop(ctx, "robot:scout") },
		"disarm": func(ctx context.Context) (*graph.RobotState, error) { return svc.RobotDisarm(ctx, "robot:scout") },
	} {
		for _, msg := range []string{"\xff", "a\x00b", strings.Repeat("x", graph.MaxMsgLen+1)} {
			if _, err := svc.RobotArm(ctx, "robot:scout"); err != nil {
				t.Fatal(err)
			}
			_, err := call(graph.WithMessage(ctx, msg))
			if graph.ErrorField(err) != "message" || !strings.Contains(graph.ErrorMessage(err), "all the same") {
				t.Errorf("%s with message %.10q: err=%v, want the message refused and the robot %s all the same", name, msg, err, name)
			}
			st, err := svc.Robot(ctx, "robot:scout")
			if err != nil {
				t.Fatal(err)
			}
			if st.Armed {
				t.Errorf("%s with message %.10q: the robot is still armed", name, msg)
			}
			evs, _, err := db.FindEvents(ctx, graph.EventFilter{Action: "robot.*", First: 1})
			if err != nil {
				t.Fatal(err)
			}
			if len(evs) != 1 || evs[0].Action == graph.ActRobotArm || evs[0].Message != "" {
				t.Errorf("%s with message %.10q: newest event %+v, want the %s recorded without the message", name, msg, evs, name)
			}
		}
	}
}
