package robot

import (
	"context"
	"strings"

	"github.com/devgraph/devgraph/graph"
)

// Robots lists every robot's state, sorted by name.
func (f *Fleet) Robots(ctx context.Context) ([]*graph.RobotState, error) {
	f.mu.RLock()
	members := f.sortedLocked()
	f.mu.RUnlock()
	out := make([]*graph.RobotState, len(members))
	for i, m := range members {
		st := m.b.Status()
		out[i] = &st
	}
	return out, nil
}

// Status is one robot's state.
func (f *Fleet) Status(ctx context.Context, ref string) (*graph.RobotState, error) {
	m, err := f.lookup(ref)
	if err != nil {
		return nil, err
	}
	st := m.b.Status()
	return &st, nil
}

// Stop is the emergency stop. It answers at once: it never waits for the store or for
// other commands; a failure to record it is logged, never returned.
func (f *Fleet) Stop(ctx context.Context, ref string) (*graph.RobotState, error) {
	m, err := f.lookup(ref)
	if err != nil {
		return nil, err
	}
	before := summarize(m.b.Status())
	st := m.b.Stop()
	if err := f.save(ctx, m, graph.ActRobotStop, before, summarize(st)); err != nil {
		f.log.Warn("robot: record stop", "robot", m.ref, "err", err)
	}
	return &st, nil
}

// Arm enables motion. Arming an armed robot changes nothing and records nothing.
func (f *Fleet) Arm(ctx context.Context, ref string) (*graph.RobotState, error) {
	m, err := f.lookup(ref)
	if err != nil {
		return nil, err
	}
	m.opMu.Lock()
	defer m.opMu.Unlock()
	before := summarize(m.b.Status())
	st, err := m.b.Arm()
	if err != nil || before.Armed {
		return &st, err
	}
	if err := f.save(ctx, m, graph.ActRobotArm, before, summarize(st)); err != nil {
		m.b.Disarm()
		return nil, err
	}
	return &st, nil
}

// Disarm cuts motor power; like Stop it never fails on the store. Disarming a disarmed
// robot records nothing.
func (f *Fleet) Disarm(ctx context.Context, ref string) (*graph.RobotState, error) {
	m, err := f.lookup(ref)
	if err != nil {
		return nil, err
	}
	before := summarize(m.b.Status())
	st := m.b.Disarm()
	if before.Armed {
		if err := f.save(ctx, m, graph.ActRobotDisarm, before, summarize(st)); err != nil {
			f.log.Warn("robot: record disarm", "robot", m.ref, "err", err)
		}
	}
	return &st, nil
}

// Detect lists the objects the robot sees.
func (f *Fleet) Detect(ctx context.Context, ref string) ([]graph.DetectedObject, error) {
	m, err := f.lookup(ref)
	if err != nil {
		return nil, err
	}
	return m.b.Detect()
}

// Grasp picks up an object within reach.
func (f *Fleet) Grasp(ctx context.Context, ref, objectID string) (*graph.RobotState, error) {
	m, err := f.lookup(ref)
	if err != nil {
		return nil, err
	}
	st, err := m.b.Grasp(strings.TrimSpace(objectID))
	if err != nil {
		return nil, err
	}
	return &st, nil
}

// Release drops the held object at the robot's position.
func (f *Fleet) Release(ctx context.Context, ref string) (*graph.RobotState, error) {
	m, err := f.lookup(ref)
	if err != nil {
		return nil, err
	}
	st, err := m.b.Release()
	if err != nil {
		return nil, err
	}
	return &st, nil
}

// SetParameters validates and applies u (all or nothing), persists the parameters and
// records a robot.parameters event. Setting what is already set records nothing.
func (f *Fleet) SetParameters(ctx context.Context, ref string, u graph.RobotParamsUpdate) (*graph.RobotState, error) {
	m, err := f.lookup(ref)
	if err != nil {
		return nil, err
	}
	m.opMu.Lock()
	defer m.opMu.Unlock()
	before := m.b.Parameters()
	st, err := m.b.SetParameters(u)
	if err != nil {
		return nil, err
	}
	if paramsEqual(before, st.Params) {
		return &st, nil
	}
	if err := f.save(ctx, m, graph.ActRobotParameters, before, st.Params); err != nil {
		if _, rerr := m.b.SetParameters(fullUpdate(before)); rerr != nil {
			f.log.Warn("robot: restore parameters", "robot", m.ref, "err", rerr)
		}
		return nil, err
	}
	return &st, nil
}
