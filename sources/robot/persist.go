package robot

import (
	"context"
	"fmt"

	"github.com/devgraph/devgraph/graph"
)

// summary is the part of a robot's state its changelog events carry.
type summary struct {
	State   string     `json:"state"`
	Armed   bool       `json:"armed"`
	Pose    graph.Pose `json:"pose"`
	Battery float64    `json:"battery"`
	Holding string     `json:"holding,omitempty"`
}

func summarize(st graph.RobotState) summary {
	return summary{State: st.State, Armed: st.Armed, Pose: st.Pose, Battery: st.Battery, Holding: st.Holding}
}

// save persists m's record and, with an action, one changelog event.
func (f *Fleet) save(ctx context.Context, m *member, action string, before, after any) error {
	if f.store == nil {
		return nil
	}
	st := m.b.Status()
	rec := &graph.RobotRecord{Ref: m.ref, Serial: m.serial, Name: m.name, Pose: st.Pose, Params: st.Params, Battery: st.Battery}
	if err := f.store.SaveRobot(ctx, rec, action, before, after); err != nil {
		return fmt.Errorf("save robot %s: %w", m.ref, err)
	}
	return nil
}

func (f *Fleet) saveQuiet(m *member, action string) {
	ctx := graph.WithActor(context.Background(), m.ref)
	if err := f.save(ctx, m, action, nil, nil); err != nil {
		f.log.Warn("robot: save", "robot", m.ref, "err", err)
	}
}
