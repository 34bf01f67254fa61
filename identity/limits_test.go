package identity_test

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/identity"
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
			"arm":  func() error { _, err := svc.RobotArm(bad, "robot:scout"); return err },
			"stop": func() error { _, err := svc.RobotStop(bad, "robot:scout"); return err },
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
