package robot

import (
	"context"
	"strings"

	"github.com/devgraph/devgraph/graph"
)

// SimSerial is the robot_serial fingerprint of a simulated robot: SIM-<NAME>-0001.
func SimSerial(name string) string { return "SIM-" + strings.ToUpper(name) + "-0001" }

func deviceKey(serial string) string { return "robot:" + serial }

// Name is the source name under which robots appear in snapshots.
func (f *Fleet) Name() string { return "robot" }

// Scan reports every robot as a device: key robot:<serial>, ref robot:<name>, one
// robot_serial fingerprint.
func (f *Fleet) Scan(ctx context.Context) ([]*graph.ObservedDevice, error) {
	f.mu.RLock()
	members := f.sortedLocked()
	f.mu.RUnlock()
	out := make([]*graph.ObservedDevice, 0, len(members))
	for _, m := range members {
		attrs := map[string]string{"model": "devgraph differential-drive"}
		if m.sim != nil {
			attrs["model"] = "devgraph-sim differential-drive"
			attrs["sim"] = "true"
		}
		out = append(out, &graph.ObservedDevice{
			Key:          deviceKey(m.serial),
			Ref:          m.ref,
			Source:       "robot",
			Sources:      []string{"robot"},
			Name:         m.name,
			Fingerprints: []graph.Fingerprint{{Kind: graph.FPRobotSerial, Value: m.serial}},
			Attrs:        attrs,
		})
	}
	return out, nil
}
